//! Where the tests find real inputs.

use std::path::{Path, PathBuf};

/// The whole shared corpus, when this checkout has it beside it
/// (`../shared/corpus/profiles`) or `XMEM_CORPUS` names it; the tests that
/// use it are skipped otherwise.
pub fn shared_corpus() -> Option<PathBuf> {
    let root = std::env::var_os("XMEM_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/profiles"));
    if root.is_dir() {
        return Some(root);
    }
    eprintln!("skipped: no shared corpus at {}", root.display());
    None
}
