//! XProf's `XSpace` (`*.xplane.pb`): walked plane by plane on the wire, so
//! planes and lines a command does not need are skipped by their length
//! prefix and never decoded.
//!
//! Wire order matters: a plane's lines (field 3) come before its event and
//! stat metadata (fields 4 and 5), so a plane is first split into slices of
//! the file and only then are its lines read, knowing what their events are.

use std::collections::HashMap;
use std::path::Path;

use bytes::Bytes;
use prost::Message;

use super::allocator_events::{self, HostAllocators};
use super::progress::Progress;
use super::proto::xplane::{x_stat, XEventMetadata, XStatMetadata};
use super::wire::{Walker, WireError};
use crate::error::{Error, Result};
use crate::model::Allocator;

/// The plane where XProf's profilers store one HloProto per compiled module.
pub const METADATA_PLANE: &str = "/host:metadata";
const HLO_PROTO_STAT: &str = "Hlo Proto";
const PROGRAM_ID_STAT: &str = "program_id";

/// An HloProto found in the metadata plane, not yet decoded.
pub struct EmbeddedHlo {
    /// The event-metadata name, e.g. `jit_step(22)`.
    pub name: String,
    /// As XProf takes it: the `program_id` stat (the program fingerprint on
    /// TPU), else the event metadata's id, which JAX on TPU sets to the
    /// fingerprint and others to `HloModuleProto.id`.
    pub program_id: u64,
    pub bytes: Bytes,
}

/// What an xplane holds, found without decoding the planes that hold nothing
/// xmem needs.
pub struct XSpaceContents {
    pub hostnames: Vec<String>,
    pub plane_names: Vec<String>,
    pub hlo_protos: Vec<EmbeddedHlo>,
    /// The host the file is about: its name without `.xplane.pb`.
    pub host: String,
    pub allocators: Vec<Allocator>,
}

pub fn wire_error(path: &Path, e: WireError) -> Error {
    Error::malformed(path, Some(e.offset), format!("XSpace: {}", e.what))
}

/// A plane's top-level parts, as zero-copy slices of the file.
pub struct PlaneParts<'f> {
    pub name: String,
    pub lines: Vec<&'f [u8]>,
    pub event_metadata: Vec<&'f [u8]>,
    pub stat_metadata: Vec<&'f [u8]>,
    pub stats: Vec<&'f [u8]>,
}

fn split_plane<'f>(path: &Path, walker: Walker<'f>, plane: &'f [u8]) -> Result<PlaneParts<'f>> {
    let mut parts = PlaneParts {
        name: String::new(),
        lines: Vec::new(),
        event_metadata: Vec::new(),
        stat_metadata: Vec::new(),
        stats: Vec::new(),
    };
    for field in walker.fields(plane) {
        let field = field.map_err(|e| wire_error(path, e))?;
        match (field.number, field.as_bytes()) {
            (2, Some(name)) => parts.name = String::from_utf8_lossy(name).into_owned(),
            (3, Some(line)) => parts.lines.push(line),
            (4, Some(entry)) => parts.event_metadata.push(entry),
            (5, Some(entry)) => parts.stat_metadata.push(entry),
            (6, Some(stat)) => parts.stats.push(stat),
            _ => {}
        }
    }
    Ok(parts)
}

/// `vm` for `.../vm.xplane.pb` (or `.xplane.pb.gz`, `.xspace.pb`): XProf names
/// each host's file after the host.
pub fn host_name(path: &Path) -> String {
    let file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    [".xplane.pb.gz", ".xplane.pb", ".xspace.pb"]
        .iter()
        .find_map(|suffix| file.strip_suffix(suffix))
        .map(str::to_string)
        .unwrap_or(file)
}

/// A `map<int64, M>` entry: its key (field 1) and its value (field 2).
pub fn map_entry<'f>(path: &Path, walker: Walker<'f>, entry: &'f [u8]) -> Result<(i64, Option<&'f [u8]>)> {
    let mut key = 0;
    let mut value = None;
    for field in walker.fields(entry) {
        let field = field.map_err(|e| wire_error(path, e))?;
        match field.number {
            1 => key = field.as_u64().unwrap_or(0) as i64,
            2 => value = field.as_bytes(),
            _ => {}
        }
    }
    Ok((key, value))
}

pub fn read(path: &Path, bytes: &Bytes, progress: &Progress) -> Result<XSpaceContents> {
    let host = host_name(path);
    let mut allocators = HostAllocators::new(host.clone());
    let mut contents = XSpaceContents {
        hostnames: Vec::new(),
        plane_names: Vec::new(),
        hlo_protos: Vec::new(),
        host,
        allocators: Vec::new(),
    };
    let walker = Walker::new(bytes, 0);
    progress.start(&format!("reading {}", path.display()), bytes.len() as u64);
    for field in walker.fields(bytes) {
        let field = field.map_err(|e| wire_error(path, e))?;
        match (field.number, field.as_bytes()) {
            (1, Some(plane)) => {
                progress.advance(plane.len() as u64);
                let parts = split_plane(path, walker, plane)?;
                if parts.name == METADATA_PLANE {
                    read_metadata_plane(path, bytes, &parts, &mut contents.hlo_protos)?;
                } else {
                    allocator_events::read_plane(path, walker, &parts, &mut allocators)?;
                }
                contents.plane_names.push(parts.name);
            }
            (4, Some(host)) => contents.hostnames.push(String::from_utf8_lossy(host).into_owned()),
            (1 | 4, None) => {
                return Err(Error::malformed(path, Some(field.offset), "XSpace: field has the wrong wire type"))
            }
            _ => {}
        }
    }
    contents.allocators = allocators.finish();
    Ok(contents)
}

/// `whole` is the file as `Bytes`, so the embedded HloProtos are decoded as
/// zero-copy slices of it rather than copies.
fn read_metadata_plane(path: &Path, whole: &Bytes, plane: &PlaneParts, out: &mut Vec<EmbeddedHlo>) -> Result<()> {
    let walker = Walker::new(whole, 0);
    let mut stat_names: HashMap<i64, String> = HashMap::new();
    for entry in &plane.stat_metadata {
        let (_, Some(value)) = map_entry(path, walker, entry)? else { continue };
        let offset = walker.offset(value);
        let stat = XStatMetadata::decode(value)
            .map_err(|e| Error::malformed(path, Some(offset), format!("XStatMetadata: {e}")))?;
        stat_names.insert(stat.id, stat.name);
    }
    for entry in &plane.event_metadata {
        let (_, Some(value)) = map_entry(path, walker, entry)? else { continue };
        let offset = walker.offset(value);
        let event = XEventMetadata::decode(whole.slice_ref(value))
            .map_err(|e| Error::malformed(path, Some(offset), format!("XEventMetadata: {e}")))?;
        let mut hlo = None;
        // XProf reads an int64 id as the uint64 of the same bits (fingerprints use all 64).
        let mut program_id = event.id as u64;
        for stat in event.stats {
            match (stat_names.get(&stat.metadata_id).map(String::as_str), stat.value) {
                (Some(HLO_PROTO_STAT), Some(x_stat::Value::BytesValue(b))) => hlo = Some(b),
                (Some(PROGRAM_ID_STAT), Some(x_stat::Value::Uint64Value(id))) => program_id = id,
                (Some(PROGRAM_ID_STAT), Some(x_stat::Value::Int64Value(id))) => program_id = id as u64,
                _ => {}
            }
        }
        if let Some(bytes) = hlo {
            out.push(EmbeddedHlo { name: event.name, program_id, bytes });
        }
    }
    Ok(())
}
