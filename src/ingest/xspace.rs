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
use super::proto::xplane::{x_stat, XEventMetadata, XStat, XStatMetadata};
use super::wire::{self, Walker, WireError};
use super::{guess_file, FileKind};
use crate::error::{Error, Result};
use crate::model::{Allocator, Device};

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
    /// The device planes that say how much memory their device has.
    pub devices: Vec<Device>,
    /// Where the file is damaged, if it is: what was complete is still read.
    pub damage: Option<Damage>,
}

/// The first damaged part of a file (a plane cut short, a metadata entry
/// that does not decode), and how many more there were. Everything complete
/// around them is kept.
#[derive(Debug)]
pub struct Damage {
    pub first: Error,
    pub further: usize,
}

fn record(damage: &mut Option<Damage>, error: Error) {
    match damage {
        Some(damage) => damage.further += 1,
        None => *damage = Some(Damage { first: error, further: 0 }),
    }
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

/// Splits a plane into its parts, up to the first that does not decode (a
/// plane cut short): the parts before it, and the error.
fn split_plane<'f>(walker: Walker<'f>, plane: &'f [u8]) -> (PlaneParts<'f>, Option<WireError>) {
    let mut parts = PlaneParts {
        name: String::new(),
        lines: Vec::new(),
        event_metadata: Vec::new(),
        stat_metadata: Vec::new(),
        stats: Vec::new(),
    };
    for field in walker.fields(plane) {
        let field = match field {
            Ok(field) => field,
            Err(e) => return (parts, Some(e)),
        };
        match (field.number, field.as_bytes()) {
            (2, Some(name)) => parts.name = String::from_utf8_lossy(name).into_owned(),
            (3, Some(line)) => parts.lines.push(line),
            (4, Some(entry)) => parts.event_metadata.push(entry),
            (5, Some(entry)) => parts.stat_metadata.push(entry),
            (6, Some(stat)) => parts.stats.push(stat),
            _ => {}
        }
    }
    (parts, None)
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

/// Reads every plane of an XSpace. A damaged file (cut short, or with a
/// part that does not decode) is read up to its damage: every complete
/// plane, and of a metadata plane every complete module, is kept, and
/// [`XSpaceContents::damage`] says where the damage starts; with no module
/// or allocator whole, the damage is the error.
pub fn read(path: &Path, bytes: &Bytes, progress: &Progress) -> Result<XSpaceContents> {
    let host = host_name(path);
    let mut allocators = HostAllocators::new(host.clone());
    let mut contents = XSpaceContents {
        hostnames: Vec::new(),
        plane_names: Vec::new(),
        hlo_protos: Vec::new(),
        host,
        allocators: Vec::new(),
        devices: Vec::new(),
        damage: None,
    };
    let walker = Walker::new(bytes, 0);
    // Planes that may name the programs of the host's runs (its devices').
    let mut other_planes = Vec::new();
    progress.start(&format!("reading {}", path.display()), bytes.len() as u64);
    for field in walker.fields(bytes) {
        let field = match field {
            Ok(field) => field,
            Err(e) => {
                // Nothing after the first broken field can be trusted; a
                // plane cut short still has its complete parts read.
                let cut_plane = usize::try_from(e.field_start).ok().and_then(|at| wire::cut_short_field(bytes, at));
                match cut_plane {
                    Some((1, plane)) => {
                        let cut = Some(e.what.as_str());
                        read_plane(path, bytes, walker, plane, cut, &mut contents, &mut allocators);
                    }
                    _ => record(&mut contents.damage, wire_error(path, e)),
                }
                break;
            }
        };
        match (field.number, field.as_bytes()) {
            (1, Some(plane)) => {
                progress.advance(plane.len() as u64);
                other_planes.extend(read_plane(path, bytes, walker, plane, None, &mut contents, &mut allocators));
            }
            (4, Some(host)) => contents.hostnames.push(String::from_utf8_lossy(host).into_owned()),
            (1 | 4, None) => {
                return Err(Error::malformed(path, Some(field.offset), "XSpace: field has the wrong wire type"))
            }
            _ => {}
        }
    }
    if allocators.needs_program_ids() {
        for plane in &other_planes {
            if let Err(e) = allocator_events::read_program_ids(path, walker, plane, &mut allocators) {
                record(&mut contents.damage, e);
            }
        }
    }
    contents.allocators = allocators.finish();
    match contents.damage.take() {
        // Damaged with nothing whole to show: the damage is the error.
        Some(damage) if contents.hlo_protos.is_empty() && contents.allocators.is_empty() => Err(damage.first),
        damage => {
            contents.damage = damage;
            Ok(contents)
        }
    }
}

/// One plane; `cut_short` says how, when the file ends inside it. Its
/// damage goes to `contents.damage`, named by the first part that is not
/// whole, and the rest of the file is still read. Returns the plane's parts
/// when it is whole and not the metadata plane: it may name programs.
fn read_plane<'f>(
    path: &'f Path,
    whole: &'f Bytes,
    walker: Walker<'f>,
    plane: &'f [u8],
    cut_short: Option<&str>,
    contents: &mut XSpaceContents,
    allocators: &mut HostAllocators,
) -> Option<PlaneParts<'f>> {
    let (parts, error) = split_plane(walker, plane);
    let cut = match (error, cut_short) {
        (Some(e), Some(how)) => Some(Error::malformed(
            path,
            Some(e.field_start),
            format!("XSpace: plane {} ends early ({how}); its first incomplete part: {}", parts.name, e.what),
        )),
        (Some(e), None) => Some(wire_error(path, e)),
        (None, Some(how)) => Some(Error::malformed(
            path,
            Some(whole.len() as u64),
            format!("XSpace: the file ends inside plane {} ({how})", parts.name),
        )),
        (None, None) => None,
    };
    let is_cut = cut.is_some();
    if let Some(cut) = cut {
        record(&mut contents.damage, cut);
    }
    contents.plane_names.push(parts.name.clone());
    if parts.name.starts_with(DEVICE_PLANE_PREFIX) && !is_cut {
        match device(path, walker, &parts) {
            Ok(Some(device)) => {
                contents.devices.push(Device { name: format!("{}:{}", contents.host, device.name), ..device })
            }
            Ok(None) => {}
            Err(e) => record(&mut contents.damage, e),
        }
    }
    if parts.name == METADATA_PLANE {
        read_metadata_plane(path, whole, &parts, is_cut, &mut contents.hlo_protos, &mut contents.damage);
    } else if !is_cut {
        // A plane's lines come before the metadata that says what their
        // events are, so a plane cut short has nothing that can be read safely.
        let checkpoint = allocators.checkpoint();
        if let Err(e) = allocator_events::read_plane(path, walker, &parts, allocators) {
            allocators.rollback(checkpoint);
            record(&mut contents.damage, e);
        }
        return Some(parts);
    }
    None
}

/// The planes of accelerators: `/device:GPU:0`, `/device:TPU:0`.
const DEVICE_PLANE_PREFIX: &str = "/device:";

/// A device plane's memory (its `memory_size` stat) and model
/// (`gpu_device_name`, else `device_vendor`), if it states its memory.
fn device(path: &Path, walker: Walker, plane: &PlaneParts) -> Result<Option<Device>> {
    let mut names: HashMap<i64, String> = HashMap::new();
    for entry in &plane.stat_metadata {
        let (id, Some(value)) = map_entry(path, walker, entry)? else { continue };
        let metadata = XStatMetadata::decode(value)
            .map_err(|e| Error::malformed(path, Some(walker.offset(value)), format!("XStatMetadata: {e}")))?;
        names.insert(id, metadata.name);
    }
    let (mut memory_bytes, mut model, mut vendor) = (None, None, None);
    for stat in &plane.stats {
        let stat = XStat::decode(*stat)
            .map_err(|e| Error::malformed(path, Some(walker.offset(stat)), format!("XStat: {e}")))?;
        let text = |value: Option<x_stat::Value>| match value {
            Some(x_stat::Value::StrValue(text)) => Some(text),
            Some(x_stat::Value::RefValue(id)) => names.get(&(id as i64)).cloned(),
            _ => None,
        };
        match names.get(&stat.metadata_id).map(String::as_str) {
            Some("memory_size") => {
                memory_bytes = match stat.value {
                    Some(x_stat::Value::Uint64Value(bytes)) => i64::try_from(bytes).ok(),
                    Some(x_stat::Value::Int64Value(bytes)) => Some(bytes),
                    _ => None,
                }
            }
            Some("gpu_device_name") => model = text(stat.value),
            Some("device_vendor") => vendor = text(stat.value),
            _ => {}
        }
    }
    Ok(memory_bytes.filter(|&bytes| bytes > 0).map(|memory_bytes| Device {
        name: plane.name.clone(),
        model: model.or(vendor),
        memory_bytes,
    }))
}

/// `whole` is the file as `Bytes`, so the embedded HloProtos are decoded as
/// zero-copy slices of it rather than copies. An entry that does not decode
/// is recorded as damage and skipped: one broken module loses only itself.
/// In a plane `cut_short`, the stat metadata that names the `Hlo Proto` and
/// `program_id` stats (stored after the modules) may be missing; a bytes
/// stat that holds an HloProto is then taken for the first, and the id in
/// the module's metadata name for the second.
fn read_metadata_plane(
    path: &Path,
    whole: &Bytes,
    plane: &PlaneParts,
    cut_short: bool,
    out: &mut Vec<EmbeddedHlo>,
    damage: &mut Option<Damage>,
) {
    let walker = Walker::new(whole, 0);
    let mut stat_names: HashMap<i64, String> = HashMap::new();
    for entry in &plane.stat_metadata {
        let decoded = map_entry(path, walker, entry).and_then(|(_, value)| {
            value
                .map(|value| {
                    XStatMetadata::decode(value)
                        .map_err(|e| Error::malformed(path, Some(walker.offset(value)), format!("XStatMetadata: {e}")))
                })
                .transpose()
        });
        match decoded {
            Ok(Some(stat)) => {
                stat_names.insert(stat.id, stat.name);
            }
            Ok(None) => {}
            Err(e) => record(damage, e),
        }
    }
    for entry in &plane.event_metadata {
        let decoded = map_entry(path, walker, entry).and_then(|(_, value)| {
            value
                .map(|value| {
                    XEventMetadata::decode(whole.slice_ref(value))
                        .map_err(|e| Error::malformed(path, Some(walker.offset(value)), format!("XEventMetadata: {e}")))
                })
                .transpose()
        });
        let event = match decoded {
            Ok(Some(event)) => event,
            Ok(None) => continue,
            Err(e) => {
                record(damage, e);
                continue;
            }
        };
        let mut hlo = None;
        // XProf reads an int64 id as the uint64 of the same bits (fingerprints use all 64).
        let mut program_id = event.id as u64;
        let mut program_id_stat = false;
        for stat in event.stats {
            match (stat_names.get(&stat.metadata_id).map(String::as_str), stat.value) {
                (Some(HLO_PROTO_STAT), Some(x_stat::Value::BytesValue(b))) => hlo = Some(b),
                (None, Some(x_stat::Value::BytesValue(b)))
                    if cut_short && matches!(guess_file(path, &b), Ok(FileKind::HloProto)) =>
                {
                    hlo = Some(b)
                }
                (Some(PROGRAM_ID_STAT), Some(x_stat::Value::Uint64Value(id))) => {
                    (program_id, program_id_stat) = (id, true)
                }
                (Some(PROGRAM_ID_STAT), Some(x_stat::Value::Int64Value(id))) => {
                    (program_id, program_id_stat) = (id as u64, true)
                }
                _ => {}
            }
        }
        if cut_short && !program_id_stat {
            program_id = program_id_in_name(&event.name).unwrap_or(program_id);
        }
        if let Some(bytes) = hlo {
            out.push(EmbeddedHlo { name: event.name, program_id, bytes });
        }
    }
}

/// `22` for `jit_step(22)`: XProf names each module's metadata after the
/// module and its program id, which stands in for a `program_id` stat whose
/// metadata was cut off.
fn program_id_in_name(name: &str) -> Option<u64> {
    name.strip_suffix(')')?.rsplit_once('(')?.1.parse().ok()
}
