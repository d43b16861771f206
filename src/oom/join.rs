//! `xmem oom LOG --with INPUT…`: each incident joined with the program it is
//! about, from that program's dump or profile. The program is found by the
//! name the log gives (several modules of one name: the one with an
//! allocation the size of the failed request, else the newest). When the log
//! names none, by an exact figure it gives about the program: XLA's
//! `input/output arguments (N)` is the program's parameters and outputs to
//! the byte, so the only program (or the only name) with exactly that many
//! bytes is the one; without such a figure, by the request's size alone if
//! exactly one module has an allocation that size. A log that names a
//! program the inputs do not hold, or whose exact figure no program has, is
//! never joined with another one: the report says which programs they hold instead.
//!
//! Of the rematerialization warning, only the limit is a figure of the
//! program: XLA sets it to what its scheduler leaves for temporaries plus the
//! program's outputs, so when the arguments exceed the base limit (nothing
//! left) it is exactly the outputs, which corroborates the match. Its
//! `reduced to` and `originally` are the pass's own estimate before later
//! passes and buffer assignment; no figure of the dump equals them.

use serde::Serialize;

use super::event::{Incident, OomEvent, Phase};
use super::gpu::{ARGUMENTS, ARGUMENTS_SIZE, REMAT, REMAT_LIMIT};
use crate::analysis::attribution::NO_SOURCE;
use crate::analysis::hints::DonationCandidate;
use crate::analysis::{Category, MemorySpaceReport, ModuleReport, Report};
use crate::suggest::closest_first;
use crate::units::human_bytes_precise as size;

/// A printed size is rounded to its last digit: `6.00GiB` is within half a
/// hundredth of a GiB, under 0.5% of it. Sizes this close to the request match it.
const SIZE_MATCH_SHARE: f64 = 0.005;

/// An exact figure from the log identifies a program only from this size on:
/// many programs share a small one (a scalar's 4 bytes), few a large one to the byte.
const MIN_IDENTIFYING_BYTES: u64 = 1 << 20;

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
    /// The log names no program; this is the only program whose parameters and outputs take
    /// exactly the bytes of XLA's `input/output arguments (N)` (of several compilations of it,
    /// the one the size of the request, else the newest).
    Arguments,
    /// The program the log names is smaller, whole peak and all, than the
    /// failed request; this other one is identified as [`MatchedBy::Arguments`]
    /// or [`MatchedBy::Size`] would identify it: the error was raised by a
    /// later call that waited on its results.
    EarlierProgram,
}

/// The failed program's memory, as `xmem report` computes it, against what the log says.
#[derive(Debug, Clone, Serialize)]
pub struct ProgramReport {
    /// `None` when no module was chosen; then `reason` says why.
    pub matched_by: Option<MatchedBy>,
    /// How it was matched, in words, with the figures that matched (`matched by the
    /// log's argument size, 38923141264 bytes, exactly: …`).
    pub matched_how: Option<String>,
    pub reason: Option<String>,
    pub module: Option<String>,
    /// The program's name as XLA gives it (`module` adds its program id).
    pub program: Option<String>,
    /// The program the log names, when it is not this one ([`MatchedBy::EarlierProgram`]).
    pub named_in_log: Option<String>,
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
            matched_how: None,
            reason: Some(reason),
            module: None,
            program: None,
            named_in_log: None,
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
    /// XLA's `input/output arguments (N)`: the program's parameters and outputs, exactly.
    arguments: Option<u64>,
    /// XLA's rematerialization limit.
    remat_limit: Option<u64>,
    /// The incident is a failure: not warnings the job survived or may have survived.
    fatal: bool,
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
        let figure = |section: &str, name: &str| {
            members.iter().find_map(|e| e.figure(section, name)).and_then(|bytes| u64::try_from(bytes).ok())
        };
        Failure {
            program: incident.program.as_deref(),
            request: failure.and_then(|e| e.requested_bytes),
            memory_space: failure.or(members.first().copied()).and_then(|e| e.memory_space.as_deref()),
            limit,
            arguments: figure(ARGUMENTS, ARGUMENTS_SIZE).filter(|&bytes| bytes >= MIN_IDENTIFYING_BYTES),
            remat_limit: figure(REMAT, REMAT_LIMIT),
            fatal: incident.is_failure(),
        }
    }
}

/// Joins an incident with its program: the report goes under it, and advice
/// that only says to make this join goes once it is made.
pub fn attach(incident: &mut Incident, report: ProgramReport) {
    if report.matched_by.is_some() {
        incident.advice.retain(|advice| !advice.starts_with(super::verdict::JOIN_HINT));
    }
    // The log's name was the later call's: the incident is about this program.
    if let (Some(named), Some(program)) = (&report.named_in_log, &report.program) {
        if let Ok(word) = regex::Regex::new(&format!(r"\b{}\b", regex::escape(named))) {
            incident.title = word.replace_all(&incident.title, regex::NoExpand(program)).into_owned();
        }
        incident.program = Some(program.clone());
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
        Ok((module, matched_by)) => {
            let mut report = matched(module, matched_by, &failure);
            report.matched_how = Some(matched_how(module, matched_by, &failure, &modules));
            report
        }
        Err(reason) => ProgramReport::unmatched(reason),
    }
}

fn choose<'m>(failure: &Failure, modules: &[&'m ModuleReport]) -> Result<(&'m ModuleReport, MatchedBy), String> {
    let fits =
        |module: &&&ModuleReport| failure.request.is_some_and(|request| has_allocation_of(module, request, failure));
    if let Some(program) = failure.program {
        let named: Vec<&ModuleReport> = modules.iter().copied().filter(|m| m.name == program).collect();
        if too_small_for_request(&named, failure) {
            let others: Vec<&ModuleReport> = modules.iter().copied().filter(|m| m.name != program).collect();
            let identified = match (failure.arguments, failure.request) {
                (Some(arguments), _) => by_arguments(arguments, failure, &others),
                (None, Some(request)) => by_request(request, failure, &others),
                (None, None) => Err(String::new()),
            };
            if let Ok((module, _)) = identified {
                return Ok((module, MatchedBy::EarlierProgram));
            }
        }
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
    if let Some(arguments) = failure.arguments {
        return by_arguments(arguments, failure, modules);
    }
    let Some(request) = failure.request else {
        return Err("the log names no program and no failed request to match a program by".to_string());
    };
    by_request(request, failure, modules)
}

/// Whether the programs of the name the log gives are all smaller, whole peak
/// and all, than the failed request, which they then cannot have made. JAX
/// runs a program asynchronously: when its allocation fails, the error is
/// raised by the next call that waits on its results, and it names that
/// call's program (a `jit_squeeze` indexing the output).
fn too_small_for_request(named: &[&ModuleReport], failure: &Failure) -> bool {
    let Some(request) = failure.request.filter(|&request| failure.fatal && request >= MIN_IDENTIFYING_BYTES) else {
        return false;
    };
    let smaller = |module: &&ModuleReport| {
        space(module, failure)
            .is_some_and(|space| (space.peak_bytes as f64) < request as f64 * (1.0 - SIZE_MATCH_SHARE))
    };
    !named.is_empty() && named.iter().all(smaller)
}

/// The only program with an allocation the size of the failed request.
fn by_request<'m>(
    request: u64,
    failure: &Failure,
    modules: &[&'m ModuleReport],
) -> Result<(&'m ModuleReport, MatchedBy), String> {
    let sized: Vec<&&ModuleReport> = modules.iter().filter(|m| has_allocation_of(m, request, failure)).collect();
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

/// The program whose parameters and outputs take exactly `arguments` bytes:
/// one module, or several compilations of one program (then the one with an
/// allocation the size of the request, else the newest). None, or several
/// programs, is no join: a figure this exact that matches nothing says the
/// inputs do not hold the program.
fn by_arguments<'m>(
    arguments: u64,
    failure: &Failure,
    modules: &[&'m ModuleReport],
) -> Result<(&'m ModuleReport, MatchedBy), String> {
    let exact: Vec<&ModuleReport> = modules
        .iter()
        .copied()
        .filter(|m| space(m, failure).is_some_and(|space| arguments_and_outputs(space) == arguments as i64))
        .collect();
    let names: Vec<&str> = exact.iter().map(|m| m.name.as_str()).collect();
    match exact.as_slice() {
        [] => Err(format!(
            "the log names no program, and no program in the inputs has parameters and outputs of exactly {arguments} \
             bytes, the log's argument size (they hold {})",
            closest_first("", modules.iter().map(|m| m.name.as_str()))
        )),
        [first, ..] if names.iter().all(|name| *name == first.name) => {
            let sized = exact
                .iter()
                .filter(|m| failure.request.is_some_and(|request| has_allocation_of(m, request, failure)))
                .max_by_key(|m| m.module_id);
            sized
                .or_else(|| exact.iter().max_by_key(|m| m.module_id))
                .map(|module| (*module, MatchedBy::Arguments))
                .ok_or_else(|| "no program".to_string())
        }
        several => Err(format!(
            "the log names no program, and {} programs have parameters and outputs of exactly {arguments} bytes, the \
             log's argument size: {}",
            several.len(),
            closest_first("", names.into_iter())
        )),
    }
}

/// A program's parameters and outputs in one memory space, as XLA's scheduler
/// counts its `input/output arguments`: each allocation once (a donated
/// output is its parameter's), constants and temporaries left out. Both are
/// live throughout, so all of them are in the breakdown at the peak.
fn arguments_and_outputs(space: &MemorySpaceReport) -> i64 {
    space.breakdown.parameters.saturating_add(space.breakdown.outputs)
}

/// How the module was matched, in words.
fn matched_how(module: &ModuleReport, matched_by: MatchedBy, failure: &Failure, modules: &[&ModuleReport]) -> String {
    match matched_by {
        MatchedBy::Name => "matched by name".to_string(),
        MatchedBy::NameAndSize => "matched by name and by the size of the failed request".to_string(),
        MatchedBy::NameNewest => "matched by name; the newest of several of that name".to_string(),
        MatchedBy::Size => "matched by the size of the failed request: the log names no program".to_string(),
        MatchedBy::Arguments => format!("{}; the log names no program", by_arguments_how(module, failure, modules)),
        MatchedBy::EarlierProgram => {
            let named = failure.program.unwrap_or_default();
            let peak =
                modules.iter().filter(|m| m.name == named).filter_map(|m| space(m, failure)).map(|s| s.peak_bytes);
            let identified = match failure.arguments {
                Some(_) => by_arguments_how(module, failure, modules),
                None => format!(
                    "matched by the size of the failed request, the only other program with an allocation of {}",
                    size(failure.request.unwrap_or_default())
                ),
            };
            format!(
                "{identified}; the log names {named}, but its whole peak, {}, is smaller than the failed {} request: \
                 the error was raised by a later call that waited on this program's results",
                size(peak.max().unwrap_or_default()),
                size(failure.request.unwrap_or_default())
            )
        }
    }
}

/// `matched by the log's argument size, N bytes, exactly: …`, with what corroborates it.
fn by_arguments_how(module: &ModuleReport, failure: &Failure, modules: &[&ModuleReport]) -> String {
    let mut how = format!(
        "matched by the log's argument size, {} bytes, exactly: its parameters and outputs",
        failure.arguments.unwrap_or_default()
    );
    let outputs = space(module, failure).map(|space| space.breakdown.outputs);
    if let Some(limit) = failure.remat_limit.filter(|&limit| outputs == i64::try_from(limit).ok()) {
        how.push_str(&format!("; the rematerialization limit, {limit} bytes, is exactly its outputs"));
    }
    let compilations = modules.iter().filter(|m| m.name == module.name).count();
    if compilations > 1 {
        how.push_str(&format!("; the newest fitting of {compilations} compilations of it"));
    }
    how
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
    let finding = space.map(|space| finding(module, space, failure, over));
    ProgramReport {
        finding,
        matched_by: Some(matched_by),
        matched_how: None,
        reason: None,
        module: Some(module.display_name()),
        program: Some(module.name.clone()),
        named_in_log: (matched_by == MatchedBy::EarlierProgram)
            .then(|| failure.program.unwrap_or_default().to_string()),
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

/// Whether the program could fit at all, and what owns most of its peak: a
/// source line, or buffers without one (the arguments passed in).
fn finding(module: &ModuleReport, space: &MemorySpaceReport, failure: &Failure, over: Option<i64>) -> String {
    if too_small_for_request(&[module], failure) {
        return format!(
            "{}'s own peak, {}, is smaller than the failed {} request, which it cannot have made: JAX raises a failed \
             asynchronous execution at the next call that waits on its results, so the request was an earlier \
             program's; the inputs hold none that the log's figures identify",
            module.name,
            size(space.peak_bytes),
            size(failure.request.unwrap_or_default())
        );
    }
    let mut text = match (failure.limit, over) {
        (Some(limit), Some(over)) if over > 0 => format!(
            "{}'s own peak, {}, is {} above the {} limit{}",
            module.name,
            size(space.peak_bytes),
            size(over),
            size(limit),
            if failure.fatal { ": it cannot run in this memory, whatever else is alive" } else { " the log gives" }
        ),
        (Some(limit), Some(over)) => format!(
            "{}'s own peak, {}, fits under the {} limit with {} to spare: {}",
            module.name,
            size(space.peak_bytes),
            size(limit),
            size(-over),
            if failure.fatal {
                "it ran out because of what else was alive"
            } else {
                "the allocator ran short because of what else was alive"
            }
        ),
        _ => format!("{}'s peak is {}", module.name, size(space.peak_bytes)),
    };
    if space.peak_bytes > 0 {
        text.push_str(&owner(space));
    }
    text
}

/// `; the source line that owns most of it is train.py:33 (5.25 GiB, 34%)`, or,
/// when buffers without a source line own most, what they are and the
/// largest source line after them.
fn owner(space: &MemorySpaceReport) -> String {
    let share = |bytes: i64| bytes as f64 * 100.0 / space.peak_bytes as f64;
    let groups = &space.attribution.at_peak_groups.by_source;
    let line = groups.iter().find(|g| g.key != NO_SOURCE);
    match groups.first() {
        Some(top) if top.key == NO_SOURCE => {
            let mut text = format!("; most of it is {}", without_source(space));
            if let Some(line) = line.filter(|line| share(line.bytes) >= 1.0) {
                text.push_str(&format!(
                    "; the source line that owns most of the rest is {} ({}, {:.0}%)",
                    line.key,
                    size(line.bytes),
                    share(line.bytes)
                ));
            }
            text
        }
        Some(top) => format!(
            "; the source line that owns most of it is {} ({}, {:.0}%)",
            top.key,
            size(top.bytes),
            share(top.bytes)
        ),
        None => String::new(),
    }
}

/// The largest kind of buffer at the peak without a source line:
/// `its 19 parameters, 18.25 GiB (50%; arguments passed in: no source line)`.
fn without_source(space: &MemorySpaceReport) -> String {
    let mut by_category: Vec<(Category, i64, usize)> = Vec::new();
    for buffer in space.at_peak.iter().filter(|b| b.source.is_none()) {
        match by_category.iter_mut().find(|(category, _, _)| *category == buffer.category) {
            Some((_, bytes, count)) => {
                *bytes = bytes.saturating_add(buffer.size_bytes);
                *count += 1;
            }
            None => by_category.push((buffer.category, buffer.size_bytes, 1)),
        }
    }
    let Some(&(category, bytes, count)) = by_category.iter().max_by_key(|(_, bytes, _)| *bytes) else {
        return "buffers without a source line".to_string();
    };
    let what = match (category, count) {
        (Category::Parameter, 1) => "its parameter".to_string(),
        (Category::Parameter, n) => format!("its {n} parameters"),
        (other, 1) => format!("one {}", other.label()),
        (other, n) => format!("{n} {} buffers", other.label()),
    };
    let why = match (category, count) {
        (Category::Parameter, 1) => "an argument passed in: no source line",
        (Category::Parameter, _) => "arguments passed in: no source line",
        _ => "without a source line",
    };
    format!("{what}, {} ({:.0}%; {why})", size(bytes), bytes as f64 * 100.0 / space.peak_bytes as f64)
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
