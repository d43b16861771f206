//! One entry of an allocation list, as libtpu ("Largest program allocations")
//! and XLA GPU ("Peak buffers") print them: a size, then `Field: value` lines,
//! closed by a row of `=`.

use super::event::{Allocation, OomEvent};
use super::size::{self, SIZE};

/// The fields that end an entry, which only an allocation list prints: a
/// list the log holds from the middle of an entry on starts with one.
pub(super) fn is_entry_tail(text: &str) -> bool {
    regex!(r"^(?:XLA [Ll]abel: |Allocation type: |Extra memory due to padding: )").is_match(text)
}

/// An `Operator:` line longer than this is not joined further (a runaway quote).
const MAX_OPERATOR_CHARS: usize = 64 << 10;

/// The allocation list being read: at most one entry is open at a time.
#[derive(Default)]
pub(super) struct Listing {
    entry: Option<Entry>,
}

impl Listing {
    /// An entry is open and not yet closed by its row of `=`.
    pub fn is_open(&self) -> bool {
        self.entry.as_ref().is_some_and(|entry| !entry.closed)
    }

    /// Feeds `text` to the open entry; false if none is open or it is not one of its fields.
    pub fn field(&mut self, text: &str) -> bool {
        self.entry.as_mut().is_some_and(|entry| !entry.closed && entry.field(text))
    }

    /// Ends the open entry, if any, and opens a new one.
    pub fn start(&mut self, event: &mut OomEvent, size_bytes: Option<i64>) {
        self.finish(event);
        self.entry = Some(Entry::new(size_bytes));
    }

    /// Adds the open entry to the event, with whatever it got (an entry the log cut keeps its fields).
    pub fn finish(&mut self, event: &mut OomEvent) {
        if let Some(mut entry) = self.entry.take() {
            if let Some(operator) = entry.operator.take() {
                entry.set_operator(&operator);
            }
            event.push_allocation(entry.allocation);
        }
    }
}

/// The entry being read.
struct Entry {
    allocation: Allocation,
    /// An `Operator:` value whose quotes do not close yet: a terminal wrapped it mid-token.
    operator: Option<String>,
    /// Ended by its row of `=`.
    closed: bool,
}

impl Entry {
    fn new(size_bytes: Option<i64>) -> Entry {
        Entry {
            allocation: Allocation { size_bytes: size::unsigned(size_bytes), count: 1, ..Allocation::default() },
            operator: None,
            closed: false,
        }
    }

    /// Reads `text` if it is a line of this entry; false if it is not.
    fn field(&mut self, text: &str) -> bool {
        if let Some(operator) = &mut self.operator {
            operator.push_str(text);
            if operator.matches('"').count() % 2 == 0 || operator.len() > MAX_OPERATOR_CHARS {
                let operator = std::mem::take(operator);
                self.operator = None;
                self.set_operator(&operator);
            }
            return true;
        }
        let text = text.trim();
        let a = &mut self.allocation;
        if let Some(value) = text.strip_prefix("Operator:") {
            let value = value.trim_start();
            if value.matches('"').count() % 2 == 1 {
                self.operator = Some(value.to_string());
            } else {
                self.set_operator(value);
            }
        } else if let Some(found) = regex!(&format!(r"^Size: ({SIZE})$")).captures(text) {
            if a.size_bytes.is_some() {
                return false;
            }
            a.size_bytes = size::unsigned(size::parse(&found[1]));
        } else if let Some(value) = text.strip_prefix("Shape:") {
            a.shape = Some(value.trim().to_string());
        } else if let Some(value) = text.strip_prefix("Entry Parameter Subshape:") {
            a.shape = Some(value.trim().to_string());
            a.allocation_type = Some("entry parameter".to_string());
        } else if let Some(found) = regex!(&format!(r"^Unpadded size: ({SIZE})")).captures(text) {
            a.unpadded_bytes = size::unsigned(size::parse(&found[1]));
        } else if let Some(found) =
            regex!(&format!(r"^Extra memory due to padding: ({SIZE}) \(([\d.]+)x expansion\)")).captures(text)
        {
            a.padding_bytes = size::unsigned(size::parse(&found[1]));
            a.expansion = found[2].parse().ok();
        } else if let Some(value) = text.strip_prefix("XLA label:").or_else(|| text.strip_prefix("XLA Label:")) {
            let label = value.trim();
            a.xla_label = Some(label.to_string());
            if let Some((name, _)) = label.split_once(" = ") {
                a.instruction = Some(name.to_string());
            }
        } else if let Some(value) = text.strip_prefix("Allocation type:") {
            a.allocation_type = Some(value.trim().to_string());
        } else if regex!(r"^={5,}$").is_match(text) {
            self.closed = true;
        } else {
            // Fields this parser does not know yet still belong to the entry.
            return regex!(r"^[A-Z][A-Za-z ]*: ").is_match(text);
        }
        true
    }

    /// `op_type="…" op_name="…" source_file="…" source_line=N deduplicated_name="…"`.
    fn set_operator(&mut self, value: &str) {
        let a = &mut self.allocation;
        let quoted = |key: &str| {
            // The last value may have no closing quote: the log was cut inside it.
            regex!(r#"(\w+)="([^"]*)(?:"|$)"#).captures_iter(value).find(|c| &c[1] == key).map(|c| c[2].to_string())
        };
        a.op_type = quoted("op_type");
        a.op_name = quoted("op_name");
        if let Some(name) = quoted("deduplicated_name") {
            a.instruction = Some(name);
        }
        let line = regex!(r"source_line=(\d+)").captures(value).map(|c| c[1].to_string());
        a.source = match (quoted("source_file"), line) {
            (Some(file), Some(line)) => Some(format!("{file}:{line}")),
            (Some(file), None) => Some(file),
            (None, _) => None,
        };
    }
}
