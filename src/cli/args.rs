//! Every flag xmem accepts, with its help text, in one place (as ripgrep does).

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::render::text::Detail;
use crate::units::{parse_percentage, parse_size, Growth};

#[derive(Debug, Parser)]
#[command(
    name = "xmem",
    version,
    about = "What was alive at the memory peak: reports, charts and CI gates for XProf profiles, XLA HLO protos, JAX device memory profiles and OOM logs",
    after_help = "Exit codes: 0 success, 1 a `diff` limit was crossed or `oom` found a memory error, 2 bad usage or unreadable input."
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
    /// Explain the out-of-memory errors in job logs (files, globs, or - for stdin); exit 1 if any is found.
    Oom(OomArgs),
    /// Show what an input holds: modules, memory spaces, allocators.
    List(ListArgs),
    /// Run a job with XLA dumping its programs; if it dies of out-of-memory, explain it with the dump.
    Run(RunArgs),
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
    /// profile.proto, gzip-compressed, of the live set at each peak (report only; needs -o).
    Pprof,
}

impl Format {
    /// The name `--format` takes.
    pub fn name(self) -> String {
        self.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
    }
}

/// How inputs are found and read.
#[derive(Debug, Clone, Args)]
pub struct InputOptions {
    /// In a log directory, read this run (a directory name under plugins/profile) instead of the newest.
    #[arg(long, value_name = "NAME")]
    pub run: Option<String>,

    /// Refuse to decompress or read more than this many bytes from one file
    /// [default: a quarter of the available memory (MemAvailable, or `ulimit -v` if lower), 256 MiB to 16 GiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_input_size: Option<u64>,

    /// Treat every warning (a bad host file, a broken module) as an error: exit 2.
    #[arg(long)]
    pub strict: bool,
}

/// Which parts of the analysis to show.
#[derive(Debug, Clone, Args)]
pub struct Selection {
    /// Only this module: its name (`jit_step` or `jit_step(22)`), an id (the program id XProf names it
    /// by, a fingerprint on TPU, or its HloModuleProto id; 0 is an id), or /REGEX/ over `name(id)`.
    #[arg(long, value_name = "NAME|ID|/REGEX/")]
    pub module: Option<String>,

    /// Only this memory space: hbm, vmem, host, ... or its colour number. On TPU, vmem also shows
    /// the largest scoped-VMEM allocation any instruction reserves (not part of the peak, as in XProf).
    #[arg(long, value_name = "hbm|vmem|host|N")]
    pub memory_space: Option<String>,

    /// Only this allocator: its name (e.g. GPU_0_bfc) on every host, or HOST/NAME.
    #[arg(long, value_name = "NAME")]
    pub allocator: Option<String>,

    /// Show this many buffers or rows per table.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,

    /// Show (or plot) every module in detail, not only the one with the largest peak.
    #[arg(long)]
    pub all: bool,
}

impl Selection {
    /// How much the text, Markdown and HTML outputs show: choosing a module shows it in detail.
    pub fn detail(&self) -> Detail {
        Detail { top: self.top, all: self.all || self.module.is_some() }
    }
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

/// Where a comparison goes, and in which format (a pprof profile has no diff form).
#[derive(Debug, Clone, Args)]
pub struct DiffOutputOptions {
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats(&["text", "json", "markdown", "html"]))]
    pub format: Format,

    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Where a document without charts goes, and in which format.
#[derive(Debug, Clone, Args)]
pub struct PlainOutputOptions {
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats(&PLAIN_FORMATS))]
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
    pub attribution: AttributionOptions,

    #[command(flatten)]
    pub input: InputOptions,

    #[command(flatten)]
    pub output: OutputOptions,
}

/// Who owns the memory, and at which point of the program.
#[derive(Debug, Clone, Args)]
pub struct AttributionOptions {
    /// Group buffers by the first N scopes of their op name (`jit(step)/jvp(model)` is 2); default: the whole op name.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub op_depth: Option<u64>,

    /// Also show the live set after this heap-simulator event (the number the peak's "at event N" gives), or at this
    /// instruction (its event where the heap is highest), in every memory space whose trace has it.
    #[arg(long, value_name = "EVENT|INSTRUCTION")]
    pub at: Option<String>,

    /// Also show the N largest distinct peaks of each memory space (see --peak-drop), each with its live set.
    #[arg(long, value_name = "N")]
    pub peaks: Option<usize>,

    /// Two peaks are distinct when the heap falls between them by at least this share of the earlier one.
    #[arg(long, value_name = "PCT", default_value = "10%", value_parser = parse_percentage)]
    pub peak_drop: f64,
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

    /// Do not judge memory spaces and allocators whose peak is under this size in both inputs (they are
    /// still reported) [default: 1% of the largest peak, at least 1 MiB; 0 judges every peak].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub min_peak: Option<u64>,

    #[command(flatten)]
    pub selection: Selection,

    #[command(flatten)]
    pub input: InputOptions,

    #[command(flatten)]
    pub output: DiffOutputOptions,
}

#[derive(Debug, Args)]
#[command(after_help = "Exit codes: 0 no memory error found, 1 at least one memory error found, \
    2 bad usage or a log that could not be read.")]
pub struct OomArgs {
    /// Log files (plain or gzip), directories (the files in them), glob patterns such as 'logs/*.err', or -
    /// for standard input, read as a stream: each incident is printed as soon as the log has moved past it.
    #[arg(value_name = "LOG|-", required = true)]
    pub logs: Vec<PathBuf>,

    /// Refuse to decompress or read more than this many bytes from one log.
    #[arg(long, value_name = "SIZE", default_value = "16GiB", value_parser = parse_size)]
    pub max_input_size: u64,

    /// Join each incident with the program that failed, from what `xmem report` reads (an XLA dump dir, a
    /// profile, an HLO proto): its peak against the log's limit, the lines that own it, what to change.
    /// Give it after the log.
    #[arg(long = "with", value_name = "INPUT", num_args = 1..)]
    pub with: Vec<PathBuf>,

    /// With --with, show this many rows of the program's tables.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub top: usize,

    #[command(flatten)]
    pub output: PlainOutputOptions,
}

#[derive(Debug, Args)]
#[command(after_help = "The job's stdin, stdout and stderr pass through unchanged; the post-mortem, if any, goes to \
    stderr after its output (or to -o FILE). Exit code: the job's own (128+N when signal N ended it), \
    2 when it cannot be started.")]
pub struct RunArgs {
    /// Where XLA dumps the job's programs. Default: a new directory under the system temp dir, removed when the
    /// job shows no memory error. A --xla_dump_to already in XLA_FLAGS is used as it is.
    #[arg(long, value_name = "DIR")]
    pub dump_dir: Option<PathBuf>,

    /// Keep the dump directory even when the job shows no memory error.
    #[arg(long)]
    pub keep_dump: bool,

    /// Show this many rows of the failed program's tables.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub top: usize,

    /// Format of the post-mortem.
    #[arg(long, default_value = "text", value_parser = formats(&PLAIN_FORMATS))]
    pub format: Format,

    /// Write the post-mortem to this file (also when the job shows no memory error) instead of standard error.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The command to run and its arguments (after --, or after xmem's own options).
    #[arg(value_name = "CMD", required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Profile, HLO proto, XLA dump dir, or pprof file; - reads standard input.
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,

    #[command(flatten)]
    pub input_options: InputOptions,

    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats(&PLAIN_FORMATS))]
    pub format: Format,
}

/// The formats of a command that draws no chart.
const PLAIN_FORMATS: [&str; 3] = ["text", "json", "markdown"];

/// A `--format` that takes only the formats a command can write.
fn formats(names: &'static [&'static str]) -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(names.iter().copied()).try_map(|name: String| Format::from_str(&name, false))
}
