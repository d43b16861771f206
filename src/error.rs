//! Library errors. Every variant names the file it is about, so the CLI can
//! print one line that tells the user which input was wrong and how.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// Bytes that do not decode as the format they claim to be.
    #[error("{}: {}{what}", path.display(), offset.map(|o| format!("at byte {o}: ")).unwrap_or_default())]
    Malformed { path: PathBuf, offset: Option<u64>, what: String },

    /// A file or directory that holds nothing xmem can read.
    #[error("{}: {what}", path.display())]
    Unrecognised { path: PathBuf, what: String },

    /// Decompressed input larger than the configured ceiling (a gzip bomb or a
    /// file bigger than the user allowed).
    #[error("{}: limit reached: more than {limit} bytes once decompressed; use --max-input-size to raise it", path.display())]
    TooLarge { path: PathBuf, limit: u64 },

    /// Memory ran out while decompressing, below the ceiling.
    #[error("{}: out of memory after decompressing {decompressed} bytes; use --max-input-size to set a limit this machine can hold", path.display())]
    OutOfMemory { path: PathBuf, decompressed: u64 },

    /// A memory-mapped input that another process truncated while xmem read it.
    #[error("{}: the file shrank while xmem read it (is it still being written?); run again once it is complete", path.display())]
    Changed { path: PathBuf },

    /// A buffer assignment whose ids or events do not add up.
    #[error("{}: module {module}: {what}", path.display())]
    Inconsistent { path: PathBuf, module: String, what: String },
}

impl Error {
    pub fn malformed(path: impl Into<PathBuf>, offset: Option<u64>, what: impl Into<String>) -> Self {
        Error::Malformed { path: path.into(), offset, what: what.into() }
    }

    pub fn unrecognised(path: impl Into<PathBuf>, what: impl Into<String>) -> Self {
        Error::Unrecognised { path: path.into(), what: what.into() }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    /// Where in the file the bytes stop decoding, when that is known.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Malformed { offset, .. } => *offset,
            _ => None,
        }
    }
}
