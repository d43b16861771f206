//! `xmem run -- CMD ARGS…`: runs a job so that, if it dies of out-of-memory,
//! the post-mortem is already possible. XLA is asked to dump every program it
//! compiles (`--xla_dump_to=DIR --xla_dump_hlo_as_proto` added to the job's
//! own `XLA_FLAGS`); the job's stdout and stderr go through unchanged and
//! as they come, while a scanner reads them as one log with flat memory; when
//! the job exits, a memory error seen in its output is explained and joined
//! with the dump, on stderr after the job's own output. xmem exits with the
//! job's exit code (128+N when a signal N ended it).

use std::ffi::OsString;
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use anyhow::Context;

use super::args::RunArgs;
use super::oom::{flavor, write, Programs};
use super::{output, Outcome};
use crate::oom::{self, OomReport};

/// The flag that names XLA's dump directory.
const DUMP_TO: &str = "--xla_dump_to=";
/// HLO protos with their buffer assignment, what `xmem report` reads.
const DUMP_AS_PROTO: &str = "--xla_dump_hlo_as_proto";

pub fn run(args: RunArgs) -> anyhow::Result<Outcome> {
    let flavor = flavor(args.format)?;
    let (program, arguments) = args.command.split_first().context("no command to run (xmem run -- CMD ARGS...)")?;
    let user_flags = std::env::var("XLA_FLAGS").unwrap_or_default();
    let dump = Dump::prepare(args.dump_dir.as_deref(), &user_flags)?;
    let mut command = Command::new(program);
    command.args(arguments).env("XLA_FLAGS", dump.xla_flags(&user_flags)).stdin(Stdio::inherit());
    // Its stdout is a pipe now, not the terminal: Python would hold prints back in a buffer.
    if std::env::var_os("PYTHONUNBUFFERED").is_none() {
        command.env("PYTHONUNBUFFERED", "1");
    }
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            dump.discard();
            anyhow::bail!("cannot run {}: {e}", program.to_string_lossy());
        }
    };
    signals::forward_to(child.id());
    let mut stream = oom::Stream::new(&format!("output of {}", program.to_string_lossy()));
    let (lines, pumps) = pump_output(&mut child);
    // Both streams' lines, in the order they arrive, until both pipes close.
    for line in lines {
        stream.line(&line);
    }
    for pump in pumps {
        let _ = pump.join();
    }
    let status = child.wait().context("waiting for the command")?;
    post_mortem(&args, flavor, stream.finish(), &dump)?;
    Ok(Outcome::Exit(exit_code(status)))
}

/// Where XLA dumps: the user's own `--xla_dump_to`, `--dump-dir`, or a new
/// directory under the temp dir. Only a directory xmem created is removed.
struct Dump {
    dir: PathBuf,
    /// The dump flag is already in the user's `XLA_FLAGS`.
    users_flag: bool,
    /// xmem made the directory: it may remove it when the job had no memory error.
    created: bool,
}

impl Dump {
    fn prepare(dump_dir: Option<&Path>, user_flags: &str) -> anyhow::Result<Dump> {
        if let Some(dir) = user_flags.split_whitespace().find_map(|flag| flag.strip_prefix(DUMP_TO)) {
            return Ok(Dump { dir: PathBuf::from(dir), users_flag: true, created: false });
        }
        match dump_dir {
            Some(dir) => {
                let created = !dir.exists();
                std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
                Ok(Dump { dir: dir.to_path_buf(), users_flag: false, created })
            }
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("xmem-run-")
                    .tempdir()
                    .context("cannot create a dump directory under the temp dir")?;
                Ok(Dump { dir: dir.keep(), users_flag: false, created: true })
            }
        }
    }

    /// The user's flags, with the dump added where they do not ask for one.
    fn xla_flags(&self, user_flags: &str) -> OsString {
        let mut flags = user_flags.trim().to_string();
        if !self.users_flag {
            flags.push_str(&format!(" {DUMP_TO}{}", self.dir.display()));
        }
        if !flags.split_whitespace().any(|flag| flag == DUMP_AS_PROTO || flag.starts_with("--xla_dump_hlo_as_proto=")) {
            flags.push_str(&format!(" {DUMP_AS_PROTO}"));
        }
        OsString::from(flags.trim_start())
    }

    /// Whether XLA wrote any program into it.
    fn holds_programs(&self) -> bool {
        std::fs::read_dir(&self.dir)
            .map(|entries| {
                entries
                    .flatten()
                    .any(|entry| entry.file_name().to_string_lossy().ends_with("after_optimizations.hlo.pb"))
            })
            .unwrap_or(false)
    }

    /// Removes the directory if xmem made it.
    fn discard(&self) {
        if self.created {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Lines waiting for the scanner; past this many, the readers wait, so
/// memory stays flat however fast the job prints.
const QUEUED_LINES: usize = 1024;

/// Copies the child's stdout and stderr to xmem's own, a read at a time, and
/// sends each line to the scanner; one thread per stream.
fn pump_output(child: &mut Child) -> (Receiver<Vec<u8>>, Vec<std::thread::JoinHandle<()>>) {
    let (sender, receiver) = sync_channel(QUEUED_LINES);
    let mut pumps = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        pumps.push(pump(stdout, io::stdout(), sender.clone()));
    }
    if let Some(stderr) = child.stderr.take() {
        pumps.push(pump(stderr, io::stderr(), sender));
    }
    (receiver, pumps)
}

fn pump(
    from: impl Read + Send + 'static,
    to: impl Write + Send + 'static,
    lines: SyncSender<Vec<u8>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let tee = Tee { from, to: Some(to) };
        let _ = oom::read_lines(BufReader::with_capacity(1 << 16, tee), |_, line| {
            let _ = lines.send(line.to_vec());
        });
    })
}

/// A reader that writes everything it reads to `to` first, so the user sees
/// the output at once, not a line later. When `to` goes away (`| head`), it
/// stops reading, so the child gets the broken pipe it would get without xmem.
struct Tee<R, W> {
    from: R,
    to: Option<W>,
}

impl<R: Read, W: Write> Read for Tee<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(to) = &mut self.to else { return Ok(0) };
        let n = self.from.read(buf)?;
        if to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
            self.to = None;
        }
        Ok(n)
    }
}

/// After the job: nothing if its output held no memory error (and the dump
/// goes, unless kept); else the post-mortem joined with the dump, on stderr
/// or into `-o FILE`.
fn post_mortem(
    args: &RunArgs,
    flavor: Option<crate::render::table::Flavor>,
    mut report: OomReport,
    dump: &Dump,
) -> anyhow::Result<()> {
    let found = report.found_errors();
    if found {
        let programs = if dump.holds_programs() {
            Programs::load(std::slice::from_ref(&dump.dir), args.top)
        } else {
            Programs::NotAsked
        };
        programs.join_all(&mut report);
    }
    let mut rendered = Vec::new();
    {
        let mut out = output::piped(&mut rendered, args.format);
        write(&mut out, flavor, &report)?;
        out.flush()?;
    }
    match &args.output {
        Some(path) => std::fs::write(path, &rendered).with_context(|| format!("cannot write {}", path.display()))?,
        None if found => {
            let mut stderr = io::stderr().lock();
            writeln!(stderr, "\nxmem: the job's output shows a memory error; the post-mortem follows.")?;
            stderr.write_all(&rendered)?;
        }
        None => {}
    }
    // A dump is kept when it explains a memory error or when asked to; an empty one (not an XLA job) never.
    if (found && dump.holds_programs()) || args.keep_dump {
        if dump.created {
            eprintln!("xmem: XLA dump kept in {}", dump.dir.display());
        }
    } else {
        dump.discard();
    }
    Ok(())
}

/// The job's exit code, or 128+N when signal N ended it, as a shell reports it.
fn exit_code(status: ExitStatus) -> u8 {
    if let Some(code) = status.code() {
        return u8::try_from(code & 0xff).unwrap_or(1);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return u8::try_from(128 + (signal & 0x7f)).unwrap_or(1);
        }
    }
    1
}

/// Signals meant for the job. A terminal's Ctrl-C (SIGINT) and Ctrl-\ (SIGQUIT)
/// reach the whole foreground group, the job included: xmem only outlives
/// them to report. SIGTERM and SIGHUP sent to xmem alone are passed on.
#[cfg(unix)]
mod signals {
    use std::sync::atomic::{AtomicI32, Ordering};

    static CHILD: AtomicI32 = AtomicI32::new(0);

    extern "C" fn forward(signal: libc::c_int) {
        let pid = CHILD.load(Ordering::Relaxed);
        if pid > 0 {
            // SAFETY: kill is async-signal-safe; the pid is the child's, set before the handler was installed.
            unsafe {
                libc::kill(pid, signal);
            }
        }
    }

    extern "C" fn outlive(_: libc::c_int) {}

    pub fn forward_to(child: u32) {
        CHILD.store(i32::try_from(child).unwrap_or(0), Ordering::Relaxed);
        let forward = forward as extern "C" fn(libc::c_int) as libc::sighandler_t;
        let outlive = outlive as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: both handlers only touch an atomic and call kill(2). A caught
        // signal is reset to its default in a child at exec, so the job's own
        // handling is unchanged.
        unsafe {
            libc::signal(libc::SIGTERM, forward);
            libc::signal(libc::SIGHUP, forward);
            libc::signal(libc::SIGINT, outlive);
            libc::signal(libc::SIGQUIT, outlive);
        }
    }
}

#[cfg(not(unix))]
mod signals {
    pub fn forward_to(_child: u32) {}
}
