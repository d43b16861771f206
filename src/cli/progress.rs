//! The progress bar for long reads: on stderr, only when stderr is a
//! terminal, and only once a read has taken more than a second, so quick
//! runs and CI logs never see it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::ingest::progress::{Progress, ProgressSink};
use crate::render::escape::printable;

const SHOW_AFTER: Duration = Duration::from_secs(1);

struct Bar {
    bar: ProgressBar,
    started: Mutex<Instant>,
    shown: AtomicBool,
    terminal: bool,
}

impl ProgressSink for Bar {
    fn start(&self, label: &str, total_bytes: u64) {
        self.bar.set_length(total_bytes);
        self.bar.set_position(0);
        self.bar.set_message(printable(label).into_owned());
        if let Ok(mut started) = self.started.lock() {
            *started = Instant::now();
        }
    }

    fn advance(&self, bytes: u64) {
        self.bar.inc(bytes);
        let late = self.started.lock().map(|s| s.elapsed() > SHOW_AFTER).unwrap_or(false);
        if self.terminal && late && !self.shown.swap(true, Ordering::Relaxed) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// A progress sink for one command's reads.
pub fn bar() -> Progress {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    if let Ok(style) = ProgressStyle::with_template("{msg} {wide_bar} {binary_bytes}/{binary_total_bytes} {eta}") {
        bar.set_style(style);
    }
    Progress::new(Arc::new(Bar {
        bar,
        started: Mutex::new(Instant::now()),
        shown: AtomicBool::new(false),
        terminal: std::io::stderr().is_terminal(),
    }))
}
