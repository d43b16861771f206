//! A PyTorch snapshot's peak by user frame, as horizontal bars: the bytes
//! live under each of the largest, the rest summed.

use std::io;

use super::palette;
use super::peak::{draw_bars, summed_bar, Bar};
use crate::analysis::torch_snapshot::{FrameGroup, TorchSnapshotReport};
use crate::render::table::{bytes, plural};

fn group_bar(group: &FrameGroup) -> Bar {
    let label =
        format!("{} · {} in {}", group.owner.label(), bytes(group.bytes), plural(group.count as usize, "block"));
    let details = match &group.owner.user_frame {
        Some(frame) => format!(
            "{} {}:{}\n{} ({} bytes) in {}",
            frame.function,
            frame.file,
            frame.line,
            bytes(group.bytes),
            group.bytes,
            plural(group.count as usize, "block")
        ),
        None => label.clone(),
    };
    Bar { label, segments: vec![(group.bytes, palette::BLUE, details)] }
}

/// `None` when nothing is live at the peak.
pub fn peak_by_user_frame(caption: &str, report: &TorchSnapshotReport, top: usize) -> io::Result<Option<String>> {
    let groups = &report.at_peak_by_user_frame;
    if groups.iter().all(|g| g.bytes <= 0) {
        return Ok(None);
    }
    let mut bars: Vec<Bar> = groups.iter().take(top).map(group_bar).collect();
    let rest = groups.get(top..).unwrap_or_default();
    if !rest.is_empty() {
        let rest_bytes = rest.iter().map(|g| g.bytes).fold(0, i64::saturating_add);
        bars.push(summed_bar(plural(rest.len(), "more user frame"), rest_bytes));
    }
    draw_bars(caption, "bytes live at the peak", &bars).map(Some)
}
