//! SVG charts. plotters draws each chart's frame (caption, axes, ticks,
//! legend) and its continuous series; the marks a reader hovers over (bars,
//! buffer boxes, the peak) are written by [`Marks`] in the same pixel
//! coordinates, because plotters cannot attach a `<title>` tooltip to an
//! element. Text uses the viewer's `sans-serif`, so no font is embedded or
//! needed at build time.

pub mod flame;
pub mod lifetimes;
pub mod peak;
pub mod sites;
pub mod timeline;
pub mod torch_snapshot;

use std::fmt::Write as _;
use std::io;
use std::ops::Range;

use html_escape::{encode_double_quoted_attribute, encode_text};
use plotters::chart::DualCoordChartContext;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analysis::drawing::PeakMark;
use crate::analysis::torch_snapshot::TorchSnapshotReport;
use crate::analysis::{AllocatorReport, MemorySpaceReport, ModuleReport};
use crate::render::table::bytes;
use crate::render::text::{allocator_heading, space_heading};

pub const FONT: &str = "sans-serif";
pub const WIDTH: u32 = 1000;

/// What every plotters call on the SVG backend can fail with.
type Drawn<T> = Result<T, DrawingAreaErrorKind<io::Error>>;

type Coordinates = Cartesian2d<RangedCoordf64, RangedCoordf64>;

/// A chart's plot area: the primary coordinates (reached through `Deref`)
/// and the secondary ones of [`Frame::secondary`].
type PlotArea<'a, 'b> = DualCoordChartContext<'a, SVGBackend<'b>, Coordinates, Coordinates>;

/// Formats a tick value of an axis.
pub type TickLabel = dyn Fn(&f64) -> String;

/// The x axis of charts over program order.
pub const PROGRAM_ORDER: &str = "program order (heap-simulator event)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    Timeline,
    Peak,
    Lifetimes,
    /// A device memory profile's allocation sites.
    Sites,
    /// A memory space's heap in two runs, in a diff.
    Overlay,
    /// An icicle graph of the live set at the peak, by stack.
    Flame,
    /// A PyTorch snapshot's peak by user frame.
    UserFrames,
}

impl ChartKind {
    /// The chart's name in file names: `<module>.<space>.<name>.svg`.
    pub fn name(self) -> &'static str {
        match self {
            ChartKind::Timeline => "timeline",
            ChartKind::Peak => "peak",
            ChartKind::Lifetimes => "lifetimes",
            ChartKind::Sites => "sites",
            ChartKind::Overlay => "overlay",
            ChartKind::Flame => "flame",
            ChartKind::UserFrames => "user-frames",
        }
    }
}

/// The charts of one memory space in reading order, leaving out those with
/// nothing to draw (no heap-simulator events, nothing live at the peak).
pub fn space_charts(
    module: &ModuleReport,
    space: &MemorySpaceReport,
    top: usize,
) -> io::Result<Vec<(ChartKind, String)>> {
    let heading = space_heading(module, space);
    let charts = [
        (ChartKind::Timeline, timeline::program(&format!("{heading}: heap over program order"), space)?),
        (ChartKind::Peak, peak::draw(&format!("{heading}: buffers live at the peak"), space, top)?),
        (ChartKind::Lifetimes, lifetimes::draw(&format!("{heading}: buffer lifetimes"), space)?),
        (ChartKind::Flame, flame::buffers(&format!("{heading}: who owns the peak, by stack"), &space.at_peak)?),
    ];
    Ok(charts.into_iter().filter_map(|(kind, svg)| svg.map(|svg| (kind, svg))).collect())
}

/// The charts of one device of a PyTorch snapshot in reading order,
/// leaving out those with nothing to draw: its timeline by user frame, its
/// peak by user frame, and its peak by stack.
pub fn torch_snapshot_charts(report: &TorchSnapshotReport, top: usize) -> io::Result<Vec<(ChartKind, String)>> {
    let heading = format!("{} {}", report.input, report.device);
    let charts = [
        (ChartKind::Timeline, timeline::torch_snapshot(&format!("{heading}: active memory by user frame"), report)?),
        (
            ChartKind::UserFrames,
            torch_snapshot::peak_by_user_frame(&format!("{heading}: the peak by user frame"), report, top)?,
        ),
        (ChartKind::Flame, flame::torch_snapshot(&format!("{heading}: the peak by stack"), report)?),
    ];
    Ok(charts.into_iter().filter_map(|(kind, svg)| svg.map(|svg| (kind, svg))).collect())
}

/// The caption of an allocator's timeline, in the plot and in the HTML report.
pub fn allocator_chart_caption(allocator: &AllocatorReport) -> String {
    format!("{}: heap, stack and free memory over time", allocator_heading(allocator))
}

/// Colours shared by every chart: the Okabe–Ito palette for marks that carry
/// meaning (readable by colour-blind readers), greys for frames and sums.
pub mod palette {
    use plotters::style::RGBColor;

    pub const BLUE: RGBColor = RGBColor(0, 114, 178);
    pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
    pub const GREEN: RGBColor = RGBColor(0, 158, 115);
    pub const PURPLE: RGBColor = RGBColor(204, 121, 167);
    pub const SKY: RGBColor = RGBColor(86, 180, 233);
    pub const VERMILION: RGBColor = RGBColor(213, 94, 0);
    pub const YELLOW: RGBColor = RGBColor(240, 228, 66);
    pub const GREY: RGBColor = RGBColor(153, 153, 153);
    pub const LIGHT_GREY: RGBColor = RGBColor(210, 210, 210);
    pub const INK: RGBColor = RGBColor(34, 34, 34);
    pub const PEAK: RGBColor = RGBColor(200, 0, 0);

    /// Colours to tell neighbouring marks apart when they carry no meaning.
    pub const CYCLE: [RGBColor; 6] = [BLUE, ORANGE, GREEN, PURPLE, SKY, VERMILION];

    pub fn css(color: RGBColor) -> String {
        format!("#{:02x}{:02x}{:02x}", color.0, color.1, color.2)
    }
}

/// A binary unit for a byte axis, picked so the largest value reads as a
/// number below 1024: ticks then fall on round numbers of that unit.
#[derive(Debug, Clone, Copy)]
pub struct ByteScale {
    unit: &'static str,
    bytes_per_unit: f64,
}

impl ByteScale {
    pub fn for_max(max_bytes: i64) -> Self {
        let units = [("B", 1u64), ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40)];
        let (unit, size) =
            units.iter().rev().find(|(_, size)| max_bytes.unsigned_abs() >= *size).copied().unwrap_or(units[0]);
        ByteScale { unit, bytes_per_unit: size as f64 }
    }

    pub fn of(&self, bytes: i64) -> f64 {
        bytes as f64 / self.bytes_per_unit
    }

    pub fn unit(&self) -> &'static str {
        self.unit
    }
}

/// A chart's caption, axes and plot area.
pub struct Frame<'t> {
    pub caption: &'t str,
    pub x_description: &'t str,
    pub y_description: &'t str,
    pub x: Range<f64>,
    pub y: Range<f64>,
    /// Tick labels on the y axis; off for charts whose rows are labelled by marks.
    pub y_ticks: bool,
    pub x_label: &'t TickLabel,
    pub y_label: &'t TickLabel,
    /// Where the legend of the labelled series goes; `None` for no legend.
    pub legend: Option<SeriesLabelPosition>,
    /// A y axis on the right for series in another unit.
    pub secondary: Option<SecondaryAxis<'t>>,
}

pub struct SecondaryAxis<'t> {
    pub description: &'t str,
    pub y: Range<f64>,
    pub label: &'t TickLabel,
}

impl Frame<'_> {
    fn draw<'a, 'b>(&self, root: &'a DrawingArea<SVGBackend<'b>, Shift>) -> Drawn<PlotArea<'a, 'b>> {
        root.fill(&WHITE)?;
        let chart = ChartBuilder::on(root)
            .caption(self.caption, (FONT, 20).into_font().color(&palette::INK))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(if self.y_ticks { 72 } else { 8 })
            .right_y_label_area_size(if self.secondary.is_some() { 72 } else { 0 })
            .build_cartesian_2d(self.x.clone(), self.y.clone())?;
        // The secondary coordinates take the right label area over, so they
        // come before the primary axes are drawn. A chart without a second
        // axis gets an unused one: every chart is drawn through one type.
        let secondary_y = self.secondary.as_ref().map_or(0.0..1.0, |axis| axis.y.clone());
        let mut chart = chart.set_secondary_coord(self.x.clone(), secondary_y);
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(self.x_description)
            .y_desc(self.y_description)
            .x_label_formatter(self.x_label)
            .y_label_formatter(self.y_label)
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .light_line_style(TRANSPARENT)
            .bold_line_style(palette::LIGHT_GREY.mix(0.6));
        if !self.y_ticks {
            mesh.disable_y_mesh().y_labels(0);
        }
        mesh.draw()?;
        if let Some(axis) = &self.secondary {
            chart
                .configure_secondary_axes()
                .y_desc(axis.description)
                .y_label_formatter(axis.label)
                .label_style((FONT, 13))
                .axis_desc_style((FONT, 14))
                .draw()?;
        }
        Ok(chart)
    }
}

/// A tick value without float noise: `20`, `2.5`, `0.25`.
pub fn number_label(value: &f64) -> String {
    let rounded = (value * 100.0).round() / 100.0;
    if rounded.fract() == 0.0 {
        format!("{rounded:.0}")
    } else {
        format!("{rounded}")
    }
}

/// A whole number for ticks that count events or steps.
pub fn count_label(value: &f64) -> String {
    format!("{value:.0}")
}

/// Draws a chart into a string: `plot` draws on the frame and adds its
/// hover marks; the SVG gets the caption as its `<title>`.
fn render(frame: Frame, height: u32, plot: impl FnOnce(&mut PlotArea, &mut Marks) -> Drawn<()>) -> io::Result<String> {
    let mut svg = String::new();
    let mut marks = Marks::default();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        let drawn: Drawn<()> = frame
            .draw(&root)
            .and_then(|mut chart| {
                plot(&mut chart, &mut marks)?;
                match frame.legend {
                    Some(position) => chart
                        .configure_series_labels()
                        .position(position)
                        .label_font((FONT, 13))
                        .background_style(WHITE.mix(0.85))
                        .border_style(palette::GREY)
                        .draw(),
                    None => Ok(()),
                }
            })
            .and_then(|()| root.present());
        drawn.map_err(io::Error::other)?;
    }
    Ok(marks.embed(svg, frame.caption))
}

/// Hand-written SVG elements with `<title>` tooltips, in pixel coordinates.
#[derive(Debug, Default)]
pub struct Marks {
    elements: String,
}

impl Marks {
    /// A filled box; at least one pixel each way, so a small buffer stays visible.
    pub fn rect(&mut self, corner: (i32, i32), opposite: (i32, i32), fill: RGBColor, tooltip: &str) {
        self.rect_with(corner, opposite, fill, tooltip, "");
    }

    /// A box for one logical buffer, which the page's script finds by its id
    /// to mark it when the buffer is live at the point the reader picked.
    pub fn buffer_rect(
        &mut self,
        corner: (i32, i32),
        opposite: (i32, i32),
        fill: RGBColor,
        tooltip: &str,
        logical_buffer_id: i64,
    ) {
        self.rect_with(corner, opposite, fill, tooltip, &format!(" data-buffer=\"{logical_buffer_id}\""));
    }

    fn rect_with(&mut self, corner: (i32, i32), opposite: (i32, i32), fill: RGBColor, tooltip: &str, attributes: &str) {
        let (x, y) = (corner.0.min(opposite.0), corner.1.min(opposite.1));
        let width = (corner.0 - opposite.0).abs().max(1);
        let height = (corner.1 - opposite.1).abs().max(1);
        let _ = writeln!(
            self.elements,
            r#"<rect{attributes} x="{x}" y="{y}" width="{width}" height="{height}" fill="{}"><title>{}</title></rect>"#,
            palette::css(fill),
            encode_text(tooltip)
        );
    }

    /// The plot area, from `left_bottom` to `right_top` in pixels, spanning
    /// `x` in the chart's x values: how the page's script turns a pointer
    /// position into a point of the timeline. Invisible; draws nothing.
    pub fn plot_area(&mut self, left_bottom: (i32, i32), right_top: (i32, i32), x: Range<i64>) {
        let _ = writeln!(
            self.elements,
            r#"<rect class="plot-area" x="{}" y="{}" width="{}" height="{}" fill="none" data-x-from="{}" data-x-to="{}"/>"#,
            left_bottom.0,
            right_top.1,
            (right_top.0 - left_bottom.0).max(1),
            (left_bottom.1 - right_top.1).max(1),
            x.start,
            x.end
        );
    }

    pub fn circle(&mut self, center: (i32, i32), radius: u32, fill: RGBColor, tooltip: &str) {
        let _ = writeln!(
            self.elements,
            r#"<circle cx="{}" cy="{}" r="{radius}" fill="{}"><title>{}</title></circle>"#,
            center.0,
            center.1,
            palette::css(fill),
            encode_text(tooltip)
        );
    }

    /// A dashed line, for a marker across the plot.
    pub fn dashed_line(&mut self, from: (i32, i32), to: (i32, i32), stroke: RGBColor, tooltip: &str) {
        self.line(from, to, (stroke, 1.5, "6 4"), "", tooltip);
    }

    /// A thin vertical line across the plot where something begins (a training step).
    pub fn boundary(&mut self, bottom: (i32, i32), top: (i32, i32), tooltip: &str) {
        self.line(bottom, top, (palette::GREY, 1.0, "2 3"), " class=\"step-boundary\"", tooltip);
    }

    /// A line with its stroke (colour, width, dashes) and extra attributes.
    fn line(
        &mut self,
        from: (i32, i32),
        to: (i32, i32),
        stroke: (RGBColor, f64, &str),
        attributes: &str,
        tooltip: &str,
    ) {
        let (color, width, dashes) = stroke;
        let _ = writeln!(
            self.elements,
            r#"<line{attributes} x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{width}" stroke-dasharray="{dashes}"><title>{}</title></line>"#,
            from.0,
            from.1,
            to.0,
            to.1,
            palette::css(color),
            encode_text(tooltip)
        );
    }

    /// Text whose baseline starts at `at`; `anchor` is `start`, `middle` or `end`.
    pub fn text(&mut self, at: (i32, i32), text: &str, size: u32, anchor: &str, class: &str) {
        let _ = writeln!(
            self.elements,
            r#"<text x="{}" y="{}" font-family="{FONT}" font-size="{size}" text-anchor="{anchor}" fill="{}" class="{}">{}</text>"#,
            at.0,
            at.1,
            palette::css(palette::INK),
            encode_double_quoted_attribute(class),
            encode_text(text)
        );
    }

    /// The finished SVG: the title first, as screen readers and browser tabs
    /// expect, and the marks last, so they sit on top and receive the hover.
    fn embed(self, svg: String, title: &str) -> String {
        let open_end = svg.find('>').map_or(0, |i| i + 1);
        let close = svg.rfind("</svg>").unwrap_or(svg.len()).max(open_end);
        let mut out = String::with_capacity(svg.len() + self.elements.len() + title.len() + 32);
        out.push_str(&svg[..open_end]);
        let _ = write!(out, "\n<title>{}</title>", encode_text(title));
        out.push_str(&svg[open_end..close]);
        out.push_str(&self.elements);
        out.push_str(&svg[close..]);
        out
    }
}

/// The peak in words, as the charts label it.
pub fn peak_label(peak: &PeakMark) -> String {
    match &peak.what {
        Some(what) => format!("peak {} at {what} ({})", bytes(peak.bytes), peak.position),
        None => format!("peak {} ({})", bytes(peak.bytes), peak.position),
    }
}

/// Marks the peak with a dashed line from `floor` up to `top` and its label;
/// the label reads away from the nearer side of a plot spanning `x` (in the
/// peak's x units).
fn mark_peak(marks: &mut Marks, peak: &PeakMark, floor: (i32, i32), top: (i32, i32), x: &Range<f64>) {
    let label = peak_label(peak);
    let tooltip = format!("{label}: {} bytes", peak.bytes);
    mark_level(marks, &label, &tooltip, floor, top, peak_on_left(peak, x));
}

/// A dashed line from `floor` up to `top`, a dot there and `label` beside
/// it, reading to the right when `on_left`.
fn mark_level(marks: &mut Marks, label: &str, tooltip: &str, floor: (i32, i32), top: (i32, i32), on_left: bool) {
    marks.dashed_line(floor, top, palette::PEAK, tooltip);
    marks.circle(top, 5, palette::PEAK, tooltip);
    let (shift, anchor) = if on_left { (8, "start") } else { (-8, "end") };
    marks.text((top.0 + shift, top.1 - 8), label, 13, anchor, "peak-label");
}

fn peak_on_left(peak: &PeakMark, x: &Range<f64>) -> bool {
    (peak.x as f64) < (x.start + x.end) / 2.0
}

/// Shortens `text` to about `max_chars` characters, ending with `…` when cut.
pub fn shorten(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let mut short: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    short.push('…');
    short
}
