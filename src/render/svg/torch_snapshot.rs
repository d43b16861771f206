//! A PyTorch snapshot's peak by owner, as horizontal bars: one per user
//! frame (or, without one, what owns the bytes), made of its blocks, each
//! with its size and stack in its tooltip; the other owners summed.

use std::io;

use super::palette;
use super::peak::{draw_bars, summed_bar, Bar};
use crate::analysis::drawing::{torch_peak_owners, OwnerBlocks};
use crate::analysis::torch_snapshot::user_frame::is_python;
use crate::analysis::torch_snapshot::TorchSnapshotReport;
use crate::render::table::{bytes, file_name_and_line, plural};

/// Blocks drawn one by one in a bar; the rest of the owner's are one grey piece.
const BLOCKS_PER_BAR: usize = 64;

fn owner_bar(owner: &OwnerBlocks) -> Bar {
    let group = owner.group;
    let label =
        format!("{} · {} in {}", group.owner.label(), bytes(group.bytes), plural(group.count as usize, "block"));
    let mut segments: Vec<_> = owner
        .blocks
        .iter()
        .enumerate()
        .map(|(i, block)| {
            let python = block.frames.iter().find(|f| is_python(&f.function, &f.file));
            let innermost = python.map_or(String::new(), |f| {
                format!("\n{} {}", f.function, file_name_and_line(&format!("{}:{}", f.file, f.line)))
            });
            let tooltip = format!(
                "{} ({} bytes), {} requested, at {:#x}\n{}{innermost}",
                bytes(block.size_bytes),
                block.size_bytes,
                bytes(block.requested_bytes),
                block.address,
                group.owner.label()
            );
            // Neighbouring blocks in two shades, so each can be told apart.
            (block.size_bytes, if i % 2 == 0 { palette::BLUE } else { palette::SKY }, tooltip)
        })
        .collect();
    if owner.rest_bytes > 0 {
        let rest = group.count as usize - owner.blocks.len();
        segments.push((
            owner.rest_bytes,
            palette::GREY,
            format!("{} more of {}", plural(rest, "block"), group.owner.label()),
        ));
    }
    Bar { label, segments }
}

/// `None` when nothing is live at the peak.
pub fn peak_by_user_frame(caption: &str, report: &TorchSnapshotReport, top: usize) -> io::Result<Option<String>> {
    let groups = &report.at_peak_by_user_frame;
    if groups.iter().all(|g| g.bytes <= 0) {
        return Ok(None);
    }
    let mut bars: Vec<Bar> = torch_peak_owners(report, top, BLOCKS_PER_BAR).iter().map(owner_bar).collect();
    let rest = groups.get(top..).unwrap_or_default();
    if !rest.is_empty() {
        let rest_bytes = rest.iter().map(|g| g.bytes).fold(0, i64::saturating_add);
        bars.push(summed_bar(plural(rest.len(), "more user frame"), rest_bytes));
    }
    draw_bars(caption, "bytes live at the peak", &bars).map(Some)
}
