//! JSON: the analysis structs serialised as they are.

use std::io::Write;

use serde::Serialize;

pub fn write<T: Serialize>(out: &mut dyn Write, value: &T) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}
