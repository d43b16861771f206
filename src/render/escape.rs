//! Text from an input, made safe to show. A module, op, plane or file name
//! in a profile, or a line of a log, can hold ESC, BEL or a newline: printed
//! raw, it recolours or retitles the terminal, or forges a line of xmem's
//! own output (`xmem: error: …`) in a CI log. Every printer that is not JSON
//! (which escapes by itself) passes each string from an input through
//! [`printable`] (terminals, logs, Markdown) or [`markup`] (HTML, SVG),
//! before it is placed among xmem's own words and line breaks.

use std::borrow::Cow;
use std::fmt::Write as _;

use html_escape::encode_text;

/// `text` with every control character written as an escape: `\n`, `\r`,
/// `\t`, `\x1b` for the other C0 controls and DEL, `\u{85}` for C1 controls
/// and for the invisible marks that reorder or break displayed text (bidi
/// overrides and isolates, line and paragraph separators). Other text,
/// backslashes included, is unchanged; text without such characters is not copied.
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, |_| true)
}

/// `text` for an HTML page or an SVG chart: [`printable`], then HTML-escaped.
pub fn markup(text: &str) -> Cow<'_, str> {
    html(escaped(text, |_| true))
}

/// [`markup`] of `text`, at most `max_bytes` long: cut after the last
/// character that fits, with `…`. A bound on the bytes a chart or page
/// spends on one text from the input, whatever characters it holds.
pub fn markup_within(text: &str, max_bytes: usize) -> String {
    within(text, max_bytes, markup)
}

/// [`markup_within`] for text of several lines whose line breaks are
/// xmem's own (a tooltip, a stack): they stay, and every text from the input
/// in it must have passed through [`printable`] already.
pub fn markup_lines_within(text: &str, max_bytes: usize) -> String {
    within(text, max_bytes, |text| html(escaped(text, |c| c != '\n')))
}

fn html(text: Cow<'_, str>) -> Cow<'_, str> {
    match text {
        Cow::Borrowed(text) => encode_text(text),
        Cow::Owned(text) => Cow::Owned(encode_text(&text).into_owned()),
    }
}

/// `escape(text)`, cut to `max_bytes` after the last character that fits, with `…`.
fn within(text: &str, max_bytes: usize, escape: impl Fn(&str) -> Cow<'_, str>) -> String {
    let mut out = String::new();
    let mut one = [0u8; 4];
    for (at, c) in text.char_indices() {
        let escaped = escape(c.encode_utf8(&mut one));
        if out.len() + escaped.len() > max_bytes.saturating_sub('…'.len_utf8()) {
            // What is left may still fit whole (escaping never shortens text).
            let rest = &text[at..];
            match (rest.len() <= max_bytes - out.len()).then(|| escape(rest)) {
                Some(rest) if out.len() + rest.len() <= max_bytes => out.push_str(&rest),
                _ => out.push('…'),
            }
            return out;
        }
        out.push_str(&escaped);
    }
    out
}

/// Whether `c` changes what a display shows beyond its own glyph.
fn is_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// `text` with the control characters that `escape` selects escaped.
fn escaped(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    let wanted = |c: char| is_control(c) && escape(c);
    let Some(first) = text.find(wanted) else { return Cow::Borrowed(text) };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if !wanted(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_as_escapes() {
        assert_eq!(printable("jit_step(22)"), "jit_step(22)");
        assert!(matches!(printable("jit_step"), Cow::Borrowed(_)));
        assert_eq!(printable("a\x1b]0;pwned\x07b\nxmem: error: x"), "a\\x1b]0;pwned\\x07b\\nxmem: error: x");
        assert_eq!(printable("\t\r\x00\x7f"), "\\t\\r\\x00\\x7f");
        assert_eq!(printable("\u{85}é\u{202e}txt"), "\\u{85}é\\u{202e}txt");
        assert_eq!(printable("C:\\path"), "C:\\path");
    }

    #[test]
    fn markup_within_cuts_escaped_text_at_a_character() {
        assert_eq!(markup_within("a&b", 100), "a&amp;b");
        assert_eq!(markup_within("a&b", 7), "a&amp;b");
        assert_eq!(markup_within("a&bc", 7), "a…");
        assert_eq!(markup_within("\u{202e}\u{202e}", 12), "\\u{202e}…");
        assert!(markup_within(&"&".repeat(10_000), 1000).len() <= 1000);
    }

    #[test]
    fn markup_escapes_controls_then_html() {
        assert_eq!(markup("<b>\x1b[31m\nx&y\t"), "&lt;b&gt;\\x1b[31m\\nx&amp;y\\t");
        assert_eq!(markup("plain"), "plain");
        assert_eq!(markup_lines_within("a<\nb\x07", 100), "a&lt;\nb\\x07");
    }
}
