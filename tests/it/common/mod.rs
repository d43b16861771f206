//! Helpers shared by the integration tests: fixtures and XProf's oracle
//! output for them.

use std::path::{Path, PathBuf};

use serde_json::Value;

pub fn fixture(workload: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles").join(workload)
}

/// The whole shared corpus, when this checkout has it beside it
/// (`../shared/corpus/profiles`) or `XMEM_CORPUS` names it; the tests that
/// use it are skipped otherwise.
pub fn shared_corpus() -> Option<PathBuf> {
    let root = std::env::var_os("XMEM_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/profiles"));
    if root.is_dir() {
        return Some(root);
    }
    eprintln!("skipped: no shared corpus at {}", root.display());
    None
}

/// The shared corpus's third-party profiles (`../shared/corpus/external`, or
/// `external` beside `XMEM_CORPUS`), when present; the tests that use them
/// are skipped otherwise. They are never copied into the repository.
pub fn shared_external() -> Option<PathBuf> {
    let root = match std::env::var_os("XMEM_CORPUS") {
        Some(profiles) => PathBuf::from(profiles).with_file_name("external"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/external"),
    };
    if root.is_dir() {
        return Some(root);
    }
    eprintln!("skipped: no external corpus at {}", root.display());
    None
}

/// A folder of the shared corpus beside `profiles` (`gpu`, `oom-gpu`):
/// `../shared/corpus/<name>`, or `<name>` beside `XMEM_CORPUS`, when present;
/// the tests that use it are skipped otherwise.
pub fn shared_corpus_folder(name: &str) -> Option<PathBuf> {
    let root = match std::env::var_os("XMEM_CORPUS") {
        Some(profiles) => PathBuf::from(profiles).with_file_name(name),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus").join(name),
    };
    if root.is_dir() {
        return Some(root);
    }
    eprintln!("skipped: no {name} corpus at {}", root.display());
    None
}

/// The shared corpus's PyTorch memory snapshot (`../shared/corpus/torch`, or
/// `torch` beside `XMEM_CORPUS`), when present; the tests that use it are
/// skipped otherwise.
pub fn shared_torch() -> Option<PathBuf> {
    let root = shared_corpus_folder("torch")?;
    if root.join("snapshot.pickle").is_file() {
        return Some(root);
    }
    eprintln!("skipped: no PyTorch snapshot at {}", root.display());
    None
}

/// The profile (a log directory) of a fixture workload.
pub fn profile(workload: &str) -> PathBuf {
    fixture(workload).join("profile")
}

/// XProf's Memory Viewer output for one module (`name(id)`) and memory space.
pub struct Oracle {
    pub module: String,
    pub color: i64,
    pub json: Value,
}

impl Oracle {
    pub fn peak_bytes(&self) -> i64 {
        mib_to_bytes(&self.json["peakHeapMib"])
    }

    /// Index of the heap-simulator event that made the peak (0 when XProf omits it).
    pub fn peak_position(&self) -> usize {
        self.json["peakHeapSizePosition"].as_u64().unwrap_or(0) as usize
    }

    pub fn peak_instruction(&self) -> String {
        self.json["hloInstructionNames"][self.peak_position()].as_str().unwrap_or_default().to_string()
    }

    pub fn heap_points(&self) -> usize {
        self.json["heapSizes"].as_array().map_or(0, Vec::len)
    }

    /// Buffers at the peak as XProf lists them, without its "small" summary entry.
    pub fn buffers_at_peak(&self) -> Vec<&Value> {
        self.json["maxHeap"].as_array().into_iter().flatten().filter(|b| b["logicalBufferId"] != -1).collect()
    }

    pub fn has_small_buffers(&self) -> bool {
        self.json["maxHeap"].as_array().into_iter().flatten().any(|b| b["logicalBufferId"] == -1)
    }

    /// `(start, limit)` of a buffer's span, as XProf recorded it.
    pub fn span(&self, logical_buffer_id: i64) -> Option<(u64, u64)> {
        let span = self.json["logicalBufferSpans"].get(logical_buffer_id.to_string())?;
        Some((span["start"].as_u64().unwrap_or(0), span["limit"].as_u64().unwrap_or(0)))
    }

    pub fn has_spans(&self) -> bool {
        self.json["logicalBufferSpans"].as_object().is_some_and(|spans| !spans.is_empty())
    }
}

/// XProf stores sizes as MiB in a double: bytes / 2^20, exact for these sizes.
pub fn mib_to_bytes(mib: &Value) -> i64 {
    (mib.as_f64().unwrap_or(0.0) * 1_048_576.0).round() as i64
}

/// `193,604,044`, as inferno prints counts.
pub fn thousands(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Every oracle file of a workload: `<module>(<id>).memory_space_<color>.json`.
pub fn oracles(workload: &str) -> Vec<Oracle> {
    let dir = fixture(workload).join("oracle/memory_viewer");
    let mut oracles: Vec<Oracle> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?.strip_suffix(".json")?.to_string();
            let (module, color) = name.rsplit_once(".memory_space_")?;
            let json = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            Some(Oracle { module: module.to_string(), color: color.parse().ok()?, json })
        })
        .collect();
    oracles.sort_by(|a, b| (&a.module, a.color).cmp(&(&b.module, b.color)));
    oracles
}

/// The oracle for a chart titled `<module> · <space> (color N): ...`.
pub fn oracle_for_title<'a>(oracles: &'a [Oracle], title: &str) -> &'a Oracle {
    let (module, rest) = title.split_once(" · ").unwrap_or_else(|| panic!("title {title:?}"));
    let color: i64 = rest
        .split_once("(color ")
        .and_then(|(_, c)| c.split(|ch: char| !ch.is_ascii_digit()).next())
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no colour in title {title:?}"));
    oracles
        .iter()
        .find(|o| o.module == module && o.color == color)
        .unwrap_or_else(|| panic!("no oracle for {module} colour {color}"))
}

/// The charts xmem should draw for a memory space, judged from XProf's output:
/// none when nothing is live at the peak; the buffers at the peak alone
/// without heap-simulator events; else a timeline, the buffers at the peak,
/// the lifetimes when buffers have spans, and the flame graph of the peak.
pub fn expected_charts(oracle: &Oracle) -> Vec<&'static str> {
    let live_at_peak = oracle.json["maxHeap"].as_array().is_some_and(|b| !b.is_empty());
    if !live_at_peak {
        return Vec::new();
    }
    // Without a heap-simulator trace, the buffers at the peak are all a memory space has to show.
    if oracle.heap_points() < 2 {
        return vec!["peak"];
    }
    let mut charts = vec!["timeline", "peak"];
    if oracle.has_spans() {
        charts.push("lifetimes");
    }
    charts.push("flame");
    charts
}

/// XProf's Memory Profile of one allocator, from `oracle/memory_profile.json`.
pub struct AllocatorOracle {
    pub name: String,
    pub json: Value,
}

impl AllocatorOracle {
    /// Proto3 JSON writes int64 as a string.
    fn int(value: &Value) -> i64 {
        value.as_str().map_or_else(|| value.as_i64().unwrap(), |text| text.parse().unwrap())
    }

    /// Heap plus stack at the peak.
    pub fn peak_bytes(&self) -> i64 {
        let stats = &self.json["profileSummary"]["peakStats"];
        Self::int(&stats["heapAllocatedBytes"]) + Self::int(&stats["stackReservedBytes"])
    }

    pub fn peak_free_bytes(&self) -> i64 {
        Self::int(&self.json["profileSummary"]["peakStats"]["freeMemoryBytes"])
    }

    /// The step of the peak: XProf keeps the snapshots of that step only,
    /// and names it in its special rows ("unused preallocated device memory").
    pub fn peak_step(&self) -> i64 {
        let snapshot = &self.json["memoryProfileSnapshots"][0]["activityMetadata"]["stepId"];
        let special = &self.json["specialAllocations"][0]["stepId"];
        Self::int(if snapshot.is_null() { special } else { snapshot })
    }
}

pub fn allocator_oracles(workload: &str) -> Vec<AllocatorOracle> {
    let path = fixture(workload).join("oracle/memory_profile.json");
    let json: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    json["memoryProfilePerAllocator"]
        .as_object()
        .unwrap_or_else(|| panic!("{}: no allocators", path.display()))
        .iter()
        .map(|(name, profile)| AllocatorOracle { name: name.clone(), json: profile.clone() })
        .collect()
}

/// Whether one `xmem.oom/1` event (as JSON) holds every fact of one expected
/// event, as `oom-facts-check.py` checks them: the same kind (an expected
/// `unrecognised`, another stack's memory error, is met by an event of any
/// kind), and every stated figure within its tolerance.
pub fn oom_event_holds(got: &Value, want: &Value) -> bool {
    let want = want.as_object().unwrap();
    let integer = |v: &Value| v.as_u64().map(i128::from).or_else(|| v.as_i64().map(i128::from));
    let bytes_hold = |key: &str, got: &Value| {
        let Some(value) = want.get(key) else { return true };
        let Some(got) = integer(got) else { return false };
        let tolerance = want.get(&format!("{key}_tolerance")).and_then(|t| t.as_f64()).unwrap_or(0.0);
        // (A figure past what 64 bits hold, R's `16777216 Tb`, is a float to serde_json: compared as one.)
        let off = match integer(value) {
            Some(value) => (got - value).abs() as f64,
            None => (got as f64 - value.as_f64().unwrap_or_else(|| panic!("{key}: not a number: {value}"))).abs(),
        };
        off <= tolerance + 0.5
    };
    let allocations = got["allocations"].as_array().unwrap();
    let first = allocations.first();
    let contains = |key: &str, field: &str| {
        want.get(key)
            .and_then(|v| v.as_str())
            .is_none_or(|part| first.and_then(|a| a[field].as_str()).is_some_and(|value| value.contains(part)))
    };
    (got["kind"] == want["kind"] || want["kind"] == "unrecognised")
        && want.get("memory_space").is_none_or(|space| {
            got["memory_space"].as_str().map(str::to_lowercase) == space.as_str().map(str::to_lowercase)
        })
        && want.get("error_code").is_none_or(|code| &got["error_code"] == code)
        && ["used_bytes", "capacity_bytes", "exceeded_by_bytes", "requested_bytes", "free_bytes"]
            .iter()
            .all(|key| bytes_hold(key, &got[*key]))
        && want.get("min_allocations").and_then(|n| n.as_u64()).is_none_or(|n| allocations.len() as u64 >= n)
        && (!want.contains_key("largest_allocation_bytes")
            || first.is_some_and(|a| bytes_hold("largest_allocation_bytes", &a["size_bytes"])))
        && contains("largest_allocation_op_name", "op_name")
        && contains("largest_allocation_shape", "shape")
        && want
            .get("program")
            .and_then(|p| p.as_str())
            .is_none_or(|program| got["program"].as_str().is_some_and(|got| got.contains(program)))
}

/// The bytes of a file, or of every file under a directory.
pub fn bytes_under(path: &Path) -> u64 {
    if path.is_dir() {
        std::fs::read_dir(path).unwrap().map(|entry| bytes_under(&entry.unwrap().path())).sum()
    } else {
        std::fs::metadata(path).unwrap().len()
    }
}

/// Removes a file or a directory with what it holds.
pub fn remove(path: &Path) {
    if path.is_dir() {
        std::fs::remove_dir_all(path).unwrap();
    } else {
        std::fs::remove_file(path).unwrap();
    }
}
