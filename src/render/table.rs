//! The one layout every text and Markdown printer uses: tables, headings,
//! labelled facts, and the cells for bytes and percentages.
//!
//! In a terminal, lines fit its width ([`set_width`]): text columns wrap at
//! spaces and a word wider than its column is cut with `…` (JSON keeps every
//! value whole); numbers never wrap. Without a width (output piped or
//! written to a file) nothing wraps, as ripgrep and hyperfine do. No line
//! ends in a space. Layout is linear in the size of the text, so one cell of
//! a megabyte costs what a thousand short ones do.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use anstyle::{AnsiColor, Style};
use unicode_width::UnicodeWidthChar;

use crate::units::human_bytes;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Text,
    Markdown,
}

/// Columns of the terminal the text goes to; 0 when it goes to a pipe or
/// a file, where nothing wraps. A process writes to one place at a time.
static WIDTH: AtomicUsize = AtomicUsize::new(0);

/// The width text is laid out to, `None` for no limit.
pub fn set_width(width: Option<usize>) {
    WIDTH.store(width.unwrap_or(0), Ordering::Relaxed);
}

pub fn width() -> Option<usize> {
    Some(WIDTH.load(Ordering::Relaxed)).filter(|&w| w > 0)
}

pub const HEADING: Style = Style::new().bold();
pub const GROWTH: Style = AnsiColor::Red.on_default();
pub const SHRINK: Style = AnsiColor::Green.on_default();

/// Between two columns of a text table.
const GAP: &str = "  ";

/// Text and the style it is shown in on a terminal (none in Markdown).
#[derive(Debug, Clone, Default)]
pub struct Cell {
    text: String,
    style: Style,
}

impl Cell {
    pub fn styled(text: impl Into<String>, style: Style) -> Self {
        Cell { text: text.into(), style }
    }

    pub fn into_text(self) -> String {
        self.text
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Cell { text, style: Style::new() }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Cell::from(text.to_string())
    }
}

pub struct Table {
    flavor: Flavor,
    width: Option<usize>,
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
    /// Right-aligned columns hold numbers: they never wrap.
    right: Vec<bool>,
    /// Columns kept whole, as numbers are, though aligned left.
    whole: Vec<bool>,
    /// Columns that wrap no narrower than this, when the terminal allows.
    min_width: Vec<usize>,
}

/// A table laid out to the current [`width`].
pub fn table(flavor: Flavor, header: &[&str]) -> Table {
    Table {
        flavor,
        width: width(),
        header: header.iter().map(|h| h.to_string()).collect(),
        rows: Vec::new(),
        right: vec![false; header.len()],
        whole: vec![false; header.len()],
        min_width: vec![0; header.len()],
    }
}

/// Right-aligns the given columns (numbers read better that way).
pub fn align_right(table: &mut Table, columns: &[usize]) {
    for &c in columns {
        if let Some(right) = table.right.get_mut(c) {
            *right = true;
        }
    }
}

/// The column of module ids in the tables that list modules.
pub const ID_COLUMN: usize = 1;

/// Keeps a column whole, so a narrow terminal wraps the others: a TPU
/// program fingerprint has 20 digits.
pub fn unwrapped(table: &mut Table, column: usize) {
    if let Some(whole) = table.whole.get_mut(column) {
        *whole = true;
    }
}

impl Table {
    /// The same table laid out to `width` columns, or unbounded.
    pub fn with_width(mut self, width: Option<usize>) -> Self {
        self.width = width;
        self
    }

    /// Keeps `column` at least `width` wide when other columns can give way,
    /// so that long names wrap over few lines.
    pub fn set_min_width(&mut self, column: usize, width: usize) {
        if let Some(min) = self.min_width.get_mut(column) {
            *min = width;
        }
    }

    pub fn add_row<C: Into<Cell>>(&mut self, cells: impl IntoIterator<Item = C>) {
        let mut row: Vec<Cell> = cells.into_iter().map(Into::into).collect();
        // Every row has a cell per column; a renderer gives as many as the header.
        row.resize(self.header.len(), Cell::default());
        self.rows.push(row);
    }

    pub fn add_rows<C: Into<Cell>, R: IntoIterator<Item = C>>(&mut self, rows: impl IntoIterator<Item = R>) {
        for row in rows {
            self.add_row(row);
        }
    }

    fn columns(&self) -> usize {
        self.header.len()
    }

    /// Each column's width: what its widest line needs, unless the lines
    /// would not fit the terminal; then the headers of number columns wrap
    /// at spaces down to their widest number (`Temp at peak` over two
    /// lines), and the widest text columns give way, down to their longest
    /// header word; room left over goes back to the number columns' headers.
    fn column_widths(&self) -> Vec<usize> {
        let columns = self.columns();
        let mut natural = vec![0; columns];
        let mut header_word = vec![1; columns];
        for (c, text) in self.header.iter().enumerate() {
            natural[c] = text_width(text);
            header_word[c] = text.split(' ').map(text_width).max().unwrap_or(1).max(1);
        }
        let mut values = header_word.clone();
        for row in &self.rows {
            for (c, cell) in row.iter().enumerate() {
                let widest = cell.text.lines().map(text_width).max().unwrap_or(0);
                natural[c] = natural[c].max(widest);
                values[c] = values[c].max(widest);
            }
        }
        let Some(limit) = self.width else { return natural };
        let gaps = GAP.len() * columns.saturating_sub(1);
        if natural.iter().sum::<usize>() + gaps <= limit {
            return natural;
        }
        let wraps =
            |c: usize| !self.right.get(c).copied().unwrap_or(false) && !self.whole.get(c).copied().unwrap_or(false);
        let squeezed = |c: usize| values[c].min(natural[c]);
        let fixed: usize = (0..columns).filter(|&c| !wraps(c)).map(squeezed).sum();
        let room = limit.saturating_sub(gaps + fixed);
        let least: Vec<usize> = (0..columns)
            .map(|c| header_word[c].max(self.min_width.get(c).copied().unwrap_or(0)).min(natural[c]))
            .collect();
        let width_at = |level: usize, c: usize| natural[c].min(least[c].max(level));
        let used_at = |level: usize| (0..columns).filter(|&c| wraps(c)).map(|c| width_at(level, c)).sum::<usize>();
        // The highest level that fits: columns narrower than it keep their width.
        let (mut low, mut high) = (0, natural.iter().copied().max().unwrap_or(0));
        while low < high {
            let mid = (low + high).div_ceil(2);
            if used_at(mid) <= room {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        let mut widths: Vec<usize> =
            (0..columns).map(|c| if wraps(c) { width_at(low, c) } else { squeezed(c) }).collect();
        // What is left over goes to the columns held at the level, leftmost
        // first, then to the number columns' headers.
        let mut spare = room.saturating_sub(used_at(low));
        let held: Vec<usize> = (0..columns).filter(|&c| wraps(c) && widths[c] < natural[c]).collect();
        for c in held {
            if spare == 0 {
                break;
            }
            widths[c] += 1;
            spare -= 1;
        }
        for c in (0..columns).filter(|&c| !wraps(c)) {
            let grow = spare.min(natural[c] - widths[c]);
            widths[c] += grow;
            spare -= grow;
        }
        widths
    }

    fn fmt_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let widths = self.column_widths();
        let header: Vec<Cell> = self.header.iter().map(|h| Cell::styled(h.clone(), HEADING)).collect();
        let mut first = true;
        for row in std::iter::once(&header).chain(&self.rows) {
            let cells: Vec<Vec<String>> = row
                .iter()
                .enumerate()
                .map(|(c, cell)| cell.text.lines().flat_map(|line| wrap(line, widths[c])).collect())
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(0).max(1);
            for i in 0..height {
                if !first {
                    writeln!(f)?;
                }
                first = false;
                let mut line = String::new();
                for (c, lines) in cells.iter().enumerate() {
                    let text = lines.get(i).map(String::as_str).unwrap_or("");
                    if c > 0 {
                        line.push_str(GAP);
                    }
                    let pad = " ".repeat(widths[c].saturating_sub(text_width(text)));
                    if self.right[c] {
                        line.push_str(&pad);
                    }
                    push_styled(&mut line, text, row[c].style);
                    if !self.right[c] {
                        line.push_str(&pad);
                    }
                }
                f.write_str(line.trim_end_matches(' '))?;
            }
        }
        Ok(())
    }

    fn fmt_markdown(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let escape = |text: &str| text.replace('|', "\\|").replace('\n', " ");
        let header: Vec<String> = self.header.iter().map(|h| escape(h)).collect();
        let rows: Vec<Vec<String>> =
            self.rows.iter().map(|row| row.iter().map(|c| escape(&c.text)).collect()).collect();
        let mut widths: Vec<usize> = header.iter().map(|h| text_width(h)).collect();
        for row in &rows {
            for (c, cell) in row.iter().enumerate() {
                widths[c] = widths[c].max(text_width(cell));
            }
        }
        let line = |f: &mut fmt::Formatter<'_>, cells: &[String]| -> fmt::Result {
            for (c, cell) in cells.iter().enumerate() {
                let pad = " ".repeat(widths[c] - text_width(cell));
                if self.right[c] {
                    write!(f, "| {pad}{cell} ")?;
                } else {
                    write!(f, "| {cell}{pad} ")?;
                }
            }
            write!(f, "|")
        };
        line(f, &header)?;
        writeln!(f)?;
        for w in &widths {
            write!(f, "|{}", "-".repeat(w + 2))?;
        }
        write!(f, "|")?;
        for row in &rows {
            writeln!(f)?;
            line(f, row)?;
        }
        Ok(())
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.flavor {
            Flavor::Text => self.fmt_text(f),
            Flavor::Markdown => self.fmt_markdown(f),
        }
    }
}

fn push_styled(line: &mut String, text: &str, style: Style) {
    if text.is_empty() || style == Style::new() {
        line.push_str(text);
    } else {
        line.push_str(&format!("{}{text}{}", style.render(), style.render_reset()));
    }
}

/// `text` in the given style on a terminal, plain elsewhere (the output
/// stream removes the style when it is not a terminal).
pub fn styled(flavor: Flavor, text: &str, style: Style) -> String {
    let mut out = String::new();
    match flavor {
        Flavor::Text => push_styled(&mut out, text, style),
        Flavor::Markdown => out.push_str(text),
    }
    out
}

/// Columns `text` takes on a terminal; escape sequences (colours) take none.
pub fn text_width(text: &str) -> usize {
    let mut width = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            skip_escape(&mut chars);
        } else {
            width += c.width().unwrap_or(0);
        }
    }
    width
}

/// Skips the rest of a `CSI … m`-style escape sequence.
fn skip_escape(chars: &mut std::str::Chars<'_>) {
    if chars.next() == Some('[') {
        for c in chars.by_ref() {
            if ('@'..='~').contains(&c) {
                break;
            }
        }
    }
}

/// One line of text as lines at most `width` wide, broken at spaces; a word
/// wider than that is cut with `…`. Width 0 means no limit.
pub fn wrap(line: &str, width: usize) -> Vec<String> {
    if width == 0 || text_width(line) <= width {
        return vec![line.trim_end_matches(' ').to_string()];
    }
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut current_width = 0;
    for word in line.split(' ') {
        let word_width = text_width(word);
        if current_width > 0 && current_width + 1 + word_width <= width {
            current.push(' ');
            current.push_str(word);
            current_width += 1 + word_width;
            continue;
        }
        if word.is_empty() {
            // A run of spaces at a line break disappears.
            continue;
        }
        if current_width > 0 {
            lines.push(std::mem::take(&mut current));
        }
        if word_width <= width {
            current.push_str(word);
            current_width = word_width;
        } else {
            current = truncate(word, width);
            current_width = text_width(&current);
        }
    }
    if current_width > 0 || lines.is_empty() {
        lines.push(current);
    }
    lines
}

/// `text` cut to `width` columns, the last being `…`; escape sequences are
/// kept, so a colour is still reset.
pub fn truncate(text: &str, width: usize) -> String {
    let budget = width.saturating_sub(1);
    let mut out = String::with_capacity(width.min(text.len()) + 8);
    let mut used = 0;
    let mut cut = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            let rest = chars.as_str();
            skip_escape(&mut chars);
            out.push(c);
            out.push_str(&rest[..rest.len() - chars.as_str().len()]);
            continue;
        }
        let w = c.width().unwrap_or(0);
        if !cut && used + w <= budget {
            out.push(c);
            used += w;
        } else if !cut {
            out.push('…');
            cut = true;
        }
    }
    out
}

/// `1 module`, `2 modules`.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub fn bytes(n: i64) -> String {
    if n < 0 {
        format!("-{}", human_bytes(n.unsigned_abs()))
    } else {
        human_bytes(n as u64)
    }
}

/// A fraction as a percentage with one decimal: `0.0162` is `1.6%`.
pub fn percent(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
}

/// `+106.8%`, or `from 0 B` when the baseline was empty.
pub fn ratio_text(delta_ratio: Option<f64>) -> String {
    match delta_ratio {
        Some(ratio) => format!("{:+.1}%", ratio * 100.0),
        None => "from 0 B".to_string(),
    }
}

/// Red for growth, green for shrinkage, by the sign of `delta`.
pub fn change_style(delta: i64) -> Style {
    match delta.signum() {
        1 => GROWTH,
        -1 => SHRINK,
        _ => Style::new(),
    }
}

/// `file.py:36` from `/long/path/to/file.py:36`: the directory rarely fits in
/// a terminal; JSON carries the full path.
pub fn file_name_and_line(source: &str) -> String {
    source.rsplit('/').next().unwrap_or(source).to_string()
}

pub fn heading(out: &mut dyn Write, flavor: Flavor, level: usize, text: &str) -> io::Result<()> {
    match flavor {
        Flavor::Text => {
            let rule = if level == 1 { "=" } else { "-" };
            let rule_width = text_width(text).min(width().unwrap_or(usize::MAX));
            writeln!(out, "{}", styled(flavor, text, HEADING))?;
            writeln!(out, "{}", rule.repeat(rule_width))
        }
        Flavor::Markdown => writeln!(out, "{} {text}\n", "#".repeat(level + 1)),
    }
}

/// Columns a fact's label takes in text, so values line up.
const LABEL_WIDTH: usize = 24;

/// `  Label                 value`, the value wrapped under itself on a terminal.
pub fn fact(out: &mut dyn Write, flavor: Flavor, label: &str, value: &str) -> io::Result<()> {
    match flavor {
        Flavor::Text => {
            let value_width = width().map(|w| w.saturating_sub(LABEL_WIDTH).max(1)).unwrap_or(0);
            for (i, line) in wrap(value, value_width).iter().enumerate() {
                let label = if i == 0 { label } else { "" };
                writeln!(out, "{}", format!("  {label:<22}{line}").trim_end_matches(' '))?;
            }
            Ok(())
        }
        Flavor::Markdown => writeln!(out, "- **{label}**: {value}"),
    }
}

/// Output on its way to the terminal: lines longer than the width wrap at
/// spaces under their own indentation, and no line ends in a space. Tables,
/// headings and facts are laid out already; this catches the prose between them.
pub struct FitLines<W: Write> {
    inner: W,
    width: Option<usize>,
    line: Vec<u8>,
}

impl<W: Write> FitLines<W> {
    pub fn new(inner: W, width: Option<usize>) -> Self {
        FitLines { inner, width, line: Vec::new() }
    }

    fn write_line(&mut self) -> io::Result<()> {
        let text = String::from_utf8_lossy(&self.line);
        let text = text.trim_end_matches(' ');
        match self.width {
            Some(width) if text_width(text) > width => {
                let body = text.trim_start_matches(' ');
                let indent = &text[..text.len() - body.len()];
                let indent = if indent.len() * 2 > width { "" } else { indent };
                let lines = wrap(body, width - indent.len());
                let wrapped: Vec<String> = lines.iter().map(|l| format!("{indent}{l}")).collect();
                self.inner.write_all(wrapped.join("\n").as_bytes())?;
            }
            _ => self.inner.write_all(text.as_bytes())?,
        }
        self.line.clear();
        Ok(())
    }
}

impl<W: Write> Write for FitLines<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&rest[..end]);
            self.write_line()?;
            self.inner.write_all(b"\n")?;
            rest = &rest[end + 1..];
        }
        self.line.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.line.is_empty() {
            self.write_line()?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_table(width: Option<usize>) -> Table {
        let mut t = table(Flavor::Text, &["Size", "Instruction, shape / op name"]).with_width(width);
        t.add_row(["16.0 MiB", "dot.1  f32[2048,2048]{1,0}\njit(train_step)/transpose(jvp())/transpose  mlp.py:26"]);
        align_right(&mut t, &[0]);
        t
    }

    #[test]
    fn unbounded_tables_do_not_wrap_and_end_no_line_in_a_space() {
        let out = text_table(None).to_string();
        assert_eq!(
            anstream::adapter::strip_str(&out).to_string(),
            "    Size  Instruction, shape / op name\n\
             16.0 MiB  dot.1  f32[2048,2048]{1,0}\n\
             \x20         jit(train_step)/transpose(jvp())/transpose  mlp.py:26"
        );
    }

    #[test]
    fn narrow_tables_wrap_at_spaces_and_cut_long_words() {
        let out = text_table(Some(30)).to_string();
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.iter().all(|l| text_width(l) <= 30), "{out}");
        assert!(lines.iter().all(|l| !l.ends_with(' ')));
        assert!(out.contains("\n          jit(train_step)/tra…\n"), "{out}");
        assert!(out.contains("mlp.py:26"), "{out}");
        assert!(out.contains("f32[2048,2048]{1,0}"), "{out}");
    }

    #[test]
    fn wrap_breaks_only_at_spaces() {
        assert_eq!(wrap("aa bb  cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("abcdefgh ij", 4), ["abc…", "ij"]);
        assert_eq!(truncate("\x1b[1mabcdef\x1b[0m", 3), "\x1b[1mab…\x1b[0m");
        assert_eq!(text_width("\x1b[31m+5%\x1b[0m"), 3);
    }

    #[test]
    fn markdown_tables_escape_pipes() {
        let mut t = table(Flavor::Markdown, &["A", "Bytes"]);
        t.add_row(["x|y", "1"]);
        align_right(&mut t, &[1]);
        assert_eq!(t.to_string(), "| A    | Bytes |\n|------|-------|\n| x\\|y |     1 |");
    }

    #[test]
    fn prose_wraps_under_its_indentation() {
        let mut out = FitLines::new(Vec::new(), Some(12));
        out.write_all(b"  one two three four  \nshort   \n").unwrap();
        out.flush().unwrap();
        assert_eq!(String::from_utf8(out.inner).unwrap(), "  one two\n  three four\nshort\n");
    }
}
