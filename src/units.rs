//! Byte sizes and growth limits as users type them on the command line, and
//! sizes and times as xmem prints them.
//!
//! Sizes are binary throughout, as the design asks: `64M`, `64MB` and `64MiB`
//! all mean 64 × 2^20 bytes, because GPU and TPU memory is sized in powers of two
//! and users copy these numbers from logs that print `G` for GiB.

use std::fmt;
use std::str::FromStr;

/// Formats a byte count with binary units, e.g. `184.6 MiB`.
pub fn human_bytes(bytes: u64) -> String {
    bytesize::ByteSize(bytes).display().iec().to_string()
}

/// Formats a byte count with binary units and two decimals (`21.95 GiB`), the
/// precision XLA, libtpu and PyTorch print in their OOM messages, so a figure
/// from a log reads the same in xmem's report. Negative counts (a shortfall) keep their sign.
pub fn human_bytes_precise(bytes: impl Into<i128>) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let bytes = bytes.into();
    let sign = if bytes < 0 { "-" } else { "" };
    let magnitude = bytes.unsigned_abs();
    if magnitude < 1024 {
        return format!("{sign}{magnitude} B");
    }
    let mut value = magnitude as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{sign}{value:.2} {}", UNITS[unit])
}

/// Like [`human_bytes`] for signed deltas, with an explicit sign.
pub fn human_delta(bytes: i64) -> String {
    let sign = if bytes < 0 { "-" } else { "+" };
    format!("{sign}{}", human_bytes(bytes.unsigned_abs()))
}

/// Picoseconds as milliseconds, the unit XProf's memory timeline uses: `541.768 ms`.
pub fn milliseconds(ps: i64) -> String {
    format!("{:.3} ms", ps as f64 / 1e9)
}

/// Parses `1024`, `64K`, `64MB`, `1.5GiB`, `15 G` as binary sizes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let unit = unit.trim();
    if number.is_empty() {
        return Err(format!("'{text}' is not a size (examples: 4096, 64MiB, 1.5G)"));
    }
    let normalised = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => return number.parse::<u64>().map_err(|_| format!("'{text}' is not a whole number of bytes")),
        "K" | "KB" | "KIB" => "KiB",
        "M" | "MB" | "MIB" => "MiB",
        "G" | "GB" | "GIB" => "GiB",
        "T" | "TB" | "TIB" => "TiB",
        _ => return Err(format!("'{text}': unknown unit '{unit}' (use B, KiB, MiB, GiB or TiB)")),
    };
    bytesize::ByteSize::from_str(&format!("{number} {normalised}"))
        .map(|size| size.as_u64())
        .map_err(|e| format!("'{text}' is not a size: {e}"))
}

/// `10%` as 0.1: a share between 0% and 100%.
pub fn parse_percentage(text: &str) -> Result<f64, String> {
    match text.parse::<Growth>() {
        Ok(Growth::Ratio(share)) if share <= 1.0 => Ok(share),
        _ => Err(format!("'{text}' is not a percentage between 0% and 100% (example: 10%)")),
    }
}

/// How much a peak may grow before a `diff` limit is crossed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Growth {
    /// Relative growth, as a fraction (`5%` is 0.05).
    Ratio(f64),
    Bytes(u64),
}

impl FromStr for Growth {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().strip_suffix('%') {
            Some(percent) => percent
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && *p >= 0.0)
                .map(|p| Growth::Ratio(p / 100.0))
                .ok_or_else(|| format!("'{text}' is not a percentage (example: 5%)")),
            // `5` would silently mean 5 bytes where 5% was meant.
            None if text.trim().chars().all(|c| c.is_ascii_digit() || c == '.') => Err(format!(
                "'{text}' needs a unit: '{0}%' for a percentage, or a size such as '{0}MiB' ('{0}B' for bytes)",
                text.trim()
            )),
            None => parse_size(text).map(Growth::Bytes),
        }
    }
}

impl fmt::Display for Growth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Growth::Ratio(r) => {
                // `106.8%` parses to 1.068, which prints back as 106.80000000000001.
                let percent = format!("{:.4}", r * 100.0);
                write!(f, "{}%", percent.trim_end_matches('0').trim_end_matches('.'))
            }
            Growth::Bytes(b) => f.write_str(&human_bytes(*b)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_whatever_the_spelling() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("64MB"), Ok(64 << 20));
        assert_eq!(parse_size("64m"), Ok(64 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("15 GiB"), Ok(15 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5 parsecs").is_err());
    }

    #[test]
    fn growth_reads_percent_or_size() {
        assert_eq!("5%".parse::<Growth>(), Ok(Growth::Ratio(0.05)));
        assert_eq!("64MiB".parse::<Growth>(), Ok(Growth::Bytes(64 << 20)));
        assert!("-3%".parse::<Growth>().is_err());
        // A bare number is refused rather than read as bytes.
        assert!("5".parse::<Growth>().unwrap_err().contains("'5%'"));
        assert_eq!("5B".parse::<Growth>(), Ok(Growth::Bytes(5)));
    }

    #[test]
    fn growth_prints_as_typed() {
        for typed in ["106.8%", "5%", "0%", "100%", "0.25%"] {
            assert_eq!(typed.parse::<Growth>().map(|g| g.to_string()), Ok(typed.to_string()));
        }
        assert_eq!(Growth::Bytes(64 << 20).to_string(), "64.0 MiB");
    }

    #[test]
    fn precise_sizes_read_as_the_log_printed_them() {
        assert_eq!(human_bytes_precise(23_568_633_037u64), "21.95 GiB");
        assert_eq!(human_bytes_precise(555_745_280u64), "530.00 MiB");
        assert_eq!(human_bytes_precise(1023u64), "1023 B");
        assert_eq!(human_bytes_precise(-2_738_041_651i64), "-2.55 GiB");
    }

    #[test]
    fn human_sizes_use_binary_units() {
        assert_eq!(human_bytes(193_603_840), "184.6 MiB");
        assert_eq!(human_delta(-1024), "-1.0 KiB");
    }
}
