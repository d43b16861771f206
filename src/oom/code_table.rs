//! A table of error codes, as documentation or a test prints it: each entry
//! a code alone on its line (`CUDA_ERROR_OUT_OF_MEMORY`), then its short
//! name (`out of memory`) and its description (`The API call failed because
//! it was unable to allocate enough memory …`), entries apart by blank lines.
//! A memory code's entry there names the failure; nothing failed.
//!
//! A run prints a code with its message on one line (`CUDADriverError:
//! CUDA_ERROR_OUT_OF_MEMORY: out of memory`); a code alone on a line, a few
//! lines after another code of the same family alone on its line, is an
//! entry of a table.

/// How many lines after one code alone on its line the next still belongs to the same table.
const ENTRY_REACH: u64 = 12;

/// The state of a log read line by line.
#[derive(Default)]
pub(super) struct CodeTable {
    /// The last code alone on its line: its line number and its family (`CUDA_ERROR`).
    last_code: Option<(u64, String)>,
    /// The line is in a table's entry, up to the next blank line.
    in_entry: bool,
}

impl CodeTable {
    /// Reads the next raw line; true if it is part of a table's entry.
    pub fn observe(&mut self, number: u64, raw: &[u8]) -> bool {
        let trimmed = raw.trim_ascii();
        if trimmed.is_empty() {
            self.in_entry = false;
            return false;
        }
        let maybe_code = trimmed.len() < 80 && trimmed[0].is_ascii_uppercase() && trimmed.contains(&b'_');
        let family = maybe_code
            .then(|| regex!(bytes r"^([A-Z][A-Z0-9]*_(?:ERROR|STATUS|RESULT|ERR))_[A-Z0-9_]+$").captures(trimmed))
            .flatten()
            .map(|found| String::from_utf8_lossy(&found[1]).into_owned());
        if let Some(family) = family {
            let same_table = self
                .last_code
                .as_ref()
                .is_some_and(|(at, last)| *last == family && number.saturating_sub(*at) <= ENTRY_REACH);
            self.in_entry |= same_table;
            self.last_code = Some((number, family));
        }
        self.in_entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_code_alone_opens_an_entry_up_to_the_blank_line() {
        let mut table = CodeTable::default();
        let lines: [&[u8]; 8] = [
            b"CUDA_ERROR_INVALID_VALUE",
            b"invalid argument",
            b"",
            b"CUDA_ERROR_OUT_OF_MEMORY",
            b"out of memory",
            b"",
            b"RuntimeError: CUDA error: out of memory",
            b"CUBLAS_STATUS_ALLOC_FAILED",
        ];
        let read: Vec<bool> = lines.iter().zip(1..).map(|(raw, n)| table.observe(n, raw)).collect();
        assert_eq!(read, [false, false, false, true, true, false, false, false]);
    }
}
