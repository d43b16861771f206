//! `xmem oom LOG --with INPUT…`: each incident joined with the program it is
//! about, from that program's dump or profile. The program is found by the
//! name the log gives (several modules of one name: the one with an
//! allocation the size of the failed request, else the newest), else, when
//! the log names none, by the request's size alone if exactly one module has
//! an allocation that size. A log that names a program the inputs do not
//! hold is never joined with another one: the report says which programs
//! they hold instead.

use serde::Serialize;

use super::event::{Incident, OomEvent, Phase};
use crate::analysis::attribution::NO_SOURCE;
use crate::analysis::hints::DonationCandidate;
use crate::analysis::{MemorySpaceReport, ModuleReport, Report};
use crate::suggest::closest_first;
use crate::units::human_bytes_precise as size;

/// A printed size is rounded to its last digit: `6.00GiB` is within half a
/// hundredth of a GiB, under 0.5% of it. Sizes this close to the request match it.
const SIZE_MATCH_SHARE: f64 = 0.005;

/// How the module was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatchedBy {
    /// The only module with the name the log gives.
    Name,
    /// Of several modules with that name, the one with an allocation the size of the failed request.
    NameAndSize,
    /// Of several modules with that name, none the size of the request: the newest (highest module id).
    NameNewest,
    /// The log names no program; this is the only module with an allocation the size of the request.
    Size,
}

/// The failed program's memory, as `xmem report` computes it, against what the log says.
#[derive(Debug, Clone, Serialize)]
pub struct ProgramReport {
    /// `None` when no module was chosen; then `reason` says why.
    pub matched_by: Option<MatchedBy>,
    pub reason: Option<String>,
    pub module: Option<String>,
    pub program_id: Option<u64>,
    pub module_id: Option<u64>,
    /// The input the module was read from.
    pub input: Option<String>,
    /// The limit the log gives for the memory that ran out (the pool, a cap, the device).
    pub limit_bytes: Option<u64>,
    /// The program's peak minus that limit (negative when the peak is below it).
    pub over_limit_bytes: Option<i64>,
    /// The memory space that ran out, as in `xmem.report/1`.
    pub memory_space: Option<MemorySpaceReport>,
    /// Entry parameters not donated but shaped like an output, largest first.
    pub donation_candidates: Vec<DonationCandidate>,
    /// What the program's peak says about the failure, in a sentence.
    pub finding: Option<String>,
    /// The one change that saves the most, when the report finds one.
    pub top_change: Option<Change>,
    /// How many rows of its tables a report shows (`--top`).
    #[serde(skip)]
    pub top: usize,
}

/// A change to the program and what it saves at most.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// `donation` or `padding`.
    pub kind: &'static str,
    pub saves_bytes: i64,
    pub text: String,
}

impl ProgramReport {
    /// No program chosen, and why.
    pub fn unmatched(reason: String) -> ProgramReport {
        ProgramReport {
            matched_by: None,
            reason: Some(reason),
            module: None,
            program_id: None,
            module_id: None,
            input: None,
            limit_bytes: None,
            over_limit_bytes: None,
            memory_space: None,
            donation_candidates: Vec::new(),
            finding: None,
            top_change: None,
            top: 0,
        }
    }
}

/// What an incident says about the program it is about.
struct Failure<'a> {
    program: Option<&'a str>,
    request: Option<u64>,
    memory_space: Option<&'a str>,
    limit: Option<u64>,
}

impl<'a> Failure<'a> {
    fn of(incident: &'a Incident, events: &'a [OomEvent]) -> Failure<'a> {
        let members: Vec<&OomEvent> = incident.events.iter().filter_map(|&at| events.get(at)).collect();
        let failure = members
            .iter()
            .find(|e| !e.non_fatal && e.requested_bytes.is_some() && e.phase != Some(Phase::Compile))
            .copied();
        // The pool or cap first, then the device; a compile-time capacity (TPU HBM) when that is all there is.
        let limit = members
            .iter()
            .filter_map(|e| e.limit_bytes)
            .min()
            .or_else(|| members.iter().find_map(|e| e.capacity_bytes.filter(|_| e.phase == Some(Phase::Runtime))))
            .or_else(|| members.iter().find_map(|e| e.device_bytes))
            .or_else(|| {
                members
                    .iter()
                    .filter(|e| !e.non_fatal)
                    .find_map(|e| e.capacity_bytes.filter(|_| e.memory_space.is_some()))
            });
        Failure {
            program: incident.program.as_deref(),
            request: failure.and_then(|e| e.requested_bytes),
            memory_space: failure.or(members.first().copied()).and_then(|e| e.memory_space.as_deref()),
            limit,
        }
    }
}

/// Joins an incident with its program: the report goes under it, and advice
/// that only says to make this join goes once it is made.
pub fn attach(incident: &mut Incident, report: ProgramReport) {
    if report.matched_by.is_some() {
        incident.advice.retain(|advice| !advice.starts_with(super::verdict::JOIN_HINT));
    }
    incident.program_report = Some(Box::new(report));
}

/// The program report of one incident, from the modules of `programs`.
pub fn program_report(incident: &Incident, events: &[OomEvent], programs: &Report) -> ProgramReport {
    let failure = Failure::of(incident, events);
    let modules: Vec<&ModuleReport> = programs.modules.iter().filter(|m| m.problem.is_none()).collect();
    if modules.is_empty() {
        return ProgramReport::unmatched(format!(
            "{} holds no compiled program with a buffer assignment",
            programs.inputs.join(", ")
        ));
    }
    match choose(&failure, &modules) {
        Ok((module, matched_by)) => matched(module, matched_by, &failure),
        Err(reason) => ProgramReport::unmatched(reason),
    }
}

fn choose<'m>(failure: &Failure, modules: &[&'m ModuleReport]) -> Result<(&'m ModuleReport, MatchedBy), String> {
    let fits =
        |module: &&&ModuleReport| failure.request.is_some_and(|request| has_allocation_of(module, request, failure));
    if let Some(program) = failure.program {
        let named: Vec<&ModuleReport> = modules.iter().copied().filter(|m| m.name == program).collect();
        return match named.as_slice() {
            [] => Err(format!(
                "the inputs hold no program named {program} (they hold {}); the log and the inputs are of \
                 different programs",
                closest_first(program, modules.iter().map(|m| m.name.as_str()))
            )),
            [only] => Ok((only, MatchedBy::Name)),
            several => {
                let sized: Vec<&&ModuleReport> = several.iter().filter(fits).collect();
                match sized.iter().max_by_key(|m| m.module_id) {
                    Some(module) => Ok((module, MatchedBy::NameAndSize)),
                    None => several
                        .iter()
                        .max_by_key(|m| m.module_id)
                        .map(|module| (*module, MatchedBy::NameNewest))
                        .ok_or_else(|| format!("no program named {program}")),
                }
            }
        };
    }
    let Some(request) = failure.request else {
        return Err("the log names no program and no failed request to match a program by".to_string());
    };
    let sized: Vec<&&ModuleReport> = modules.iter().filter(fits).collect();
    match sized.as_slice() {
        [only] => Ok((only, MatchedBy::Size)),
        [] => Err(format!(
            "the log names no program, and no program in the inputs has an allocation of {} (they hold {})",
            size(request),
            closest_first("", modules.iter().map(|m| m.name.as_str()))
        )),
        several => Err(format!(
            "the log names no program, and {} programs have an allocation of {}: {}",
            several.len(),
            size(request),
            closest_first("", several.iter().map(|m| m.name.as_str()))
        )),
    }
}

/// The memory space the failure is about: the one the log names, else the
/// first (colour 0, device memory on GPU and TPU).
fn space<'m>(module: &'m ModuleReport, failure: &Failure) -> Option<&'m MemorySpaceReport> {
    let named =
        failure.memory_space.and_then(|name| module.memory_spaces.iter().find(|s| s.name.eq_ignore_ascii_case(name)));
    named.or_else(|| module.memory_spaces.iter().find(|s| s.color == 0)).or_else(|| module.memory_spaces.first())
}

/// Whether the module has an allocation the failed request could be: a
/// buffer live at its peak, its temporaries, or its whole peak.
fn has_allocation_of(module: &ModuleReport, request: u64, failure: &Failure) -> bool {
    let Some(space) = space(module, failure) else { return false };
    let close = |bytes: i64| {
        let Ok(bytes) = u64::try_from(bytes) else { return false };
        bytes.abs_diff(request) as f64 <= (request as f64 * SIZE_MATCH_SHARE).max(1.0)
    };
    close(space.peak_bytes) || close(space.breakdown.temporaries) || space.at_peak.iter().any(|b| close(b.size_bytes))
}

fn matched(module: &ModuleReport, matched_by: MatchedBy, failure: &Failure) -> ProgramReport {
    let space = space(module, failure);
    let over = match (space, failure.limit) {
        (Some(space), Some(limit)) => i64::try_from(limit).ok().map(|limit| space.peak_bytes.saturating_sub(limit)),
        _ => None,
    };
    let finding = space.map(|space| finding(module, space, failure.limit, over));
    ProgramReport {
        finding,
        matched_by: Some(matched_by),
        reason: None,
        module: Some(module.display_name()),
        program_id: Some(module.program_id),
        module_id: Some(module.module_id),
        input: Some(module.input.clone()),
        limit_bytes: failure.limit,
        over_limit_bytes: over,
        top_change: top_change(module, space, over),
        memory_space: space.cloned(),
        donation_candidates: module.donation_candidates.clone(),
        top: 0,
    }
}

/// Whether the program could fit at all, and which source line owns most of its peak.
fn finding(module: &ModuleReport, space: &MemorySpaceReport, limit: Option<u64>, over: Option<i64>) -> String {
    let mut text = match (limit, over) {
        (Some(limit), Some(over)) if over > 0 => format!(
            "{}'s own peak, {}, is {} above the {} limit: it cannot run in this memory, whatever else is alive",
            module.name,
            size(space.peak_bytes),
            size(over),
            size(limit)
        ),
        (Some(limit), Some(over)) => format!(
            "{}'s own peak, {}, fits under the {} limit with {} to spare: it ran out because of what else was alive",
            module.name,
            size(space.peak_bytes),
            size(limit),
            size(-over)
        ),
        _ => format!("{}'s peak is {}", module.name, size(space.peak_bytes)),
    };
    let owner = space.attribution.at_peak_groups.by_source.iter().find(|g| g.key != NO_SOURCE);
    if let Some(owner) = owner.filter(|_| space.peak_bytes > 0) {
        text.push_str(&format!(
            "; the source line that owns most of it is {} ({}, {:.0}%)",
            owner.key,
            size(owner.bytes),
            owner.bytes as f64 * 100.0 / space.peak_bytes as f64
        ));
    }
    text
}

/// The change that saves the most: donating the parameters the program
/// replaces, or removing layout padding.
fn top_change(module: &ModuleReport, space: Option<&MemorySpaceReport>, over: Option<i64>) -> Option<Change> {
    let donation = crate::analysis::sum_bytes(module.donation_candidates.iter().map(|c| c.bytes_at_most));
    let padding = space.and_then(|s| s.attribution.padding.as_ref()).map(|hint| hint.padding_bytes).unwrap_or(0);
    let enough = |saves: i64| match over {
        Some(over) if over > 0 && saves >= over => " (enough to fit under the limit)",
        Some(over) if over > 0 => " (not enough alone to fit under the limit)",
        _ => "",
    };
    if donation > 0 && donation >= padding {
        let names: Vec<&str> = module.donation_candidates.iter().take(3).map(|c| c.parameter.as_str()).collect();
        let more = module.donation_candidates.len().saturating_sub(names.len());
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        return Some(Change {
            kind: "donation",
            saves_bytes: donation,
            text: format!(
                "Donate the {} parameters shaped like an output ({}{more}) with jax.jit(..., donate_argnums=...): \
                 saves up to {}{}",
                module.donation_candidates.len(),
                names.join(", "),
                size(donation),
                enough(donation)
            ),
        });
    }
    (padding > 0).then(|| Change {
        kind: "padding",
        saves_bytes: padding,
        text: format!(
            "Remove layout padding (dimensions that are multiples of 128, the small dimension not minor): saves up to {}{}",
            size(padding),
            enough(padding)
        ),
    })
}
