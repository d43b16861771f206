//! OOM log post-mortem (see issue: `xmem oom`).
