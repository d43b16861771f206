//! Comparing two analyses (see issue: `xmem diff`).
