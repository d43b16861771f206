//! Sizes as OOM messages print them, to bytes.
//!
//! Every unit is binary, whoever printed it: libtpu's `49.34G` and `4.0K`,
//! TSL's `3.24GiB` and `24.6KiB`, PyTorch's `2.26 GiB` and `1024 bytes` all
//! count powers of 1024. A printed size is rounded to the nearest byte:
//! `21.95G` is 21.95 × 2^30 = 23568633036.8, so 23568633037 bytes. The
//! arithmetic is done on the decimal digits, not on a float, so the result does
//! not depend on how 21.95 rounds in binary. When a message also gives the exact
//! count (`(9029127168 bytes)`, `(165425291480B)`), that count wins.

/// A size as any of the OOM writers print it: a number and a binary unit
/// (`49.34G`, `3.24GiB`, `2.26 GiB`, `16B`, `1024 bytes`).
pub const SIZE: &str = r"-?\d+(?:\.\d+)?(?:[KMGTPE]iB|[KMGTPE]B?|B| (?:[KMGTPE]iB|bytes))";

/// Bytes in a size as printed, or `None` if `text` is not one.
pub fn parse(text: &str) -> Option<i64> {
    let text = text.trim();
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let shift = match unit.trim() {
        "" | "B" | "bytes" => 0,
        "K" | "KB" | "KiB" => 10,
        "M" | "MB" | "MiB" => 20,
        "G" | "GB" | "GiB" => 30,
        "T" | "TB" | "TiB" => 40,
        "P" | "PB" | "PiB" => 50,
        "E" | "EB" | "EiB" => 60,
        _ => return None,
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || fraction.len() > 18 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits: u128 = format!("{whole}{fraction}").parse().ok()?;
    let scale = 10u128.pow(u32::try_from(fraction.len()).ok()?);
    let bytes = digits.checked_mul(1u128 << shift)?.checked_add(scale / 2)? / scale;
    let bytes = i64::try_from(bytes).ok()?;
    Some(if negative { -bytes } else { bytes })
}

/// Bytes in an exact count as messages print it next to a rounded size:
/// `9029127168`, `165425291480B`, `554,696,704`.
pub fn parse_exact(text: &str) -> Option<i64> {
    let digits: String = text.trim().trim_end_matches('B').chars().filter(|&c| c != ',').collect();
    digits.parse().ok()
}

/// A non-negative size for the event's headline fields.
pub fn unsigned(bytes: Option<i64>) -> Option<u64> {
    bytes.and_then(|b| u64::try_from(b).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_sizes_round_to_the_nearest_byte() {
        assert_eq!(parse("21.95G"), Some(23_568_633_037));
        assert_eq!(parse("15.48G"), Some(16_621_523_436));
        assert_eq!(parse("530.00M"), Some(530 << 20));
        assert_eq!(parse("4.0K"), Some(4096));
        assert_eq!(parse("0B"), Some(0));
        assert_eq!(parse("-2.55G"), Some(-2_738_041_651));
    }

    #[test]
    fn every_writer_means_binary_units() {
        assert_eq!(parse("3.24GiB"), parse("3.24G"));
        assert_eq!(parse("2.26 GiB"), parse("2.26G"));
        assert_eq!(parse("24.6KiB"), Some(25_190));
        assert_eq!(parse("1024 bytes"), Some(1024));
        assert_eq!(parse("16B"), Some(16));
    }

    #[test]
    fn exact_counts_drop_separators() {
        assert_eq!(parse_exact("165425291480B"), Some(165_425_291_480));
        assert_eq!(parse_exact("   554,696,704"), Some(554_696_704));
        assert_eq!(parse_exact("-2,735,391,744"), Some(-2_735_391_744));
    }

    #[test]
    fn not_sizes() {
        assert_eq!(parse("unknown size"), None);
        assert_eq!(parse("12.5parsecs"), None);
        assert_eq!(parse("."), None);
        assert_eq!(parse("99999999999999999999999E"), None);
    }
}
