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
    /// A real line that prints a size in this unit.
    pub example: &'static str,
}

/// Every unit a size may be printed in; all binary (see above), whatever
/// the writer's spelling: R's `Gb`, Kubernetes' `Gi`, the JVM's `K`.
pub const UNITS: &[Unit] = &[
    Unit { suffix: "bytes", shift: 0, glued_only: false, example: "Out of memory while trying to allocate 5520758552 bytes." },
    Unit { suffix: "byte", shift: 0, glued_only: false, example: "[E] [defaultAllocator.cpp::allocate::19] Error code 1: cuda Runtime (out of memory)TE] Error code: 9: skipping tactic 0x0000000000000000 due to exception [tunablegraph.cpp:create:116] autotuning: user allocator error allocating 86114305024-byte buffer" },
    Unit { suffix: "B", shift: 0, glued_only: false, example: "jax._src.traceback_util.FilteredStackTrace: RuntimeError: Resource exhausted: Failed to allocate request for 55.97GiB (60096009848B) on device ordinal 0 " },
    Unit { suffix: "KiB", shift: 10, glued_only: false, example: "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacty of 23.69 GiB of which 3.09 GiB is free. Process 3019262 has 20.57 GiB memory in use. Of the allocated memory 20.13 GiB is allocated by PyTorch, and 755.50 KiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF" },
    Unit { suffix: "KB", shift: 10, glued_only: false, example: "java.lang.OutOfMemoryError: Failed to allocate a 144 byte allocation with 520960 free bytes and 508KB until OOM, target footprint 268435456, growth limit 268435456; giving up on allocation because <1% of heap free after GC." },
    Unit { suffix: "K", shift: 10, glued_only: true, example: "    global           481.0K" },
    Unit { suffix: "MiB", shift: 20, glued_only: false, example: "Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB already allocated; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)" },
    Unit { suffix: "MB", shift: 20, glued_only: false, example: "Out of memory error on GPU 0. Cannot allocate 25.002197MB memory on GPU 0, available memory is only 15.187500MB." },
    Unit { suffix: "Mb", shift: 20, glued_only: false, example: "  Reached total allocation of 3969Mb: see help(memory.size)" },
    Unit { suffix: "M", shift: 20, glued_only: true, example: "Memory limit of 953M exceeded with 966M used. Consider increasing the memory limit, see https://cloud.google.com/run/docs/configuring/memory-limits" },
    Unit { suffix: "GiB", shift: 30, glued_only: false, example: "Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB already allocated; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)" },
    Unit { suffix: "GB", shift: 30, glued_only: false, example: "17/11/25 18:23:24 ERROR YarnClusterScheduler: Lost executor 9 on harrisburg.cs.colostate.edu: Container killed by YARN for exceeding memory limits. 7.2 GB of 4.2 GB virtual memory used. Consider boosting spark.yarn.executor.memoryOverhead." },
    Unit { suffix: "Gb", shift: 30, glued_only: false, example: "Error: cannot allocate vector of size 24.6 Gb" },
    Unit { suffix: "Gi", shift: 30, glued_only: true, example: "OOMKilled: config-db container was terminated for exceeding its memory limit of 4Gi" },
    Unit { suffix: "G", shift: 30, glued_only: true, example: "W1110 07:24:24.387306     892 op_kernel.cc:1639] Resource exhausted: Compilation failure: Ran out of memory in memory space hbm. Used 18.56G of 16.00G hbm. Exceeded hbm capacity by 2.56G." },
    Unit { suffix: "TiB", shift: 40, glued_only: false, example: "" },
    Unit { suffix: "TB", shift: 40, glued_only: false, example: "" },
    Unit { suffix: "T", shift: 40, glued_only: true, example: "" },
    Unit { suffix: "PiB", shift: 50, glued_only: false, example: "" },
    Unit { suffix: "PB", shift: 50, glued_only: false, example: "" },
    Unit { suffix: "P", shift: 50, glued_only: true, example: "" },
    Unit { suffix: "EiB", shift: 60, glued_only: false, example: "" },
    Unit { suffix: "EB", shift: 60, glued_only: false, example: "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory" },
    Unit { suffix: "E", shift: 60, glued_only: true, example: "" },
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
