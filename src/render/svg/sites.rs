//! A device memory profile's allocation sites as horizontal bars: the bytes
//! each function allocated itself (pprof's flat), largest first, the rest summed.

use std::io;

use super::palette;
use super::peak::{draw_bars, summed_bar, Bar};
use crate::analysis::device_memory::{DeviceMemoryReport, Site};
use crate::render::escape::printable;
use crate::render::table::{bytes, file_name_and_line};

fn site_bar(site: &Site) -> Bar {
    let details = format!(
        "{} {}:{}\nflat {} ({} bytes) in {} allocations\ncum {} in {} allocations",
        printable(&site.function),
        printable(&site.file),
        site.line,
        bytes(site.flat_bytes),
        site.flat_bytes,
        site.count,
        bytes(site.cum_bytes),
        site.cum_count
    );
    Bar {
        label: format!(
            "{} · {} · {} in {} · cum {}",
            site.function,
            file_name_and_line(&format!("{}:{}", site.file, site.line)),
            bytes(site.flat_bytes),
            site.count,
            bytes(site.cum_bytes)
        ),
        segments: vec![(site.flat_bytes, palette::BLUE, details)],
    }
}

/// `None` when no function holds a byte (a profile of executables only).
pub fn draw(caption: &str, report: &DeviceMemoryReport, top: usize) -> io::Result<Option<String>> {
    let sites = report.allocating_sites(top);
    if sites.rows.is_empty() {
        return Ok(None);
    }
    let mut bars: Vec<Bar> = sites.rows.iter().map(site_bar).collect();
    if sites.rest_bytes > 0 {
        bars.push(summed_bar(format!("{} more functions", sites.rest_count), sites.rest_bytes));
    }
    draw_bars(caption, "bytes allocated in the function (flat)", &bars).map(Some)
}
