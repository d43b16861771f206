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
use super::wire::{self, Field, Fields, Walker, WireError};
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
    /// Host planes whose allocator events were lost to damage, wholly or in
    /// part: a profile without allocators may have had some there.
    pub damaged_allocator_planes: Vec<String>,
}

/// The first damaged part of a file (a plane cut short, a metadata entry
/// that does not decode), how many more there were, and what they cost.
/// Everything complete around them is kept.
#[derive(Debug)]
pub struct Damage {
    pub first: Error,
    pub further: usize,
    /// What could not be read because of the damage, one phrase each (the
    /// module entries lost, the allocator events of a plane after its damage).
    pub lost: Vec<String>,
}

fn record(damage: &mut Option<Damage>, error: Error) {
    match damage {
        Some(damage) => damage.further += 1,
        None => *damage = Some(Damage { first: error, further: 0, lost: Vec::new() }),
    }
}

impl Damage {
    /// The damage as the error of a file with nothing whole to show: where
    /// it starts, and what it cost.
    fn into_error(self) -> Error {
        match self.first {
            Error::Malformed { path, offset, what } if !self.lost.is_empty() => {
                Error::Malformed { path, offset, what: format!("{what}; lost {}", self.lost.join("; ")) }
            }
            first => first,
        }
    }
}

/// Adds what the recorded damage cost.
fn lose(damage: &mut Option<Damage>, what: String) {
    if let Some(damage) = damage {
        damage.lost.push(what);
    }
}

pub fn wire_error(path: &Path, e: WireError) -> Error {
    Error::malformed(path, Some(e.offset), format!("XSpace: {}", e.what))
}

/// A plane's top-level parts, as zero-copy slices of the file.
#[derive(Default)]
pub struct PlaneParts<'f> {
    pub name: String,
    pub lines: Vec<&'f [u8]>,
    pub event_metadata: Vec<&'f [u8]>,
    pub stat_metadata: Vec<&'f [u8]>,
    pub stats: Vec<&'f [u8]>,
}

impl<'f> PlaneParts<'f> {
    /// Files one of the plane's fields where it belongs.
    fn add(&mut self, field: &Field<'f>) {
        match (field.number, field.as_bytes()) {
            (2, Some(name)) => self.name = String::from_utf8_lossy(name).into_owned(),
            (3, Some(line)) => self.lines.push(line),
            (4, Some(entry)) => self.event_metadata.push(entry),
            (5, Some(entry)) => self.stat_metadata.push(entry),
            (6, Some(stat)) => self.stats.push(stat),
            _ => {}
        }
    }
}

/// Splits a plane into its parts, up to the first that does not decode (a
/// plane cut short): the parts before it, and the error.
fn split_plane<'f>(walker: Walker<'f>, plane: &'f [u8]) -> (PlaneParts<'f>, Option<WireError>) {
    let mut parts = PlaneParts::default();
    for field in walker.fields(plane) {
        let field = match field {
            Ok(field) => field,
            Err(e) => return (parts, Some(e)),
        };
        parts.add(&field);
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

/// A `map<int64, M>` entry: its key (field 1) and its value (field 2). Any
/// other field means the entry's length is wrong (it swallowed what follows
/// it), so the entry is refused rather than read with the rest ignored.
pub fn map_entry<'f>(path: &Path, walker: Walker<'f>, entry: &'f [u8]) -> Result<(i64, Option<&'f [u8]>)> {
    let mut key = 0;
    let mut value = None;
    for field in walker.fields(entry) {
        let field = field.map_err(|e| wire_error(path, e))?;
        match (field.number, field.as_u64(), field.as_bytes()) {
            (1, Some(k), _) => key = k as i64,
            (2, _, Some(v)) => value = Some(v),
            _ => {
                return Err(Error::malformed(
                    path,
                    Some(field.offset),
                    format!("XSpace: a map entry holds field {}: its length is wrong", field.number),
                ))
            }
        }
    }
    Ok((key, value))
}

/// An event or stat metadata map entry that reads whole on the wire: only a
/// key and a value, the value's own fields (and, for event metadata, those
/// of its stats) whole, and the value's id equal to the key, as XProf writes
/// them. `budget` counts the fields walked, so a hostile plane of near-entries
/// cannot make the search for the next whole one quadratic.
fn whole_entry(entry: &[u8], budget: &mut usize) -> Result<(), usize> {
    let at = |part: &[u8]| wire::offset_within(entry, part) as usize;
    let parts = walked(entry, 0, budget)?;
    if let Some(&(_, start, ..)) = parts
        .iter()
        .find(|&&(number, _, varint, bytes)| !matches!((number, varint, bytes), (1, Some(_), _) | (2, _, Some(_))))
    {
        return Err(start);
    }
    let key = parts.iter().find_map(|&(n, _, v, _)| (n == 1).then_some(v).flatten()).unwrap_or(0);
    let Some(value) = parts.iter().find_map(|&(n, _, _, b)| (n == 2).then_some(b).flatten()) else { return Err(0) };
    let fields = walked(value, at(value), budget)?;
    let id = fields.iter().find_map(|&(n, _, v, _)| (n == 1).then_some(v).flatten()).unwrap_or(0);
    if id != key {
        return Err(at(value));
    }
    for &(_, _, _, stat) in fields.iter().filter(|f| f.0 == 5) {
        let stat = stat.ok_or(at(value))?;
        walked(stat, at(stat), budget)?;
    }
    Ok(())
}

/// The fields of `message` (number, where it starts counting from `base`,
/// varint, payload), if they all decode within `budget` fields; else where
/// the first that does not starts.
type WalkedField<'m> = (u32, usize, Option<u64>, Option<&'m [u8]>);
fn walked<'m>(message: &'m [u8], base: usize, budget: &mut usize) -> Result<Vec<WalkedField<'m>>, usize> {
    let mut fields = Vec::new();
    for field in Fields::new(message, base as u64) {
        *budget = budget.saturating_sub(1);
        match field {
            Ok(field) if *budget > 0 => {
                fields.push((field.number, field.offset as usize, field.as_u64(), field.as_bytes()))
            }
            Ok(field) => return Err(field.offset as usize),
            Err(e) => return Err(e.field_start as usize),
        }
    }
    Ok(fields)
}

/// The name of the event metadata a damaged entry starts with, read from
/// whatever of it is there: an entry whose length is wrong still has its
/// id and name first.
fn name_in_damaged_entry(at: &[u8]) -> Option<String> {
    let mut fields = Fields::new(at, 0);
    let key = fields.next_key()?;
    if key != (4 << 3 | 2) {
        return None;
    }
    name_in_entry(fields.rest_after_length()?)
}

/// The name (field 2) of the event metadata in a map entry (`{1: key, 2:
/// value}`), read as far as its bytes allow: for naming an entry that does
/// not decode.
fn name_in_entry(entry: &[u8]) -> Option<String> {
    let mut fields = Fields::new(entry, 0);
    while let Some(key) = fields.next_key() {
        match key {
            k if k == 1 << 3 => fields.skip_varint()?,
            k if k == (2 << 3 | 2) => {
                let mut metadata = Fields::new(fields.rest_after_length()?, 0);
                while let Some(Ok(field)) = metadata.next() {
                    if let (2, Some(name)) = (field.number, field.as_bytes()) {
                        return Some(String::from_utf8_lossy(name).into_owned());
                    }
                }
                return None;
            }
            _ => return None,
        }
    }
    None
}

/// A run of a plane's bytes that does not decode: where it starts and ends
/// in the file, why, and the module entry it begins with, if that is named.
struct LostRun {
    error: WireError,
    end: u64,
    name: Option<String>,
}

/// Splits the metadata plane into its parts, reading past damage: where a
/// part does not decode, or is an entry that is not whole (a length byte
/// changed), the next whole event or stat metadata entry is searched for
/// byte by byte and the walk goes on from it. One damaged module entry then
/// loses only itself, not every entry after it.
fn split_metadata_plane<'f>(walker: Walker<'f>, plane: &'f [u8]) -> (PlaneParts<'f>, Vec<LostRun>) {
    const EVENT_METADATA_KEY: u8 = 4 << 3 | 2;
    const STAT_METADATA_KEY: u8 = 5 << 3 | 2;
    let mut parts = PlaneParts::default();
    let mut lost = Vec::new();
    let mut budget = plane.len().saturating_mul(4).saturating_add(1 << 20);
    let mut at = 0;
    while at < plane.len() {
        let rest = plane.get(at..).unwrap_or_default();
        let mut fields = walker.fields(rest);
        let failure = match fields.next() {
            Some(Ok(field)) => {
                let whole = match (field.number, field.as_bytes()) {
                    (4 | 5, Some(entry)) => whole_entry(entry, &mut budget).map_err(|at| (entry, at)),
                    _ => Ok(()),
                };
                if let Err((entry, inside)) = whole {
                    let at = walker.offset(entry) + inside as u64;
                    let what = format!("plane field {} is not a whole metadata entry", field.number);
                    WireError { offset: at, what, field_start: at }
                } else {
                    parts.add(&field);
                    at += fields.consumed();
                    continue;
                }
            }
            Some(Err(e)) => e,
            None => break,
        };
        // The next place a whole entry starts, followed by a field that
        // decodes (or the plane's end).
        let next = (at + 1..plane.len()).find(|&candidate| {
            if budget == 0 || !matches!(plane[candidate], EVENT_METADATA_KEY | STAT_METADATA_KEY) {
                return false;
            }
            let mut fields = Fields::new(plane.get(candidate..).unwrap_or_default(), 0);
            let Some(Ok(entry)) = fields.next() else { return false };
            entry.as_bytes().is_some_and(|entry| whole_entry(entry, &mut budget).is_ok())
                && fields.next().is_none_or(|after| after.is_ok_and(|f| (1..=6).contains(&f.number)))
        });
        let end = next.unwrap_or(plane.len());
        lost.push(LostRun {
            error: failure,
            end: walker.offset(plane) + end as u64,
            name: name_in_damaged_entry(rest),
        });
        at = end;
    }
    (parts, lost)
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
        damaged_allocator_planes: Vec::new(),
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
        Some(damage) if contents.hlo_protos.is_empty() && contents.allocators.is_empty() => Err(damage.into_error()),
        damage => {
            contents.damage = damage;
            Ok(contents)
        }
    }
}

/// A plane's name (field 2, which XProf writes second), read without
/// splitting the plane.
fn plane_name(walker: Walker, plane: &[u8]) -> String {
    let name = walker.fields(plane).map_while(|f| f.ok()).find_map(|f| (f.number == 2).then(|| f.as_bytes()).flatten());
    String::from_utf8_lossy(name.unwrap_or_default()).into_owned()
}

/// One plane; `cut_short` says how, when the file ends inside it. Its
/// damage goes to `contents.damage`, named by the first part that is not
/// whole and by what it cost, and the rest of the file is still read.
/// Returns the plane's parts when it is whole and not the metadata plane: it
/// may name programs.
fn read_plane<'f>(
    path: &'f Path,
    whole: &'f Bytes,
    walker: Walker<'f>,
    plane: &'f [u8],
    cut_short: Option<&str>,
    contents: &mut XSpaceContents,
    allocators: &mut HostAllocators,
) -> Option<PlaneParts<'f>> {
    if plane_name(walker, plane) == METADATA_PLANE {
        let (parts, lost) = split_metadata_plane(walker, plane);
        if let (Some(how), true) = (cut_short, lost.is_empty()) {
            record(
                &mut contents.damage,
                Error::malformed(
                    path,
                    Some(whole.len() as u64),
                    format!("XSpace: the file ends inside plane {METADATA_PLANE} ({how})"),
                ),
            );
        }
        read_metadata_plane(path, whole, &parts, cut_short, lost, contents);
        contents.plane_names.push(parts.name);
        return None;
    }
    let (parts, error) = split_plane(walker, plane);
    let cut_at = error.as_ref().map_or(whole.len() as u64, |e| e.field_start);
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
    // A plane's lines come before the metadata that says what their events
    // are: in a plane cut short, only the events whose metadata is still
    // there can be read, and allocator events are kept only with every stat
    // named.
    let name = &parts.name;
    let host_plane = name.starts_with("/host:");
    match allocator_events::read_plane(path, walker, &parts, allocators, !is_cut) {
        Ok(read) => {
            if let Some(e) = read.damaged_line {
                let at = e.offset().map_or_else(String::new, |at| format!(" after byte {at}"));
                record(&mut contents.damage, e);
                if read.has_allocator_events {
                    lose(
                        &mut contents.damage,
                        format!(
                            "the allocator events{at} in the damaged thread of plane {name} \
                             (those before it and the other threads' are kept)"
                        ),
                    );
                    contents.damaged_allocator_planes.push(name.clone());
                }
            }
            if is_cut && read.has_allocator_events {
                let incomplete = match read.incomplete {
                    0 => String::new(),
                    n => format!(", and {n} before it whose stats' metadata was cut off"),
                };
                let kept = match read.kept {
                    0 => "none could be read".to_string(),
                    n => format!("the {n} read before the damage are kept"),
                };
                lose(
                    &mut contents.damage,
                    format!("the allocator events of plane {name} after byte {cut_at}{incomplete} ({kept})"),
                );
                contents.damaged_allocator_planes.push(name.clone());
            } else if is_cut && host_plane {
                lose(
                    &mut contents.damage,
                    format!(
                        "any allocator events of plane {name}: the event metadata that names them comes after byte {cut_at}"
                    ),
                );
                contents.damaged_allocator_planes.push(name.clone());
            }
        }
        Err(e) => {
            record(&mut contents.damage, e);
            lose(&mut contents.damage, format!("the allocator events of plane {name}: its metadata does not decode"));
            contents.damaged_allocator_planes.push(name.clone());
        }
    }
    (!is_cut).then_some(parts)
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
/// is recorded as damage and skipped: one broken module loses only itself,
/// and every module entry lost (`lost`, the runs the plane's split could
/// not read, and the entries that do not decode) is named in the damage.
/// In a damaged plane (`cut_short`, or with runs lost), the stat metadata
/// that names the `Hlo Proto` and `program_id` stats (stored after the
/// modules) may be missing; a bytes stat that holds an HloProto is then
/// taken for the first, and the id in the module's metadata name for the
/// second.
fn read_metadata_plane(
    path: &Path,
    whole: &Bytes,
    plane: &PlaneParts,
    cut_short: Option<&str>,
    lost: Vec<LostRun>,
    contents: &mut XSpaceContents,
) {
    let damage = &mut contents.damage;
    let out = &mut contents.hlo_protos;
    let damaged = cut_short.is_some() || !lost.is_empty();
    let walker = Walker::new(whole, 0);
    // The names of the module entries lost, `None` where unreadable.
    let mut lost_names: Vec<Option<String>> = Vec::new();
    let runs = lost.len();
    for (n, run) in lost.into_iter().enumerate() {
        // In a plane cut short, the last run is the cut.
        let what = match cut_short {
            Some(how) if n + 1 == runs => format!(
                "XSpace: plane {METADATA_PLANE} ends early ({how}); its first incomplete part: {}",
                run.error.what
            ),
            _ => format!(
                "XSpace: plane {METADATA_PLANE}: bytes {}..{} do not decode ({})",
                run.error.field_start, run.end, run.error.what
            ),
        };
        record(damage, Error::malformed(path, Some(run.error.field_start), what));
        lost_names.push(run.name);
    }
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
                lost_names.push(name_in_entry(entry));
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
                    if damaged && matches!(guess_file(path, &b), Ok(FileKind::HloProto)) =>
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
        if damaged && !program_id_stat {
            program_id = program_id_in_name(&event.name).unwrap_or(program_id);
        }
        if let Some(bytes) = hlo {
            out.push(EmbeddedHlo { name: event.name, program_id, bytes });
        }
    }
    if !lost_names.is_empty() {
        lose(damage, lost_modules(&lost_names, out.len()));
    }
}

/// `2 module entries of /host:metadata (19 read): jit_a(3), jit_b(5)`: the
/// first few named, the rest counted.
fn lost_modules(names: &[Option<String>], read: usize) -> String {
    const NAMED: usize = 8;
    let named: Vec<&str> = names.iter().flatten().map(String::as_str).collect();
    let mut list = named.iter().take(NAMED).copied().collect::<Vec<_>>().join(", ");
    let unnamed = names.len() - named.len();
    if named.len() > NAMED {
        list.push_str(&format!(" and {} more", named.len() - NAMED));
    }
    if unnamed > 0 {
        let and = if list.is_empty() { "" } else { ", and " };
        list.push_str(&format!("{and}{unnamed} whose name is unreadable"));
    }
    let entries = if names.len() == 1 { "module entry" } else { "module entries" };
    format!("{} {entries} of {METADATA_PLANE} ({read} read): {list}", names.len())
}

/// `22` for `jit_step(22)`: XProf names each module's metadata after the
/// module and its program id, which stands in for a `program_id` stat whose
/// metadata was cut off.
fn program_id_in_name(name: &str) -> Option<u64> {
    name.strip_suffix(')')?.rsplit_once('(')?.1.parse().ok()
}
