//! The memory report libtpu prints after a compile-time OOM or a failed
//! program reservation: usage totals, the program's requirement, and the
//! largest allocations. Its lines are optional and its indentation varies
//! across years of libtpu, so every line is recognised by its words alone.

use super::block::{Block, Feed};
use super::event::OomEvent;
use super::line::Line;
use super::listing::Listing;
use super::size;

/// libtpu's sizes: `49.34G`, `4.0K`, `0B`, negative when a balance is short.
pub(super) const TPU_SIZE: &str = r"-?\d+(?:\.\d+)?[KMGTPE]|-?\d+B";

/// Two blank lines in a row end the report (libtpu ends it with one, the
/// Python exception text adds another).
const BLANKS_THAT_END: u8 = 2;

#[derive(Default)]
pub(super) struct Report {
    section: Option<String>,
    listing: Listing,
    in_list: bool,
    blanks: u8,
    /// A line that ends in the first words of the message's figures (`… Scoped allocation
    /// with size`), wrapped before them: it is read again joined with the next.
    wrapped: Option<String>,
}

impl Block for Report {
    fn feed(&mut self, event: &mut OomEvent, line: &Line) -> Feed {
        let text = line.text.as_ref();
        if line.is_blank() {
            self.blanks += 1;
            return if self.blanks >= BLANKS_THAT_END { Feed::Ended } else { Feed::Consumed };
        }
        self.blanks = 0;
        let t = text.trim();
        if let Some(before) = self.wrapped.take() {
            if self.header_continuation(event, &format!("{before} {t}")) {
                return Feed::Consumed;
            }
        }
        if self.listing.field(text) {
            return Feed::Consumed;
        }
        if !self.listing.is_open() && super::listing::is_entry_tail(t) {
            // The rest of an entry whose size line the log does not hold.
            self.section = None;
            self.in_list = true;
            self.listing.start(event, None);
            self.listing.field(text);
            return Feed::Consumed;
        }
        if self.header_continuation(event, t) || self.heading(event, t) {
            return Feed::Consumed;
        }
        if let Some(found) = regex!(&format!(r"^(?:\d+\.\s+)?Size: ({TPU_SIZE})$")).captures(t) {
            self.section = None;
            self.in_list = true;
            self.listing.start(event, size::parse(&found[1]));
            return Feed::Consumed;
        }
        if let Some(section) = self.section.clone().filter(|_| !self.in_list) {
            if self.item(event, &section, t) {
                return Feed::Consumed;
            }
        }
        if regex!(r"(?:\bScoped allocation with(?: size)?|\bUsed|\bExceeded \w+ capacity(?: by)?)$").is_match(t) {
            self.wrapped = Some(t.to_string());
            return Feed::Consumed;
        }
        Feed::Ended
    }
    fn close(&mut self, event: &mut OomEvent) {
        self.listing.finish(event);
        // The list is largest first; an entry whose size the log does not hold goes last.
        event.allocations.sort_by_key(|a| a.size_bytes.is_none());
    }
}

impl Report {
    /// The parts of the first message that a wrap or a newer format puts on later lines.
    fn header_continuation(&mut self, event: &mut OomEvent, t: &str) -> bool {
        let mut matched = false;
        if let Some(found) = regex!(&format!(r"\bUsed ({TPU_SIZE}) of ({TPU_SIZE}) (\w+)")).captures(t) {
            event.used_bytes = event.used_bytes.or(size::unsigned(size::parse(&found[1])));
            event.capacity_bytes = event.capacity_bytes.or(size::unsigned(size::parse(&found[2])));
            matched = true;
        }
        if let Some(found) = regex!(&format!(r"\bExceeded (\w+) capacity by ({TPU_SIZE})")).captures(t) {
            event.exceeded_by_bytes = event.exceeded_by_bytes.or(size::unsigned(size::parse(&found[2])));
            matched = true;
        }
        if let Some(found) = regex!(&format!(
            r"Scoped allocation with size ({TPU_SIZE}) and limit ({TPU_SIZE}) exceeded scoped vmem limit(?: by ({TPU_SIZE}))?"
        ))
        .captures(t)
        {
            event.requested_bytes = event.requested_bytes.or(size::unsigned(size::parse(&found[1])));
            event.capacity_bytes = event.capacity_bytes.or(size::unsigned(size::parse(&found[2])));
            if let Some(by) = found.get(3) {
                event.exceeded_by_bytes = event.exceeded_by_bytes.or(size::unsigned(size::parse(by.as_str())));
            }
            matched = true;
        }
        if let Some(found) = regex!(r"openxla\.org/xla/errors(?:/error_(\d{4})|#e(\d{4}))").captures(t) {
            if event.error_code.is_none() {
                event.error_code = found.get(1).or_else(|| found.get(2)).map(|code| format!("E{}", code.as_str()));
            }
            matched = true;
        }
        // The reservation failure's own separators.
        matched || t.starts_with(';') || regex!(r"^-{4,}$").is_match(t)
    }

    /// Section headings: they open a group of figures, or the allocation list.
    fn heading(&mut self, event: &mut OomEvent, t: &str) -> bool {
        if let Some(found) = regex!(&format!(r"^Total (\w+) usage >= ({TPU_SIZE}):$")).captures(t) {
            self.open_section(event, &format!("Total {} usage", &found[1]), Some(&found[2]), Some("at least"));
            set_space(event, &found[1]);
        } else if let Some(found) = regex!(&format!(r"^Program (\w+) requirement ({TPU_SIZE}):$")).captures(t) {
            self.open_section(event, &format!("Program {} requirement", &found[1]), Some(&found[2]), None);
            set_space(event, &found[1]);
        } else if let Some(found) = regex!(&format!(r"^HBM capacity ({TPU_SIZE}):$")).captures(t) {
            self.open_section(event, "HBM capacity", Some(&found[1]), None);
            event.capacity_bytes = event.capacity_bytes.or(size::unsigned(size::parse(&found[1])));
            set_space(event, "hbm");
        } else if t == "Heap allocator status:" {
            self.open_section(event, "Heap allocator status", None, None);
        } else if t == "Persistent allocations include some or all of:" {
            self.open_section(event, "Persistent allocations", None, Some("some or all of"));
        } else if let Some(found) =
            regex!(&format!(r"^Output size ({TPU_SIZE}|unknown)(?:; shares ({TPU_SIZE}) with arguments)?\.?$"))
                .captures(t)
        {
            self.section = None;
            let output = size::parse(&found[1]);
            event.fact("Output", "size", output, output.is_none().then(|| "unknown".to_string()));
            if let Some(shared) = found.get(2) {
                event.fact("Output", "shared with arguments", size::parse(shared.as_str()), None);
            }
        } else if let Some(found) = regex!(r"^Largest program allocations in (\w+):$").captures(t) {
            self.listing.finish(event);
            self.section = None;
            self.in_list = true;
            set_space(event, &found[1]);
        } else {
            return false;
        }
        true
    }

    fn open_section(&mut self, event: &mut OomEvent, name: &str, bytes: Option<&str>, note: Option<&str>) {
        self.listing.finish(event);
        self.in_list = false;
        if let Some(section) = event.section(name) {
            section.bytes = bytes.and_then(size::parse);
            section.note = note.map(str::to_string);
        }
        self.section = Some(name.to_string());
    }

    /// A figure in a section: `reserved        530.00M`,
    /// `Top-of-Memory reserved:  529.00M (     554,696,704 bytes)`, `arguments       unknown size`.
    fn item(&mut self, event: &mut OomEvent, section: &str, t: &str) -> bool {
        let Some(found) = regex!(&format!(
            r"^([A-Za-z][A-Za-z0-9 /()_.-]*?):?\s+({TPU_SIZE}|unknown size)(?:\s*\(\s*(-?[\d,]+) bytes\))?\s*(.*)$"
        ))
        .captures(t) else {
            return false;
        };
        let name = &found[1];
        let exact = found.get(3).and_then(|exact| size::parse_exact(exact.as_str()));
        let bytes = exact.or_else(|| size::parse(&found[2]));
        let rest = found[4].trim();
        let note = if bytes.is_none() {
            Some(found[2].to_string())
        } else {
            let unwrapped = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')).unwrap_or(rest);
            (!unwrapped.is_empty()).then(|| unwrapped.to_string())
        };
        if section == "HBM capacity" && name == "Currently allocated" {
            event.used_bytes = event.used_bytes.or(size::unsigned(bytes));
        }
        // `(99.8% utilization: Unpadded (9.06G) Padded (9.08G), 0.1% fragmentation (1.0M))`:
        // each figure gets its own row.
        let details = regex!(&format!(
            r"^\(([\d.]+)% utilization(?:: Unpadded \(({TPU_SIZE})\) Padded \(({TPU_SIZE})\))?, ([\d.]+)% fragmentation \(({TPU_SIZE})\)\)$"
        ))
        .captures(rest)
        .filter(|_| name == "HLO temp");
        let Some(details) = details else {
            event.fact(section, name, bytes, note);
            return true;
        };
        event.fact(section, name, bytes, Some(format!("{}% utilization", &details[1])));
        if let (Some(unpadded), Some(padded)) = (details.get(2), details.get(3)) {
            event.fact(section, "HLO temp unpadded", size::parse(unpadded.as_str()), None);
            event.fact(section, "HLO temp padded", size::parse(padded.as_str()), None);
        }
        event.fact(section, "HLO temp fragmentation", size::parse(&details[5]), Some(format!("{}%", &details[4])));
        true
    }
}

fn set_space(event: &mut OomEvent, space: &str) {
    if event.memory_space.is_none() {
        event.memory_space = Some(space.to_lowercase());
    }
}
