//! Getting a file's bytes: memory-mapped when plain, decompressed as a stream
//! with a ceiling when gzip, so a gzip bomb stops with an error instead of
//! filling memory.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use bytes::Bytes;
use flate2::read::MultiGzDecoder;

use super::mapped;
use super::progress::Progress;
use crate::error::{Error, Result};

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The ceiling on one file's decompressed bytes when none is given: a
/// quarter of the memory this process can have (what `/proc/meminfo` calls
/// available, or the address-space limit of `ulimit -v` if lower), between
/// 256 MiB and 16 GiB. A file is held whole once decompressed and its
/// analysis needs more again, so a quarter leaves room for both; a fixed
/// 16 GiB let a 6 MB gzip bomb take all memory and die.
pub fn default_max_input_size() -> u64 {
    const FALLBACK: u64 = 4 << 30;
    let available = memory_available().unwrap_or(FALLBACK);
    let address_space = address_space_limit().unwrap_or(u64::MAX);
    (available.min(address_space) / 4).clamp(256 << 20, 16 << 30)
}

/// `MemAvailable` from /proc/meminfo, in bytes (Linux only).
fn memory_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// The soft `Max address space` limit from /proc/self/limits, in bytes.
fn address_space_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find_map(|l| l.strip_prefix("Max address space"))?;
    line.split_whitespace().next()?.parse().ok()
}

/// A file's content, decompressed if it was gzip.
pub struct Contents {
    pub bytes: Bytes,
    pub was_gzip: bool,
    /// A gzip stream that ends early or turns corrupt: `bytes` holds what
    /// decompressed before it, which may still be worth reading.
    pub cut_short: Option<Error>,
}

pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&GZIP_MAGIC)
}

/// Reads `path`, memory-mapping it, and gunzips it when it starts with the
/// gzip magic. `limit` caps the decompressed size. What is not a regular
/// file with a size (a FIFO, a device such as `/dev/zero`, process
/// substitution `<(cat FILE)`, a file of `/proc`) is read as a stream, its
/// bytes counted against `limit` as they come.
pub fn read(path: &Path, limit: u64, progress: &Progress) -> Result<Contents> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let metadata = file.metadata().map_err(|e| Error::io(path, e))?;
    if metadata.is_dir() {
        return Err(Error::unrecognised(path, "is a directory, expected a file"));
    }
    if !metadata.is_file() || metadata.len() == 0 {
        return read_whole(path, file, limit);
    }
    if metadata.len() > limit {
        return Err(Error::TooLarge { path: path.to_path_buf(), limit });
    }
    // Mapped, not copied; a file that shrinks while it is read is caught
    // (mapped.rs) and named by `unchanged`.
    let raw = match mapped::map(&file, path).map_err(|e| Error::io(path, e))? {
        Some(map) => Bytes::from_owner(map),
        None => return read_whole(path, file, limit),
    };
    if is_gzip(&raw) {
        progress.start(&format!("decompressing {}", path.display()), raw.len() as u64);
        let (bytes, cut_short) = gunzip(path, progress.reader(&raw[..]), &raw, limit)?;
        Ok(Contents { bytes, was_gzip: true, cut_short })
    } else {
        Ok(Contents { bytes: raw, was_gzip: false, cut_short: None })
    }
}

/// An error naming the first input that shrank while xmem read it (whatever
/// was read from it past its new end is zeros, not the file), if any did.
/// Commands check it before they print what they read.
pub fn unchanged() -> Result<()> {
    match mapped::take_shrunk().into_iter().next() {
        Some(path) => Err(Error::Changed { path }),
        None => Ok(()),
    }
}

/// Opens `path` as a stream, gunzipped on the fly when it starts with the
/// gzip magic. For inputs read once from front to back (logs): however large
/// the file, only the reader's buffer is in memory. `limit` caps the bytes delivered.
pub fn open(path: &Path, limit: u64, progress: &Progress) -> Result<Box<dyn BufRead>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let metadata = file.metadata().map_err(|e| Error::io(path, e))?;
    if metadata.is_dir() {
        return Err(Error::unrecognised(path, "is a directory, expected a file"));
    }
    progress.start(&format!("reading {}", path.display()), metadata.len());
    let mut reader = BufReader::with_capacity(STREAM_BUFFER_BYTES, progress.reader(file));
    if is_gzip(reader.fill_buf().map_err(|e| Error::io(path, e))?) {
        return Ok(gunzip_stream(reader, limit));
    }
    if metadata.len() > limit {
        return Err(Error::TooLarge { path: path.to_path_buf(), limit });
    }
    // A file that grows while it is read, a FIFO or a device has no size to
    // check first: its bytes are counted as they come.
    Ok(Box::new(BufReader::with_capacity(STREAM_BUFFER_BYTES, Capped { inner: reader, delivered: 0, limit })))
}

/// Standard input as a stream (for `xmem oom -`), gunzipped on the fly when
/// it starts with the gzip magic: only the reader's buffer is in memory,
/// whatever comes through the pipe. `limit` caps the bytes delivered.
pub fn open_stdin(limit: u64) -> Result<Box<dyn BufRead>> {
    let mut reader = BufReader::with_capacity(STREAM_BUFFER_BYTES, io::stdin());
    if is_gzip(reader.fill_buf().map_err(|e| Error::io("<stdin>", e))?) {
        return Ok(gunzip_stream(reader, limit));
    }
    Ok(Box::new(BufReader::with_capacity(STREAM_BUFFER_BYTES, Capped { inner: reader, delivered: 0, limit })))
}

fn gunzip_stream(compressed: impl BufRead + 'static, limit: u64) -> Box<dyn BufRead> {
    let decoder = Capped { inner: MultiGzDecoder::new(compressed), delivered: 0, limit };
    Box::new(BufReader::with_capacity(STREAM_BUFFER_BYTES, decoder))
}

const STREAM_BUFFER_BYTES: usize = 1 << 16;

/// A reader that fails once it has delivered more than `limit` bytes, so a
/// gzip bomb read as a stream stops with an error.
struct Capped<R> {
    inner: R,
    delivered: u64,
    limit: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.delivered = self.delivered.saturating_add(n as u64);
        if self.delivered > self.limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "input exceeds the limit of {} bytes: limit reached, use --max-input-size to raise it",
                    self.limit
                ),
            ));
        }
        Ok(n)
    }
}

/// [`read`] for a file found in a directory: what is not a regular file
/// (a FIFO named like a profile would block the read forever, a device
/// would never end) is refused with an error that says what it is, for the
/// caller to skip with a warning.
pub fn read_regular(path: &Path, limit: u64, progress: &Progress) -> Result<Contents> {
    let metadata = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    match special_kind(&metadata.file_type()) {
        Some(kind) => Err(Error::unrecognised(path, format!("is {kind}, not a regular file"))),
        None => read(path, limit, progress),
    }
}

/// What a file that is not a regular file or a directory is, in words.
pub fn special_kind(file_type: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_file() || file_type.is_dir() {
        None
    } else if file_type.is_fifo() {
        Some("a FIFO")
    } else if file_type.is_char_device() {
        Some("a character device")
    } else if file_type.is_block_device() {
        Some("a block device")
    } else if file_type.is_socket() {
        Some("a socket")
    } else {
        Some("not a file")
    }
}

/// Reads all of standard input (an input given as `-`), with the same
/// ceiling and, like a file, keeping what a gzip stream cut short gave.
pub fn read_stdin(limit: u64) -> Result<Contents> {
    read_whole(Path::new("<stdin>"), std::io::stdin().lock(), limit)
}

/// Reads all of a stream (standard input, a FIFO, a device), failing once it
/// gives more than `limit` bytes, and gunzips it when it starts with the magic.
fn read_whole(path: &Path, stream: impl Read, limit: u64) -> Result<Contents> {
    let mut buf = Vec::new();
    stream.take(limit.saturating_add(1)).read_to_end(&mut buf).map_err(|e| Error::io(path, e))?;
    if buf.len() as u64 > limit {
        return Err(Error::TooLarge { path: path.to_path_buf(), limit });
    }
    let bytes = Bytes::from(buf);
    if !is_gzip(&bytes) {
        return Ok(Contents { bytes, was_gzip: false, cut_short: None });
    }
    let (bytes, cut_short) = gunzip(path, &bytes[..], &bytes, limit)?;
    Ok(Contents { bytes, was_gzip: true, cut_short })
}

/// Decompresses `input` (the `compressed` bytes, possibly behind a reader
/// that reports progress). A stream that ends early or turns corrupt after
/// some output returns that output and the error.
fn gunzip(path: &Path, input: impl Read, compressed: &[u8], limit: u64) -> Result<(Bytes, Option<Error>)> {
    // The trailer's ISIZE (size mod 2^32) is only a hint; it is capped by
    // what deflate can expand the input to (1032:1) so a forged trailer
    // cannot size a huge allocation.
    let hint = compressed
        .len()
        .checked_sub(4)
        .and_then(|at| compressed.get(at..))
        .and_then(|tail| <[u8; 4]>::try_from(tail).ok())
        .map(|tail| u64::from(u32::from_le_bytes(tail)))
        .unwrap_or(0)
        .min(limit)
        .min((compressed.len() as u64).saturating_mul(1032))
        .min(1 << 30);
    let mut out = Vec::with_capacity(usize::try_from(hint).unwrap_or(0));
    let mut decoder = MultiGzDecoder::new(input).take(limit.saturating_add(1));
    let cut_short = match decoder.read_to_end(&mut out) {
        Err(e) if e.kind() == io::ErrorKind::OutOfMemory => {
            return Err(Error::OutOfMemory { path: path.to_path_buf(), decompressed: out.len() as u64 })
        }
        Err(e) if out.is_empty() => return Err(Error::malformed(path, None, format!("gzip stream is corrupt: {e}"))),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Some(Error::malformed(
            path,
            Some(compressed.len() as u64),
            format!("gzip stream ends early, after {} bytes decompressed", out.len()),
        )),
        Err(e) => Some(Error::malformed(
            path,
            None,
            format!("gzip stream is corrupt after {} bytes decompressed: {e}", out.len()),
        )),
        Ok(_) => None,
    };
    if out.len() as u64 > limit {
        return Err(Error::TooLarge { path: path.to_path_buf(), limit });
    }
    Ok((Bytes::from(out), cut_short))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{write::GzEncoder, Compression};
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn a_file_truncated_while_it_is_read_reads_zeros_and_is_named_not_a_signal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shrinking.xplane.pb");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let contents = read(&path, 1 << 30, &Progress::default()).unwrap();
        assert!(unchanged().is_ok());
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(4096).unwrap();
        // Past the new end, a read faulted with SIGBUS and ended the process.
        let sum: u64 = contents.bytes.iter().map(|&b| u64::from(b)).sum();
        assert_eq!(sum, 7 * 4096, "the part still in the file as it was, zeros past it");
        let err = unchanged().unwrap_err();
        assert!(matches!(&err, Error::Changed { path: p } if *p == path), "{err}");
        assert!(err.to_string().contains("shrinking.xplane.pb: the file shrank while xmem read it"), "{err}");
        assert!(unchanged().is_ok(), "named once");
        drop(contents);
    }

    #[test]
    fn special_files_are_read_as_streams_with_the_limit() {
        let zeros = read(Path::new("/dev/zero"), 1 << 20, &Progress::default()).err().unwrap();
        assert!(matches!(zeros, Error::TooLarge { limit, .. } if limit == 1 << 20), "{zeros}");
        let refused = read_regular(Path::new("/dev/zero"), 1 << 20, &Progress::default()).err().unwrap();
        assert_eq!(refused.to_string(), "/dev/zero: is a character device, not a regular file");
        let endless = open(Path::new("/dev/zero"), 1 << 20, &Progress::default()).unwrap();
        let err = endless.bytes().find_map(|b| b.err()).unwrap();
        assert!(err.to_string().contains("exceeds the limit of 1048576 bytes"), "{err}");
    }

    #[test]
    fn gzip_is_decompressed_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bomb.gz");
        std::fs::write(&path, gz(&vec![0u8; 1 << 20])).unwrap();
        let ok = read(&path, 2 << 20, &Progress::default()).unwrap();
        assert!(ok.was_gzip);
        assert_eq!(ok.bytes.len(), 1 << 20);
        let err = read(&path, 1000, &Progress::default()).err().unwrap();
        assert!(matches!(err, Error::TooLarge { limit: 1000, .. }), "{err}");
    }

    #[test]
    fn streams_are_gunzipped_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.log.gz");
        std::fs::write(&path, gz(&vec![b'x'; 1 << 20])).unwrap();
        let mut text = Vec::new();
        open(&path, 2 << 20, &Progress::default()).unwrap().read_to_end(&mut text).unwrap();
        assert_eq!(text.len(), 1 << 20);
        let err = open(&path, 1000, &Progress::default()).unwrap().read_to_end(&mut Vec::new()).err().unwrap();
        assert!(err.to_string().contains("exceeds the limit of 1000 bytes"), "{err}");
    }

    #[test]
    fn gzip_with_nothing_decompressed_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broken.gz");
        let mut data = gz(b"hello world, hello world");
        data.truncate(10); // the header alone
        std::fs::write(&path, data).unwrap();
        let err = read(&path, 1 << 20, &Progress::default()).err().unwrap().to_string();
        assert!(err.contains("broken.gz") && err.contains("gzip"), "{err}");
    }

    #[test]
    fn gzip_cut_short_keeps_what_it_decompressed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.gz");
        let text: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_string().into_bytes()).collect();
        let mut data = gz(&text);
        data.truncate(data.len() / 2);
        let cut_at = data.len();
        std::fs::write(&path, data).unwrap();
        let contents = read(&path, 1 << 30, &Progress::default()).unwrap();
        assert!(!contents.bytes.is_empty() && text.starts_with(&contents.bytes));
        let cut = contents.cut_short.unwrap().to_string();
        assert!(cut.contains("cut.gz") && cut.contains(&format!("at byte {cut_at}: gzip stream ends early")), "{cut}");
    }
}
