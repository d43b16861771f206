//! The files a glob pattern names (`xmem oom 'logs/**/*.log'`), found by a
//! walk that visits each directory and each file once, by device and inode:
//! a symbolic link back to a directory above (`loop -> ..`) or to one seen
//! already is not followed again, so a cycle ends and a file reached by two
//! paths is listed once. The glob crate's own walk follows such links until
//! the path is too long, listing a file once per turn of the cycle.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use glob::{MatchOptions, Pattern};

use super::source::special_kind;

/// What a pattern matched: regular files in walk order (each directory's
/// entries by name), and what was passed over, one line each.
#[derive(Debug, Default)]
pub struct Matches {
    pub files: Vec<PathBuf>,
    pub skipped: Vec<String>,
}

/// The files `pattern` matches. A FIFO, a device or a socket that matches is
/// skipped with a line in [`Matches::skipped`]: reading it could block or never end.
pub fn matching_files(pattern: &str) -> Result<Matches, glob::PatternError> {
    let compiled = Pattern::new(pattern)?;
    let (base, rest) = split_literal_prefix(pattern);
    // Without `**`, a match is as many levels below the base as the pattern has components.
    let depth = if rest.split('/').any(|c| c.contains("**")) { usize::MAX } else { rest.split('/').count() };
    let mut walk = Walk {
        pattern: compiled,
        options: MatchOptions { require_literal_separator: true, ..MatchOptions::new() },
        seen: HashSet::new(),
        matches: Matches::default(),
    };
    let start = if base.as_os_str().is_empty() { Path::new(".") } else { base.as_path() };
    if let Ok(metadata) = std::fs::metadata(start) {
        if metadata.is_dir() {
            walk.seen.insert((metadata.dev(), metadata.ino()));
            walk.directory(&base, depth);
        }
    }
    Ok(walk.matches)
}

/// The leading components of `pattern` without a wildcard, as a path, and
/// the rest of the pattern.
fn split_literal_prefix(pattern: &str) -> (PathBuf, &str) {
    let mut base = PathBuf::new();
    let mut rest = pattern;
    for component in Path::new(pattern).components() {
        let text = component.as_os_str().to_string_lossy();
        if text.contains(['*', '?', '[']) {
            break;
        }
        base.push(component);
        rest = rest.trim_start_matches('/');
        if let Component::Normal(_) | Component::CurDir | Component::ParentDir = component {
            rest = rest.strip_prefix(&*text).unwrap_or(rest);
        }
    }
    (base, rest.trim_start_matches('/'))
}

struct Walk {
    pattern: Pattern,
    options: MatchOptions,
    /// Directories and files visited, by (device, inode).
    seen: HashSet<(u64, u64)>,
    matches: Matches,
}

impl Walk {
    /// Visits the entries of `dir` (`""` for the working directory), `depth` levels down at most.
    fn directory(&mut self, dir: &Path, depth: usize) {
        if depth == 0 {
            return;
        }
        let reading = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        let Ok(entries) = std::fs::read_dir(reading) else { return };
        let mut names: Vec<_> = entries.filter_map(|entry| entry.ok().map(|e| e.file_name())).collect();
        names.sort();
        for name in names {
            let path = dir.join(&name);
            // Through symbolic links: what a link names is visited once, like anything else.
            let metadata = match std::fs::metadata(&path) {
                Ok(metadata) => metadata,
                Err(e) => {
                    if self.pattern.matches_path_with(&path, self.options) {
                        self.matches.skipped.push(format!("{}: {e}", path.display()));
                    }
                    continue;
                }
            };
            if !self.seen.insert((metadata.dev(), metadata.ino())) {
                continue;
            }
            if metadata.is_dir() {
                self.directory(&path, depth - 1);
            } else if self.pattern.matches_path_with(&path, self.options) {
                match special_kind(&metadata.file_type()) {
                    Some(kind) => {
                        self.matches.skipped.push(format!("{}: is {kind}, not a regular file", path.display()))
                    }
                    None => self.matches.files.push(path),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_literal_prefix_is_where_the_walk_starts() {
        assert_eq!(split_literal_prefix("logs/**/*.log"), (PathBuf::from("logs"), "**/*.log"));
        assert_eq!(split_literal_prefix("*.log"), (PathBuf::new(), "*.log"));
        assert_eq!(split_literal_prefix("/var/log/job-*/err.txt"), (PathBuf::from("/var/log"), "job-*/err.txt"));
        assert_eq!(split_literal_prefix("a/b[0-9]/c"), (PathBuf::from("a"), "b[0-9]/c"));
    }
}
