//! Printers: they format what analysis produced and compute nothing.

pub mod attribution;
pub mod device_memory;
pub mod diff;
pub mod html;
pub mod html_diff;
pub mod json;
pub mod list;
pub mod oom;
pub mod page_data;
pub mod pprof_export;
pub mod svg;
pub mod table;
pub mod text;
pub mod torch_snapshot;
