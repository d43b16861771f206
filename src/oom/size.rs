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

/// A unit as logs print it after a number.
pub struct Unit {
    pub suffix: &'static str,
    /// Bytes are 2^shift of the unit.
    pub shift: u32,
    /// Only right after the digits (`21.95G`, `953M`): with a space between,
    /// a lone letter is more often a word than a unit.
    pub glued_only: bool,
}

/// Every unit a size may be printed in; all binary (see above), whatever
/// the writer's spelling: R's `Gb`, Kubernetes' `Gi`, the JVM's `K`.
pub const UNITS: &[Unit] = &[
    Unit { suffix: "bytes", shift: 0, glued_only: false },
    Unit { suffix: "byte", shift: 0, glued_only: false },
    // (Capitalised, as German prints it, and English titles: GRASS' `G_malloc: Kann nicht
    // 2272853112 Byte … reservieren`, TiDB's `mem_max="38177 Bytes (37.3 KB)"`.)
    Unit { suffix: "Byte", shift: 0, glued_only: false },
    Unit { suffix: "Bytes", shift: 0, glued_only: false },
    // (Netty's `failed to allocated 866 byte(s) of direct memory`.)
    Unit { suffix: "byte(s)", shift: 0, glued_only: false },
    Unit { suffix: "B", shift: 0, glued_only: false },
    // The IEC names spelled out (`memory allocation of 8 Gibibyte failed`).
    Unit { suffix: "Kibibyte", shift: 10, glued_only: false },
    Unit { suffix: "Kibibytes", shift: 10, glued_only: false },
    Unit { suffix: "Mebibyte", shift: 20, glued_only: false },
    Unit { suffix: "Mebibytes", shift: 20, glued_only: false },
    Unit { suffix: "Gibibyte", shift: 30, glued_only: false },
    Unit { suffix: "Gibibytes", shift: 30, glued_only: false },
    Unit { suffix: "Tebibyte", shift: 40, glued_only: false },
    Unit { suffix: "Tebibytes", shift: 40, glued_only: false },
    // (Spelled out, binary as the rest: HTCondor's `memory limit of 16384 megabytes`.)
    Unit { suffix: "kilobyte", shift: 10, glued_only: false },
    Unit { suffix: "kilobytes", shift: 10, glued_only: false },
    Unit { suffix: "megabyte", shift: 20, glued_only: false },
    Unit { suffix: "megabytes", shift: 20, glued_only: false },
    Unit { suffix: "gigabyte", shift: 30, glued_only: false },
    Unit { suffix: "gigabytes", shift: 30, glued_only: false },
    Unit { suffix: "terabyte", shift: 40, glued_only: false },
    Unit { suffix: "terabytes", shift: 40, glued_only: false },
    Unit { suffix: "KiB", shift: 10, glued_only: false },
    // (A message lowercased whole by a person: `tried to allocate 30.00 mib (gpu 0; 8.00 gib total capacity; …`.)
    Unit { suffix: "kib", shift: 10, glued_only: false },
    Unit { suffix: "mib", shift: 20, glued_only: false },
    Unit { suffix: "gib", shift: 30, glued_only: false },
    Unit { suffix: "tib", shift: 40, glued_only: false },
    // (Retyped by a person: `Tried to allocate 128.00MiB(GPU 0; 10.76 Gib total capacity; …;
    // 156.00 Mib free;`.)
    Unit { suffix: "Mib", shift: 20, glued_only: false },
    Unit { suffix: "Gib", shift: 30, glued_only: false },
    // (The IEC units in French, as CImg prints them: `Failed to allocate memory (1.2 Gio)`.)
    Unit { suffix: "Kio", shift: 10, glued_only: false },
    Unit { suffix: "Mio", shift: 20, glued_only: false },
    Unit { suffix: "Gio", shift: 30, glued_only: false },
    Unit { suffix: "Tio", shift: 40, glued_only: false },
    Unit { suffix: "KB", shift: 10, glued_only: false },
    Unit { suffix: "kB", shift: 10, glued_only: false },
    Unit { suffix: "kb", shift: 10, glued_only: false },
    // (Unreal's `Failed to allocate Device Memory, Requested=262144.00Kb`.)
    Unit { suffix: "Kb", shift: 10, glued_only: false },
    Unit { suffix: "Ki", shift: 10, glued_only: true },
    Unit { suffix: "K", shift: 10, glued_only: true },
    Unit { suffix: "MiB", shift: 20, glued_only: false },
    Unit { suffix: "MB", shift: 20, glued_only: false },
    Unit { suffix: "Mb", shift: 20, glued_only: false },
    // (Lowercased by a program or a person: `Failed to acquire gpu memory (157mb)`, `tries to allocate 256gb`.)
    Unit { suffix: "mb", shift: 20, glued_only: false },
    Unit { suffix: "Mi", shift: 20, glued_only: true },
    Unit { suffix: "M", shift: 20, glued_only: true },
    Unit { suffix: "GiB", shift: 30, glued_only: false },
    Unit { suffix: "GB", shift: 30, glued_only: false },
    Unit { suffix: "Gb", shift: 30, glued_only: false },
    Unit { suffix: "gb", shift: 30, glued_only: false },
    Unit { suffix: "Gi", shift: 30, glued_only: true },
    Unit { suffix: "G", shift: 30, glued_only: true },
    Unit { suffix: "TiB", shift: 40, glued_only: false },
    Unit { suffix: "TB", shift: 40, glued_only: false },
    Unit { suffix: "T", shift: 40, glued_only: true },
    Unit { suffix: "PiB", shift: 50, glued_only: false },
    Unit { suffix: "PB", shift: 50, glued_only: false },
    Unit { suffix: "P", shift: 50, glued_only: true },
    Unit { suffix: "EiB", shift: 60, glued_only: false },
    Unit { suffix: "EB", shift: 60, glued_only: false },
    Unit { suffix: "E", shift: 60, glued_only: true },
];

/// The shift of a unit as printed (`""` is bytes), or `None` if it is not one.
fn shift_of(unit: &str) -> Option<u32> {
    if unit.is_empty() {
        return Some(0);
    }
    UNITS.iter().find(|u| u.suffix == unit).map(|u| u.shift)
}

/// Bytes in `number` (decimal digits, with an optional fraction) times 2^`shift`,
/// rounded to the nearest byte.
pub fn scaled(number: &str, shift: u32) -> Option<u128> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || fraction.len() > 18 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits: u128 = format!("{whole}{fraction}").parse().ok()?;
    let scale = 10u128.pow(u32::try_from(fraction.len()).ok()?);
    digits.checked_mul(1u128.checked_shl(shift)?)?.checked_add(scale / 2).map(|bytes| bytes / scale)
}

/// Bytes in a size as printed, or `None` if `text` is not one.
pub fn parse(text: &str) -> Option<i64> {
    let text = text.trim();
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let bytes = i64::try_from(scaled(number, shift_of(unit.trim())?)?).ok()?;
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
