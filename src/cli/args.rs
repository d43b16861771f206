//! Every flag xmem accepts, with its help text, in one place (as ripgrep does).

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::units::{parse_size, Growth};

#[derive(Debug, Parser)]
#[command(
    name = "xmem",
    version,
    about = "What was alive at the memory peak: reports, charts and CI gates for XProf profiles, XLA HLO protos, JAX device memory profiles and OOM logs",
    after_help = "Exit codes: 0 success, 1 a `diff` limit was crossed, 2 bad usage or unreadable input."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    #[command(flatten)]
    pub terminal: TerminalOptions,
}

/// How text output is laid out, for every command.
#[derive(Debug, Clone, Copy, Args)]
pub struct TerminalOptions {
    /// Lay text out in N columns. Default: the terminal's width; no wrapping when piped or written to a file.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(20..))]
    pub width: Option<u16>,

    /// Colour text output: auto (on a terminal, unless NO_COLOR is set), always or never.
    #[arg(long, global = true, value_name = "WHEN", value_enum, default_value_t = clap::ColorChoice::Auto)]
    pub color: clap::ColorChoice,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Analyse every module and allocator found: peaks per memory space and what is live there.
    Report(ReportArgs),
    /// Write SVG charts (timelines, buffers at peak, lifetimes; allocator timelines) into a directory.
    Plot(PlotArgs),
    /// Compare two inputs; exit 1 when a --fail-if-* limit is crossed.
    Diff(DiffArgs),
    /// Explain the out-of-memory errors in a job's log (a file, or - for stdin).
    Oom(OomArgs),
    /// Show what an input holds: modules, memory spaces, allocators.
    List(ListArgs),
    /// Print a shell completion script.
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
    Html,
}

/// How inputs are found and read.
#[derive(Debug, Clone, Args)]
pub struct InputOptions {
    /// In a log directory, read this run (a directory name under plugins/profile) instead of the newest.
    #[arg(long, value_name = "NAME")]
    pub run: Option<String>,

    /// Refuse to decompress or read more than this many bytes from one file.
    #[arg(long, value_name = "SIZE", default_value = "16GiB", value_parser = parse_size)]
    pub max_input_size: u64,

    /// Treat every warning (a bad host file, a broken module) as an error: exit 2.
    #[arg(long)]
    pub strict: bool,
}

/// Which parts of the analysis to show.
#[derive(Debug, Clone, Args)]
pub struct Selection {
    /// Only this module: its name, its program id, or /REGEX/ over its name.
    #[arg(long, value_name = "NAME|ID|/REGEX/")]
    pub module: Option<String>,

    /// Only this memory space: hbm, vmem, host, ... or its colour number.
    #[arg(long, value_name = "hbm|vmem|host|N")]
    pub memory_space: Option<String>,

    /// Only this allocator: its name (e.g. GPU_0_bfc) on every host, or HOST/NAME.
    #[arg(long, value_name = "NAME")]
    pub allocator: Option<String>,

    /// Show this many buffers or rows per table.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,

    /// Show every module in detail, not only the one with the largest peak.
    #[arg(long)]
    pub all: bool,
}

/// Where a report goes and in which format.
#[derive(Debug, Clone, Args)]
pub struct OutputOptions {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Where a document without charts goes, and in which format.
#[derive(Debug, Clone, Args)]
pub struct PlainOutputOptions {
    /// Output format.
    #[arg(long, default_value = "text", value_parser = plain_format())]
    pub format: Format,

    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Profile (log dir, run dir, *.xplane.pb[.gz]), HLO proto, XLA dump dir, or pprof file; - reads standard input.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,

    #[command(flatten)]
    pub selection: Selection,

    #[command(flatten)]
    pub input: InputOptions,

    #[command(flatten)]
    pub output: OutputOptions,
}

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Profile, HLO proto, XLA dump dir, or pprof file; - reads standard input.
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,

    /// Directory to write the SVG files into (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,

    #[command(flatten)]
    pub selection: Selection,

    #[command(flatten)]
    pub input_options: InputOptions,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The baseline input (- reads standard input).
    #[arg(value_name = "BASE")]
    pub base: PathBuf,

    /// The input to compare against the baseline (- reads standard input).
    #[arg(value_name = "NEW")]
    pub new: PathBuf,

    /// Fail (exit 1) when any matched peak grows by more than this: a percentage (5%) or a size (64MiB).
    /// Peaks are those of memory spaces and of allocators (heap plus stack; --allocator NAME judges one only).
    /// For two device memory profiles, the peak is their total live bytes (a leak check).
    #[arg(long, value_name = "PCT|SIZE")]
    pub fail_if_peak_grows: Option<Growth>,

    /// Fail (exit 1) when any peak of the new input (a memory space's or an allocator's, or its total live
    /// bytes for a device memory profile) is above this size.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub fail_if_over: Option<u64>,

    /// Leave out memory spaces whose peak is under this size in both inputs (small helper modules).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "0")]
    pub min_peak: u64,

    #[command(flatten)]
    pub selection: Selection,

    #[command(flatten)]
    pub input: InputOptions,

    #[command(flatten)]
    pub output: OutputOptions,
}

#[derive(Debug, Args)]
pub struct OomArgs {
    /// The log file, or - to read standard input.
    #[arg(value_name = "LOG|-")]
    pub log: PathBuf,

    #[command(flatten)]
    pub output: PlainOutputOptions,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Profile, HLO proto, XLA dump dir, or pprof file; - reads standard input.
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,

    #[command(flatten)]
    pub input_options: InputOptions,

    /// Output format.
    #[arg(long, default_value = "text", value_parser = plain_format())]
    pub format: Format,
}

/// The formats of a command that draws no chart: every one but HTML.
fn plain_format() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(["text", "json", "markdown"]).try_map(|name: String| Format::from_str(&name, false))
}
