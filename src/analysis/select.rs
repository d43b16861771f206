//! Narrowing a report to what the user asked for with `--module`,
//! `--memory-space` and `--allocator`.

use regex::Regex;

use super::heap_simulation::memory_space_name;
use super::{ModuleReport, Report};

/// `--module NAME|ID|/REGEX/`.
#[derive(Debug, Clone)]
pub enum ModuleFilter {
    /// Matches the module name with or without its `(id)` suffix.
    Name(String),
    /// Matches the program id XProf names the module by, or its `HloModuleProto.id`.
    Id(u64),
    Pattern(Regex),
}

impl ModuleFilter {
    pub fn parse(text: &str) -> Result<Self, String> {
        if let Some(pattern) = text.strip_prefix('/').and_then(|t| t.strip_suffix('/')) {
            return Regex::new(pattern).map(ModuleFilter::Pattern).map_err(|e| format!("--module /{pattern}/: {e}"));
        }
        Ok(match text.parse::<u64>() {
            Ok(id) => ModuleFilter::Id(id),
            Err(_) => ModuleFilter::Name(text.to_string()),
        })
    }

    pub fn matches(&self, module: &ModuleReport) -> bool {
        match self {
            ModuleFilter::Name(name) => module.name == *name || module.display_name() == *name,
            ModuleFilter::Id(id) => module.program_id == *id || module.module_id == *id,
            ModuleFilter::Pattern(re) => re.is_match(&module.display_name()),
        }
    }
}

/// `--memory-space hbm|vmem|host|N`: a colour number or its name.
pub fn parse_memory_space(text: &str) -> Result<i64, String> {
    if let Ok(color) = text.parse::<i64>() {
        return Ok(color);
    }
    (0..=6).find(|&c| memory_space_name(c).eq_ignore_ascii_case(text)).ok_or_else(|| {
        format!("unknown memory space '{text}' (use hbm, vmem, sflag, cmem, smem, host, sparsecore or a number)")
    })
}

/// `--module` and `--memory-space` as given together on one command line.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub module: Option<ModuleFilter>,
    pub memory_space: Option<i64>,
}

impl Filter {
    pub fn parse(module: Option<&str>, memory_space: Option<&str>) -> Result<Self, String> {
        Ok(Filter {
            module: module.map(ModuleFilter::parse).transpose()?,
            memory_space: memory_space.map(parse_memory_space).transpose()?,
        })
    }

    pub fn is_set(&self) -> bool {
        self.module.is_some() || self.memory_space.is_some()
    }

    pub fn apply(&self, report: &mut Report) {
        narrow(report, self.module.as_ref(), self.memory_space);
    }
}

/// Keeps the modules and memory spaces that match; `None` keeps everything.
pub fn narrow(report: &mut Report, module: Option<&ModuleFilter>, memory_space: Option<i64>) {
    if let Some(filter) = module {
        report.modules.retain(|m| filter.matches(m));
    }
    if let Some(color) = memory_space {
        for module in &mut report.modules {
            module.memory_spaces.retain(|s| s.color == color);
        }
        report.modules.retain(|m| !m.memory_spaces.is_empty() || m.problem.is_some());
    }
}

/// `--allocator NAME`: keeps the allocators named `NAME` (on any host) or
/// `HOST/NAME` in each report; an error listing the allocators there are
/// when no report has one that matches.
pub fn narrow_allocators(reports: &mut [Report], name: &str) -> Result<(), String> {
    let mut available: Vec<String> =
        reports.iter().flat_map(|r| r.allocators.iter().map(|a| a.display_name())).collect();
    available.sort();
    available.dedup();
    for report in reports.iter_mut() {
        report.allocators.retain(|a| a.name == name || a.display_name() == name);
    }
    if reports.iter().any(|r| !r.allocators.is_empty()) {
        return Ok(());
    }
    let inputs = if reports.len() == 1 { "the input has" } else { "the inputs have" };
    Err(if available.is_empty() {
        format!("no allocator named '{name}': {inputs} no allocator events")
    } else {
        format!("no allocator named '{name}' ({inputs} {})", available.join(", "))
    })
}
