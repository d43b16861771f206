//! Icicle graphs of a live set, drawn by inferno: the widest frames at the
//! top, each frame's tooltip giving its bytes and share. A buffer's stack is
//! its Python frames (outermost first), then its op-name scopes, then its HLO
//! instruction; a device memory profile's stacks are its Python frames.

use std::io;

use html_escape::encode_text;

use inferno::flamegraph::{self, color::BasicPalette, Direction, Options, Palette};

use super::WIDTH;
use crate::analysis::attribution::op_name_components;
use crate::analysis::device_memory::DeviceMemoryReport;
use crate::analysis::torch_snapshot::user_frame::is_python;
use crate::analysis::torch_snapshot::TorchSnapshotReport;
use crate::analysis::BufferAtPeak;
use crate::render::table::file_name_and_line;

/// An icicle graph of buffers (a memory space's live set), or `None` when nothing is live.
pub fn buffers(caption: &str, buffers: &[BufferAtPeak]) -> io::Result<Option<String>> {
    let lines = buffers.iter().filter(|b| b.size_bytes > 0).map(|b| folded(buffer_frames(b), b.size_bytes));
    draw(caption, lines.collect())
}

/// An icicle graph of a device memory profile's stacks.
pub fn device_memory(caption: &str, report: &DeviceMemoryReport) -> io::Result<Option<String>> {
    let lines = report.stacks.iter().filter(|s| s.bytes > 0).map(|stack| {
        let frames =
            stack.frames.iter().rev().map(|f| format!("{} ({}:{})", f.function, file_name_and_line(&f.file), f.line));
        folded(frames.collect(), stack.bytes)
    });
    draw(caption, lines.collect())
}

/// An icicle graph of a PyTorch snapshot's peak by stack: each stack's
/// Python frames, outermost first (C++ frames are left out: the unwinder's
/// and the interpreter's would bury the user's), or, for a stack without
/// any, what owns it (the autograd node of the backward pass).
pub fn torch_snapshot(caption: &str, report: &TorchSnapshotReport) -> io::Result<Option<String>> {
    let lines = report.at_peak_by_stack.iter().filter(|s| s.bytes > 0).map(|stack| {
        let python: Vec<String> = stack
            .frames
            .iter()
            .rev()
            .filter(|f| is_python(&f.function, &f.file))
            .map(|f| format!("{} ({}:{})", f.function, file_name_and_line(&f.file), f.line))
            .collect();
        let frames = if python.is_empty() { vec![stack.owner.label()] } else { python };
        folded(frames, stack.bytes)
    });
    draw(caption, lines.collect())
}

/// Python frames outermost first, op-name scopes, then the instruction.
fn buffer_frames(buffer: &BufferAtPeak) -> Vec<String> {
    let python = buffer.stack.as_deref().unwrap_or_default().lines().rev().map(|frame| {
        let mut parts = frame.splitn(3, ':');
        let (file, line) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        file_name_and_line(&format!("{file}:{line}"))
    });
    let scopes = op_name_components(&buffer.op_name).into_iter().map(str::to_string);
    python.chain(scopes).chain([buffer.instruction.to_string()]).collect()
}

/// inferno's folded format: frames joined by `;`, then the count. A frame
/// may not hold `;` itself, nor start or end with a space.
fn folded(frames: Vec<String>, bytes: i64) -> String {
    let frames: Vec<String> = frames.iter().map(|f| f.replace(';', ",").trim().to_string()).collect();
    format!("{} {bytes}", frames.join(";"))
}

fn draw(caption: &str, lines: Vec<String>) -> io::Result<Option<String>> {
    if lines.is_empty() {
        return Ok(None);
    }
    let mut options = Options::default();
    options.title = caption.to_string();
    options.count_name = "bytes".to_string();
    options.name_type = "Frame:".to_string();
    options.direction = Direction::Inverted;
    options.colors = Palette::Basic(BasicPalette::Mem);
    options.deterministic = true;
    options.hash = true;
    options.no_javascript = true;
    options.image_width = Some(WIDTH as usize);
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)?;
    let svg = String::from_utf8(svg).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok(Some(static_chart(&svg, caption)))
}

/// inferno's SVG made fit to inline in a page, several to a page: no XML
/// prologue, no script or the controls that need it (the page's own script
/// zooms and searches every chart), its ids made classes so that no id
/// repeats in the page, and its style rules scoped to the chart so they do
/// not restyle the page.
fn static_chart(svg: &str, caption: &str) -> String {
    let mut svg = svg.find("<svg").map_or(svg, |start| &svg[start..]).to_string();
    cut(&mut svg, "<script", "</script>");
    for control in ["details", "unzoom", "search", "matched"] {
        cut(&mut svg, &format!("<text id=\"{control}\""), "</text>");
    }
    // A plain background instead of inferno's gradient, which a page would reach by url().
    cut(&mut svg, "<defs>", "</defs>");
    let svg = svg.replace("fill=\"url(#background)\"", "fill=\"#f8f8f8\"").replace(" id=\"", " class=\"");
    let svg = svg.replacen(" onload=\"init(evt)\"", "", 1).replacen("<svg ", "<svg class=\"flame\" ", 1);
    // The caption as the chart's own title, first, as every chart of xmem has it.
    let svg = match svg.find('>') {
        Some(end) => format!("{}\n<title>{}</title>{}", &svg[..=end], encode_text(caption), &svg[end + 1..]),
        None => svg,
    };
    svg.lines().map(scope_rule).collect::<Vec<_>>().join("\n")
}

/// Removes the first stretch from `start` to the end of `end`.
fn cut(text: &mut String, start: &str, end: &str) {
    if let Some(from) = text.find(start) {
        if let Some(to) = text[from..].find(end) {
            text.replace_range(from..from + to + end.len(), "");
        }
    }
}

/// `#title { … }` becomes `svg.flame .title { … }`, as the ids became
/// classes; inferno writes one style rule per line.
fn scope_rule(line: &str) -> String {
    match line.split_once('{') {
        Some((selectors, rest)) if !selectors.contains('<') && !selectors.trim().is_empty() => {
            let scoped: Vec<String> =
                selectors.split(',').map(|s| format!("svg.flame {}", s.trim().replace('#', "."))).collect();
            format!("{} {{{rest}", scoped.join(", "))
        }
        _ => line.to_string(),
    }
}
