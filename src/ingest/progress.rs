//! How far a long read has got, for the CLI's progress bar. The library only
//! counts bytes; drawing is the caller's business.

use std::fmt;
use std::io::{self, Read};
use std::sync::Arc;

/// Receives the progress of reads: a phase starts with the number of bytes
/// it will go through, then advances as they are done.
pub trait ProgressSink: Send + Sync {
    fn start(&self, label: &str, total_bytes: u64);
    fn advance(&self, bytes: u64);
}

/// A sink, or nothing; cheap to clone into every read.
#[derive(Clone, Default)]
pub struct Progress(Option<Arc<dyn ProgressSink>>);

impl Progress {
    pub fn new(sink: Arc<dyn ProgressSink>) -> Self {
        Progress(Some(sink))
    }

    pub fn start(&self, label: &str, total_bytes: u64) {
        if let Some(sink) = &self.0 {
            sink.start(label, total_bytes);
        }
    }

    pub fn advance(&self, bytes: u64) {
        if let Some(sink) = &self.0 {
            sink.advance(bytes);
        }
    }

    /// `inner`, reporting every byte read from it.
    pub fn reader<R: Read>(&self, inner: R) -> ProgressReader<R> {
        ProgressReader { inner, progress: self.clone() }
    }
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Progress(reporting)" } else { "Progress(silent)" })
    }
}

pub struct ProgressReader<R> {
    inner: R,
    progress: Progress,
}

impl<R: Read> Read for ProgressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.advance(n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[derive(Default)]
    struct Count(AtomicU64, AtomicU64);

    impl ProgressSink for Count {
        fn start(&self, _: &str, total: u64) {
            self.0.store(total, Ordering::Relaxed);
        }
        fn advance(&self, bytes: u64) {
            self.1.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_reader_reports_every_byte() {
        let count = Arc::new(Count::default());
        let progress = Progress::new(count.clone());
        progress.start("reading", 10_000);
        let mut sink = Vec::new();
        progress.reader(&[7u8; 10_000][..]).read_to_end(&mut sink).unwrap();
        assert_eq!((count.0.load(Ordering::Relaxed), count.1.load(Ordering::Relaxed)), (10_000, 10_000));
    }
}
