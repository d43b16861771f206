//! The words in which programs say that memory ran out, as data.
//!
//! Each stack has its own words for the same failure (`out of memory`,
//! `std::bad_alloc`, `CUBLAS_STATUS_ALLOC_FAILED`, `Memory limit of 512 MiB
//! exceeded`, `Cannot allocate memory`, …). The general reader
//! ([`general`](super::general)) knows none of the stacks: it looks a line up
//! in these tables. A new wording is one row of [`FAILURE_WORDS`]; a new way
//! of naming a size's meaning is one row of [`SIZE_ROLES`].
//!
//! A test holds, for every row, a line from a real log under `fixtures/`
//! (whose README names its source) and reads it back through the scanner:
//! the row must be what makes it an event (or, for [`SIZE_ROLES`], what gives
//! a size of the line its role). A row without such a line fails that test.
//!
//! The patterns are regexes written here, never built from a log; they are
//! compiled once, together.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::bytes::{Captures, Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use super::event::Kind;

/// The calls that allocate memory, as logs name them when they fail: in a row of
/// [`FAILURE_WORDS`], and in [`FAILED_CALL`], which reads the size they were given.
macro_rules! allocation_calls {
    () => {
        "VirtualAlloc|NSAllocateMemoryPages|mmap|mach_vm_map|commit_memory|posix_memalign|aligned_alloc|memalign|malloc|calloc|realloc|allocate|alloc"
    };
}

/// What the failure made impossible, its cause to follow (dart2js' title `Can no longer compile
/// our app due to OOM compiler crash`): what happened, told by the one it happened to.
macro_rules! inability_due_to {
    () => {
        r"(?i:\b(?:can(?:not|'t|\s+no\s+longer)|could(?:n't|\s+not|\s+no\s+longer)|unable\s+to)\s[^.;!?]{0,60}?\b(?:due\s+to|because\s+of)\s+(?:(?:an?|the)\s+)?$)"
    };
}

/// The words that a message may come, not that it came (`Out of memory errors may occur`).
macro_rules! may_come {
    () => {
        r"(?:may|might|can|could) (?:occur|happen|appear|arise|be (?:shown|displayed|seen|thrown|raised|reported))\b"
    };
}

/// A quoted message that may come, as an article lists it (Esri's `Failure messages such as
/// … “Out of memory” can occur.`): matched from the failure words on, past the closing mark.
pub(super) const QUOTE_MAY_COME: &str = concat!(
    r"^[^\x22'`\u{201c}\u{201d}\u{2018}\u{2019}]*[\x22'`\u{201c}\u{201d}\u{2018}\u{2019}][^.;:!?]{0,40}?\b",
    may_come!()
);

/// The verbs with which a writer reports meeting a failure: before its name ([`MET`]:
/// `there will be a MemoryError`), or after `I` or `we` ([`WRITER_MEETS`]: `We get HBM0
/// RESOURCE_EXHAUSTED error`).
macro_rules! meeting_verbs {
    () => {
        "it's|it is|it was|get|gets|got|getting|keep getting|am getting|are getting|seeing|am seeing|are seeing|there (?:is|was|will be)|there's|throws|threw|raised|crash(?:es|ed|ing)? with|fail(?:s|ed|ing)? (?:with|due to|because of)|errors? out with|errou?red with|errors with|(?:did )?exit(?:s|ed)? with|died (?:of|with)|ran into|runs? into|encounter(?:s|ed)?|receive[sd]?|hit|meet|meets|met|gives|gave|saw|had|(?:have |has )?(?:observed|noticed|experienced|faced)|(?:keep|keeps|kept) (?:getting|hitting|seeing|running into)|resulted in|led to|ended up (?:with|in)|(?:ultimately|eventually|finally|always|then) (?:results? in|leads? to)"
    };
}

/// What a wording says about where memory ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Closest {
    /// This kind of event, whatever else the line says.
    Kind(Kind),
    /// The host's memory, unless the line names a device ([`PLACE_WORDS`]).
    HostUnlessDevice,
    /// The place the line names ([`PLACE_WORDS`]) decides; `unrecognised` if it names none.
    ByPlace,
}

/// How sure the words alone are that the line reports a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strength {
    /// An error code or an exception class (`CUDA_ERROR_OUT_OF_MEMORY`,
    /// `std::bad_alloc`, `MemoryError`): only a failure prints it.
    Token,
    /// Plain words (`out of memory`, `not enough memory`): a failure when the
    /// line is an error record ([`ERROR_MARKS`], a log prefix, or the words
    /// opening the message), not when a person writes them.
    Phrase,
    /// Words that other resources share: gRPC's `RESOURCE_EXHAUSTED` is an
    /// API's quota or rate limit (`"code": 429, … "status":
    /// "RESOURCE_EXHAUSTED"`) as often as memory, and a number `larger than
    /// the maximum` may be an upload's size. Memory's failure, as sure as a
    /// [`Strength::Token`], only where the line names memory or a size
    /// ([`MEMORY_NAMED`]): `RESOURCE_EXHAUSTED: Out of memory while trying to
    /// allocate …`, `OOM when allocating tensor …`, `buffer 'data' size N is
    /// larger than buffer maximum of M`.
    Shared,
}

/// One way of saying that memory ran out.
pub(super) struct Wording {
    /// What the event lists in `failure_words`.
    pub name: &'static str,
    pub pattern: &'static str,
    pub closest: Closest,
    pub strength: Strength,
}

use Closest::{ByPlace, HostUnlessDevice};
use Strength::{Phrase, Shared, Token};

/// The failure vocabulary. Order matters only for the kind: the first row
/// that matches a line gives its closest kind, so rows that name a place
/// come before the general ones; every row that matches is listed.
pub(super) const FAILURE_WORDS: &[Wording] = &[
    Wording {
        name: "tried to allocate (GPU N; total capacity)",
        pattern: r"Tried to allocate [^(;]{1,40}\((?:GPU|XPU|NPU)\s*\d+; [^;]{1,40}total capacity",
        closest: Closest::Kind(Kind::PytorchCudaOom),
        strength: Token,
    },
    Wording {
        // PostgreSQL's dynamic shared memory, in a container's small `/dev/shm` (`could not resize
        // shared memory segment "/PostgreSQL.2138012727" to 16777216 bytes: No space left on
        // device`): the space left is memory's.
        name: "shared memory segment (PostgreSQL)",
        pattern: r"\bcould not (?:resize|create|allocate|map) shared memory segment\b[^:]{0,80}: No space left on device\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "shared memory exceeds",
        pattern: r"(?i)\bshared memory\b.{0,40}\bexceed",
        closest: Closest::Kind(Kind::TritonOutOfResources),
        strength: Phrase,
    },
    Wording {
        // A kernel's dynamic shared memory set over what the device has (gsplat's `Failed to set
        // maximum shared memory size (requested 7168 bytes), try lowering tile_size.`).
        name: "failed to set the maximum shared memory",
        pattern: r"(?i)\bfailed to set (?:the )?max(?:imum)? (?:dynamic )?shared memory\b",
        closest: Closest::Kind(Kind::TritonOutOfResources),
        strength: Phrase,
    },
    Wording {
        // ptxas, when a kernel's static shared memory is over the device's (`Entry function
        // 'fusion' uses too much shared data (0xc180 bytes, 0xc000 max)`).
        name: "uses too much shared data (ptxas)",
        pattern: r"\buses too much shared data\b",
        closest: Closest::Kind(Kind::TritonOutOfResources),
        strength: Token,
    },
    Wording {
        // A code for too little memory, whatever it is short of (minikube's `Exiting due to
        // RSRC_INSUFFICIENT_CONTAINER_MEMORY: docker only has 1771MiB available, …`).
        name: "INSUFFICIENT_MEMORY",
        pattern: r"\b(?:[A-Z]+_)?INSUFFICIENT_(?:[A-Z]+_)?MEMORY\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        name: "ALLOC_FAILED",
        // (nvJPEG's is `NVJPEG_STATUS_ALLOCATOR_FAILURE`, Rockchip's `RKNN_ERR_MALLOC_FAIL`.)
        pattern: r"\b[A-Z]+_(?:STATUS_|ERR_|ERROR_)?M?ALLOC(?:ATION)?_FAIL(?:ED)?\b|\b[A-Z]+_STATUS_ALLOCATOR_FAILURE\b",
        closest: Closest::Kind(Kind::RuntimeAllocationFailure),
        strength: Token,
    },
    Wording {
        // The CUDA and HIP runtimes' error 2 by its name, apart from ALLOC_FAILED so that the
        // words an event was made of are the log's own.
        name: "cudaErrorMemoryAllocation",
        pattern: r"\b(?:cuda|hip)ErrorMemoryAllocation\b",
        closest: Closest::Kind(Kind::RuntimeAllocationFailure),
        strength: Token,
    },
    Wording {
        // Android's ART without its `OutOfMemoryError` (a crash reporter's line): the host's.
        name: "failed to allocate a byte allocation (Android)",
        pattern: r"\bFailed to allocate a \d+ byte allocation with\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // NumPy's message without its `MemoryError` (a title pasting it): the host's.
        name: "unable to allocate for an array (NumPy)",
        pattern: r"\bUnable to allocate \S+ ?\w+ for an (?:array|object) with shape\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "ALLOCATION_FAILURE",
        // (Lowercased in a title: `OPENCL Error: cl_mem_object_allocation_failure`.)
        // (And as .NET's Cloo names it: `Cloo.MemoryObjectAllocationFailureComputeException`.)
        pattern: r"\b(?:[A-Z]+_)*ALLOCATION_FAILURE\b|\b(?:[a-z]+_)+allocation_failure\b|\bMem(?:ory)?ObjectAllocationFailure",
        closest: Closest::Kind(Kind::RuntimeAllocationFailure),
        strength: Token,
    },
    Wording {
        // Allegro Common Lisp's heap that the system would not grow (`Error: An allocation
        // request for 4112 bytes caused a need for 2621440 more bytes of heap.`, also `caused
        // tenuring and a need`), before its `[condition type: storage-condition]`.
        name: "a need for more heap (Allegro CL)",
        pattern: r"\ballocation request for \d+ bytes caused (?:\w+ and )?a need\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // gperftools' tcmalloc, reporting a large allocation that returned no memory (`tcmalloc:
        // large alloc 4294868992 bytes == (nil) @  0x776927f0`); one that returned an address is
        // a notice.
        name: "large alloc returned nil (tcmalloc)",
        pattern: r"\blarge alloc \d+ bytes == (?:\(nil\)|0x0|0)(?:\s|$)",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // A memory setting whose value a program found too small for the work (STAR's `FATAL
        // PARAMETER ERROR: limitGenomeGenerateRAM=31000000000 is too small for your genome`): the
        // memory it needs is over the limit it was given. The setting's name ends with its memory
        // (`RAM` after a lower-case letter: not `PARAM`).
        name: "memory setting too small",
        pattern: r"\b(?:\w*[a-z_])?(?:RAM|[Mm]emory|[Mm]em)\s*[=:]?\s*\d+(?:\.\d+)?\s*(?:[KMGT]i?B?|bytes)?\s*is too small\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        name: "runtime: out of memory",
        pattern: r"\b(?:runtime|fatal error): out of memory\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // The kernel's head of an OOM kill, without its `gfp_mask=…` (a title's `haproxy invoked
        // oom-killer`).
        name: "invoked oom-killer (Linux)",
        pattern: r"\binvoked oom-killer\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // GNU ld's static data over a memory region of the target (Zephyr's `region `RAM'
        // overflowed by 400708 bytes`): a RAM region (`RAM`, `SRAM1`, `CCMRAM`, `dram0_0_seg`, the
        // Nintendo DS's tightly coupled `itcm`, a 3DS payload's `memregion`), not flash, which
        // holds the program (nor a region named `program`). Or a section that will not fit in one
        // (devkitARM's `section `.text' will not fit in region `memregion'`), and cc65's ld65 over
        // a RAM area (`Segment 'ZEROPAGE' overflows memory area 'ZP' by 26 bytes`, the VIC-20's
        // `MAIN`), not its `ROM` or `KERNAL`.
        name: "RAM region overflowed (GNU ld)",
        pattern: r"(?i)\bregion [`'\x22]?(?:\w+_)?[a-z]{0,3}(?:ram|tcm|mem)\w*[`'\x22]? overflowed by\b|\bwill not fit in region [`'\x22]?(?:\w+_)?[a-z]{0,3}(?:ram|tcm|mem)\w*[`'\x22]?|\boverflows memory area [`'\x22]?(?:ZP|ZEROPAGE|MAIN|BSS|DATA|STACK|HEAP|\w*RAM\w*)[`'\x22]? by\b",
        closest: Closest::Kind(Kind::Unrecognised),
        strength: Token,
    },
    Wording {
        // bcc's `oomkill` tracer, one line per kill the kernel made (`17:39:52 Triggered by PID
        // 10505 ("a.out"), OOM kill of PID 1835561760 (…), … pages, loadavg: …`).
        name: "OOM kill of PID (bcc oomkill)",
        pattern: r"\bOOM kill of PID \d+",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "oom-kill event",
        pattern: r"(?i)\boom[-_]kill events?\b|\boom[-_]kill event\(s\)",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // (Also all of it used, then the kill: Viseron's title `Docker container consumes all
        // available memory and gets killed - "exited with code 137"`.) (The kill and the memory
        // in one sentence: not ROOT's `… right after killing the process. So it's not chrome which
        // fills my memory`.) (The killer named as one word: `OOM_KIller kills NFS-Ganesha 2.6.3`.)
        name: "killed for memory",
        pattern: r"(?i)\bkill(?:ed|ing)?\b(?:[^.!?]|[.!?]\S){0,60}\b(?:memory|oom)\b|\bkilled \S+ (?:due to|because of) (?:\w+ )?memory\b|\b(?:oom|memory pressure|RAM)\b.{0,40}\bkill(?:s|ed|ing)?\b|\bmemory (?:is|was|gets|got|has been) (?:\w+ )?(?:full|filled(?: up)?),? (?:and |then )?(?:\w+ ){0,3}?killed\b|\b(?:consum|us|eat|tak)\w* (?:up )?all (?:the )?(?:available )?(?:memory|RAM)\b[^.;]{0,30}?\bkilled\b|\bsystemd-oomd(?:\[\d+\])?:? killed\b|\boom[-_ ]?killer (?:kills|killed|is killing|keeps killing|(?:gets |got |was |is |being )?(?:triggered|invoked|activated))\b|\btoo much memory\b|\blowmemorykiller\b.{0,20}\bkill|\bkill_by_memory",
        closest: Closest::Kind(Kind::HostOom),
        strength: Phrase,
    },
    Wording {
        name: "low on memory (eviction)",
        // (Also the kubelet's eviction for the node's condition: `Evicted … The node had
        // condition: [MemoryPressure].`)
        pattern: r"\blow on resource: memory\b|\bnode had condition:\s*\[[^\]]*\bMemoryPressure\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // A process's use of memory over its limit, in parentheses after it (Pants' `pantsd
        // process 60970 was using 1428697088 bytes of memory (above the limit of 1073741824
        // bytes).`).
        name: "memory above its limit",
        pattern: r"(?i)\bof memory \(above the (?:`[^`]{1,40}` )?limit\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // (And a limit's figure before the verb: Odoo's `odoo.service.server: Server virtual memory
        // limit (4489629696) reached.`)
        name: "memory limit exceeded",
        pattern: r"(?i)\bmemory\b[\w ]{0,20}\b(?:limits?|quota)\b.{0,40}?\bexceed|\bexceed(?:s|ed|ing)?\b.{0,20}\bmemory (?:\w+ )?(?:limits?|quota|budget)\b|\bmemory (?:limit|quota|ceiling) (?:\(\d+\) )?(?:was |has been )?(?:reached|hit)\b|\bexceeded mem limit\b|\bmemory (?:capacity|usage|limit|quota|budget) exceeded\b|\b(?:RAM|memory) (?:was |has been )?exceeded\b|\bmax(?:imum)? heap size (?:was |has been |is )?(?:exceeded|reached)\b|\bmemory (?:usage|use)\b[^.;]{0,20}?\bexceed|\b(?:has gone|have gone|went|goes|is|was) over (?:the |its |their )?memory limit\b|\b[a-z]\w*Memory\w* limit exceeded\b",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        name: "memory over a job's limit",
        pattern: r"(?i)\b(?:p?v?mem|rss)\b[^.;]{0,40}\bexceed(?:s|ed)? (?:the |its )?limit\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Phrase,
    },
    Wording {
        // Grid Engine's execution daemon killing a job over its memory limit (`failed execd
        // enforced h_vmem limit because: job 761625.1 died through signal KILL (9)`, `job 2381
        // exceeds job hard limit "h_vmem" of queue …`).
        name: "over a Grid Engine memory limit (h_vmem)",
        pattern: r#"(?i)\benforced [hs]_(?:vmem|rss) limit\b|\bexceeds (?:job|queue) (?:hard|soft) limit "?[hs]_(?:vmem|rss)\b"#,
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "beyond memory limits",
        pattern: r"(?i)\bbeyond (?:the |its )?(?:\w+ )?memory limits?\b",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        name: "a notebook's kernel out of RAM (Colab, Kaggle)",
        pattern: r"(?i)\b(?:your )?session crashed after using all available (?:RAM|memory)\b|\b(?:your )?notebook tried to allocate more memory than is available\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "System is out of GPU memory",
        pattern: r"\bSystem is out of GPU(?: and shared host)? memory\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        name: "low memory (earlyoom)",
        // (Before 1.3: `Low memory! mem avail: 327 of 5875 MiB (5) % <= min 10 %`.)
        pattern: r"(?i)\blow memory! at or below SIG\w+ limits\b|\bLow memory! mem avail: \d",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "low virtual memory condition (Windows)",
        pattern: r"\bWindows successfully diagnosed a low virtual memory condition\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "OOM command not allowed (Redis)",
        pattern: r"\bOOM command not allowed\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "circuit breaker: data too large",
        pattern: r"(?i)\bcircuit_?breaking_?exception\b|\bData too large, data for \[",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "terminated due to memory (iOS)",
        pattern: r"(?i)\bterminated due to memory (?:issue|pressure|error|limit)\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Phrase,
    },
    Wording {
        name: "held due to memory usage (batch schedulers)",
        pattern: r"(?i)\b(?:put on hold|held|evicted|preempted)\b[^.;]{0,60}\bdue to (?:excessive |high )?memory (?:usage|use|limit)\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "could not reserve space for the heap (JVM)",
        // (Or for its compiled code, under an address-space limit: the isolate sandbox's `Error
        // occurred during initialization of VM` / `Could not reserve enough space for code cache`.)
        pattern: r"(?i)could not reserve enough space for (?:\S+ )?(?:object heap|code cache)",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "free memory less than desired (vLLM)",
        pattern: r"(?i)\bfree memory on device\b.{0,40}\bis less than desired\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        name: "memory is full",
        pattern: r"(?i)\b(?:your )?(?:GPU |video |device |graphics )?(?:memory|v?RAM) is (?:\w+ly )?full\b|\b(?:GPU|video|device|graphics|texture) memory (?:\w+ly )?full\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // Chinese, Japanese, Korean and Russian for `not enough memory` and `memory
        // overflow` (what their posts call an OOM), each as the posts write it.
        name: "not enough memory, in Chinese, Japanese, Korean or Russian",
        // (Also a machine translation's `CUDA:没有记忆`, `out of memory` word for word.)
        pattern: r"(?:内存|显存|メモリ)(?:资源)?(?:不足|溢出|不够|が足りません|が足りず|が足りない|が足りなく)|메모리 ?부족|(?:Н|н)едостаточно (?:\S+ )?памяти|(?:Н|н)ехватка (?:\S+ )?памяти|CUDA\s*(?::|：)\s*没有记忆",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // Polish for `not enough memory` (Hyper-V's `Za mało pamięci w systemie do uruchomienia
        // maszyny wirtualnej …`, Windows' `Za mało zasobów pamięci, aby można było zakończyć tę
        // operację.`).
        name: "not enough memory, in Polish",
        pattern: r"\b[Zz]a mało (?:zasobów )?pamięci\b|\b[Bb]rak (?:wystarczającej (?:ilości )?)?pamięci\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // German for `not enough memory` (gfortran's `Nicht genügend Hauptspeicher verfügbar`,
        // Windows' `Nicht genügend Speicher verfügbar, um diesen Befehl zu verarbeiten.`), not for
        // a disk's space (`Nicht genügend Speicherplatz`).
        name: "not enough memory, in German",
        // (And memory running short: PrusaSlicer's `…dadurch verursacht, dass der Speicher knapp wird.`)
        pattern: r"[Nn]icht (?:genügend|genug|ausreichend) (?:Haupt|Arbeits|Grafik|Video)?[Ss]peicher\b|\b(?:Haupt|Arbeits|Grafik|Video)?[Ss]peicher (?:zu )?knapp (?:wird|wurde|ist|war)\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // German for an allocation that could not be made, as GRASS' translated messages print
        // it (`FEHLER: G_malloc: Kann nicht 2272853112 Byte auf init_vars.c:134 reservieren`).
        name: "cannot allocate, in German",
        pattern: r"(?i)\b\w*alloc\w*:\s*kann nicht\b|\bkann nicht [\d.,]+ ?(?:Bytes?|[KMGT]i?B)\b[^.;]{0,40}?\b(?:reservieren|allozieren|zuweisen)\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // French, Spanish, Portuguese and Italian for `not enough memory`; French, Spanish and
        // Italian for `memory exhausted` (gettext's translations of glibc's and PostgreSQL's:
        // `memoria agotada`, `mémoire épuisée`, `memoria esaurita`) and for ENOMEM's `Cannot
        // allocate memory` (`No se puede asignar memoria`, `Impossible d'allouer de la mémoire`,
        // `Impossibile allocare memoria`). (Portuguese's `memória esgotada` holds no anchor: the
        // packed search has no room for one more.)
        name: "out of memory, in French, Spanish, Portuguese or Italian",
        pattern: concat!(
            r"[Mm](?:é|e|É|E)moire (?:[Ii]nsuffisante|(?:é|e)puis(?:é|e)e)\b|[Mm]em(?:ó|o)ria [Ii]nsuf(?:f)?iciente\b|[Mm]emoria (?:agotada|esaurita)\b",
            r"|\b[Nn]o se puede asignar (?:la )?memoria\b|\b[Ii]mpossible d'allouer (?:de la )?m(?:é|e)moire\b",
            r"|\b[Ii]mpossibile allocare (?:la )?memoria\b"
        ),
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // A title that is only the failure's name (`Memory Error`, `memory out`), or a line that
        // labels it an error (Lua fairseq's `Error: memory error.`).
        name: "the failure's name alone",
        pattern: r"(?i)(?:^\W*|^\W*error:\s*)(?:memory error|memory out)\W*$",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        name: "Allocation on device (cut)",
        pattern: r"\bAllocation on device(?: \d+)?\s*$",
        closest: Closest::Kind(Kind::PytorchCudaOom),
        strength: Phrase,
    },
    Wording {
        // (Also as Verilator's parser spelled it: `mux_wrap.v: 5025: memory exausted.`; or with the
        // verb first, PolarRoute's title `Mesh generation on laptop exhausted memory`.)
        name: "memory exhausted",
        pattern: r"(?i)\b(?:(?:virtual|physical|shared|system|device|host|GPU|video) )?(?:memory|mem)\b[\w ]{0,30}\bexh?austed\b|\bheap (?:space )?(?:is |was |has been )?exhausted\b|\bexhausted (?:\w+ )?heap(?: space)?\b|^\s*exhausted during (?:allocation|garbage collection)\b|\bmemory exhaustion\b|\bexhaust(?:ed|s|ing) (?:all )?(?:the |its )?(?:available )?(?:system |host |GPU |device )?(?:memory|RAM)\b",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        // Chromium's handlers for an allocation that failed, which crash the process on purpose:
        // a crash report's frames name them (`partition_alloc::internal::OnNoMemoryInternal(unsigned
        // __int64) ( oom.cc:41 )`, `base::internal::OnNoMemory`, `TerminateBecauseOutOfMemory`).
        name: "out-of-memory crash handler in a stack (Chromium)",
        pattern: r"\bOnNoMemory(?:Internal)?\(|\bTerminateBecauseOutOfMemory\b|\bPartitionOutOfMemory\w*\(",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // Ada's exception for storage that could not be had: a pool's or the heap's
        // (`raised STORAGE_ERROR : s-poosiz.adb:108 explicit raise`, `… : heap exhausted`), not
        // GNAT's signal handler's `stack overflow or erroneous memory access`, a fault.
        name: "STORAGE_ERROR raised (Ada)",
        pattern: r"\bSTORAGE_ERROR\s*:\s*(?:heap exhausted|object too large|[\w.-]+\.adb:\d+ explicit raise)\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // MuJoCo's arena for a step's scratch data, which it calls its stack, too small for what
        // the step asks of it (`ERROR: stack overflow: max = 299869096, available = 97857896,
        // requested = 106218000`; newer versions say `mj_stackAlloc: out of memory`).
        name: "arena stack overflow with its figures (MuJoCo)",
        pattern: r"\bstack overflow: max = \d+, available = \d+, requested = \d+",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // RIOT's packet buffer, the arena every packet of its network stack is allocated from,
        // with no room for one more (`ping ff02::1` / `error: packet buffer full`).
        name: "packet buffer full (RIOT)",
        pattern: r"\berror: packet buffer full\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // WebKit's notice when it killed a tab's process for its memory and loaded the page again.
        name: "reloaded for using significant memory (Safari)",
        pattern: r"(?i)\breloaded because it was using significant memory\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Phrase,
    },
    Wording {
        // An allocation refused before it is tried (Sapphire's `Windows reports memory too low on
        // GPU 0 to reliably allocate 1297920 byte block.`, after which it renders on the CPU).
        name: "memory too low to allocate",
        pattern: r"(?i)\bmemory (?:is |was )?too low (?:on [\w ]{1,20} )?to (?:\w+ )?allocate\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // PHP's own message, which states its failure wherever it is quoted (`a Symfony
        // FatalErrorException, Allowed memory size of 536870912 bytes exhausted that occurs …`).
        name: "allowed memory size exhausted (PHP)",
        // (Its figures may be elided: Piwigo's title `Fatal error: Allowed memory size of ...
        // exhausted`. Or its middle cut, the file it failed in after the
        // limit: Dolibarr's `Fatal error: Allowed memory size of 1342177728bytes in C:\...\Color…`.)
        pattern: r"\bAllowed memory size of (?:\d+|\.{3}|…)(?: bytes)? exhausted\b|\bAllowed memory size of \d+\s*bytes in\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "bad_alloc",
        // (Windows' what() of it, after a logger's `Unhandled C++ exception.`.)
        // (Or ending a line, after a colon or a sentence: ONNX Runtime's `Exception during
        // initialization: bad allocation`, PrusaSlicer's `… glad if you reported it. bad allocation`,
        // hMailServer's `Message: bad allocation`.)
        // (Or a library's own class for it, thrown: Ginkgo's `terminate called after throwing an
        // instance of 'gko::AllocationError'`.) (A mark a paste left after it is none of its
        // words: Mapnik's `RuntimeError: bad allocation_`.) (The functions that throw it, in a
        // debugger's frame: `#9 0x… in qBadAlloc() () from …/libQt6Core.so.6`.) (Its mangled name,
        // as an old libstdc++ prints the class: PowerDNS's `Exception building answer packet
        // (St9bad_alloc) sending out servfail`.) (EGL_BAD_ALLOC's own description, where the code is
        // not printed: mutter's `failed to import supplied dmabufs: EGL failed to allocate resources
        // for the requested operation.`) (A library's own class by its whole name: libigl's CoMISo
        // `throws a BadAllocation exception`.)
        pattern: r"\b(?:St9)?bad_alloc\b|\bBadAlloc(?:ation)?\b|\bEGL_BAD_ALLOC\b|\bEGL failed to allocate resources\b|(?:Error|Exception|exception|what\(\)|Message)[:.]\s*bad allocation_?\b|\bbad allocation\s*$|\bthrowing an instance of '(?:\w+::)*\w*Alloc(?:ation)?(?:Error|Exception|Failure)'|\b(?:qBadAlloc|__throw_bad_alloc)\(\)",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // Windows' what() of `std::bad_alloc` opening a message of its own, where no class or
        // label names it (Bambu Studio's `… or a bug may have occurred. bad allocation" during
        // slicing`): as plain words, not where a person writes of a bad allocation of something.
        name: "bad allocation",
        pattern: r"\bbad allocation\b",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        // V8's `RangeError: Array buffer allocation failed`, also where a title cuts it before
        // `failed` (Obsidian's `Unable to backup, RangeError: Array buffer allocation`).
        name: "Array buffer allocation (V8)",
        pattern: r"\bRangeError: Array buffer allocation\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // A request said to be over the limit beside it (bamdst's `[NeedMEM] trying to allocate
        // 598017592 bytes (limits: 500000000)`).
        name: "allocation over its limit",
        pattern: r"(?i)\btrying to allocate [\d.,]+ ?(?:bytes|[KMGT]i?B)\b[^.;]{0,10}\(\s*limits?\s*[:=]\s*\d",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // Data too large for the memory there is (metaSPAdes' `The reads contain too many k-mers
        // to fit into available memory. You need approx. 142.954GB of free RAM …`).
        name: "too much to fit into available memory",
        pattern: r"(?i)\btoo (?:many|much|large|big)\b[^.;]{0,40}?\bto fit (?:in|into) (?:the )?(?:available|free) (?:memory|RAM)\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // A program's own check of a request against what is there, the request first and
        // larger (planetiler's `26G JVM heap requested for read phase, 21G available`, under
        // its `Insufficient resources for read phase`).
        name: "memory requested, less available",
        pattern: r"(?i)\b\d[\d.]*\s*[KMGT]i?B?\s+(?:JVM heap|heap|off-heap memory|memory|RAM)\s+requested\b[^,;]{0,40},\s*\d[\d.]*\s*[KMGT]i?B?\s+available\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        name: "Cannot allocate memory (ENOMEM)",
        pattern: r"(?i)\bcannot allocate memory\b|\[Errno 12\]|\bENOMEM\b|\berrno(?:=|:? )12\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        name: "paging file too small",
        // (Windows in German: `Die Auslagerungsdatei ist zu klein, um diesen Vorgang durchzuführen.`)
        pattern: r"(?i)\b(?:the )?paging file is too small\b|\bWinError 1455\b|\b(?:os error|errno=)1455\b|\bAuslagerungsdatei ist zu klein\b|页面文件太小",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "array exceeds maximum array size",
        // MATLAB's `Requested 100000x100000 (74.5GB) array exceeds maximum array size
        // preference`, and the JVM's `Requested array size exceeds VM limit`, which it prints
        // with or without its `OutOfMemoryError`.
        pattern: r"\barray exceeds maximum array size\b|\bRequested array size exceeds VM limit\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "shutting down the JVM for GC thrashing (Beam, Dataflow)",
        pattern: r"(?i)\bshutting down (?:the )?JVM after \d+ consecutive periods of measured GC thrashing\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // The JVM's `OutOfMemoryError: GC overhead limit exceeded`, which Maven and Gradle
        // print without its class (`[ERROR] GC overhead limit exceeded -> [Help 1]`).
        name: "GC overhead limit exceeded (JVM)",
        // (Its end may be glued to the next thread's message: Cromwell's `GC overhead limit
        // exceededUncaught error from thread […]`.)
        // (In any case: Hail's title `GC Overhead limit exceeded on Stage 2 of import_vcf.write`.)
        pattern: r"(?i)\bGC overhead limit exceeded",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // Android's Dalvik before 3.0: `java.lang.OutOfMemoryError: bitmap size exceeds VM budget`.
        name: "exceeds VM budget (Android)",
        pattern: r"\bexceeds VM budget\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // The kernel's cgroup v1 kill: `Task in /nomad/ebf7… killed as a result of limit of /nomad/ebf7…`.
        name: "killed as a result of a cgroup's limit (Linux)",
        pattern: r"\bkilled as a result of limit of\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "cannot allocate vector",
        // (Also as a person types it over: rdhs' title `Error: cannont allocate vector of size 4.6
        // Mb`.)
        pattern: r"\bcann?on?t allocate vector of size\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "allocation failed",
        pattern: concat!(
            // (Maybe with the call named between: NetCDF's `Memory allocation (malloc) failure`;
            // or the verb for the noun, as UniVRM's title `Memory allocate error at VRMFirstPerson.Setup`.)
            r"(?i)\b(?:memory )?allocation (?:[^ ]{1,30} ){0,6}?failed|\b(?:memory|storage|device)(?: object)? allocat(?:ion|e) (?:\(\w+\) )?(?:failure|error|fail)\b",
            // The failure named, its details after a colon (XRT's `Check failed: bo_ != XRT_NULL_BO
            // allocation failure:  xrt_.handle 0x28fea590 … size  419795968`).
            r"|(?i:\ballocation failure:)",
            // Or as a program's own error in allocating, its variable after a colon or nothing
            // after it (DSurfTomo's Fortran `error with allocate: integer iw`); not a title's
            // `Error with memory allocating using JetsonTX2`, a question about a call.
            r"|(?i:\berror (?:in|with|during|while|when) (?:the )?(?:memory )?allocat(?:e|ion|ing)(?:\s*:|\W*$))",
            // (Or a problem met in allocating it: DIALS' `There was a problem allocating memory for
            // shoeboxes.`)
            r"|(?i:\bwas a problem allocating (?:\w+ )?memory\b)",
            // (Or of a thing named after it: mruby's `allocation failure of OnigMatchData`.)
            r"|(?i:\ballocation failure of [a-z_]\w*)",
            // Or as a message's whole text: a field's value (AWS Neuron's `nrt_tensor_allocate
            // status=4 message="Allocation Failure"`), or the record's last words (Suricata's
            // `[ERRCODE: SC_ERR_POOL_INIT(66)] - alloc error`), or with its detail in parentheses
            // (MAFFT's `Allocation error( 32239 int vec )`), or after the variable's name (SCHISM's
            // `ABORT: AQUIRE_HGRID: ilnd_global allocation failure`). (Not the JVM's `[GC (Allocation
            // Failure) …]`, a collection's cause.)
            r#"|(?i:\b(?:message|msg|reason|error|err)\s*[=:]\s*["'\[]?(?:memory )?alloc(?:ation)? (?:failure|error)\b|(?:^|\s-|:)\s*(?:[A-Za-z]\w*_\w* )?(?:memory )?alloc(?:ation)? (?:failure|error)(?:\W{0,3}$|\s*\())"#,
            // An allocation of a buffer or of memory, in the act (ethminer's `Allocating/mapping
            // single buffer failed with: clCreateBuffer(-61)`, TNN's `OpenCL Conv malloc memory failed`).
            // (Or where it was to be: PaRSEC's `Allocating 79855878144 bytes of memory on the GPU device failed`;
            // or of many: ESP-IDF's `alloc frame buffers failed`.)
            r"|\b(?:m|c|re)?alloc(?:ate|ating)?(?:/\w+)? (?:[^ ]{1,30} ){0,3}?(?:buffers?|memory)(?: (?:on|in|for|from)(?: [^ ]{1,30}){1,3}?)? failed\b",
            // (Or its error: MNN's `Alloc buffer error for cpu backend`.)
            r"|(?i:\b(?:m|c|re)?alloc(?:ate)? (?:buffer|memory) (?:error|failure)\b)",
            // A function named for allocating (Sophon's `bm_alloc_gmem failed`, `kmem_alloc failed`,
            // Leptonica's `pixdata_malloc fail for data`).
            r"|\b[a-z]\w*_\w*alloc\w*(?:\(\))? fail(?:ed)?\b",
            r"|\b(?:",
            allocation_calls!(),
            r") (?:of|for) .{1,40}? failed|\b(?:",
            allocation_calls!(),
            // (A call's template or space in brackets: Kokkos' `HostSpace::allocate[ INTEL_MM_ALLOC ]( 18446743565090964400 ) FAILED`.)
            r")(?:\[[^\]]{0,40}\])?\s*\([^)]{0,80}\)\s*failed|\w*alloc\(\) failed\b|\bfail(?:ure|ed) in \w*alloc",
            // (GHC's RTS: `malloc: failed on request for 72 bytes`.)
            r"|\b(?:",
            allocation_calls!(),
            r"):\s*failed on request\b",
            // The call named alone as what fails (`Malloc fails even if memory is available.`,
            // `"VirtualAlloc commit failed" when loading rmine2.`, Cactus' `[SIMDMalloc]
            // posix_memalign fail!`).
            r"|(?i:\b(?:",
            allocation_calls!(),
            r")\s+(?:commit\s+)?(?:fails|failed|fail\s*!))"
        ),
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        name: "vkAllocateMemory failed (Vulkan)",
        // -2 is VK_ERROR_OUT_OF_DEVICE_MEMORY, -1 VK_ERROR_OUT_OF_HOST_MEMORY; with any other code
        // the allocation failed all the same (ncnn's `vkAllocateMemory failed -10`), and so without
        // one (upscayl's title `vkAllocateMemory Failed`). The Vulkan
        // Memory Allocator's calls return the first two: `vmaCreateImage failed with error -2`.
        pattern: r"\b[vV][kK]AllocateMemory (?i:failed)\b|\b(?:vkAllocateMemory|vma[A-Z]\w*) failed with error -[12]\b",
        closest: Closest::Kind(Kind::RuntimeAllocationFailure),
        strength: Token,
    },
    Wording {
        name: "page allocation failure (Linux)",
        pattern: r"\bpage allocation failure: order:\s*\d+",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // The kernel's own words for a reserve it could not fill or that ran dry: the panic when
        // the OOM killer finds nothing to free (`Kernel panic - not syncing: System is deadlocked
        // on memory`), the DMA bounce pool's (`swiotlb buffer is full (sz: 4000 bytes)`, x86's
        // older `DMA: Out of SW-IOMMU space for 65536 bytes`) and the boot-time huge pages'
        // (`HugeTLB: allocating 1024 of page size 2.00 MiB failed.`).
        name: "the kernel's reserve exhausted (Linux)",
        pattern: concat!(
            r"\bSystem is deadlocked on memory\b|\bswiotlb buffer is full\b|\bOut of SW-IOMMU space for \d+ bytes\b",
            r"|\bHugeTLB: allocating \d+ of page size \S+ \S+ failed\b"
        ),
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // (TeX's fixed arrays of memory words: `main memory size`, LuaTeX's `node memory size`,
        // `font memory`; its other capacities, `input stack size` or `pool size`, are not memory.)
        name: "TeX capacity exceeded (memory)",
        pattern: r"\bTeX capacity exceeded, sorry \[(?:main|node|font|extra) memory\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "killed: out of swap space (FreeBSD)",
        pattern: r"(?i)\bkilled:? out of swap(?: space)?\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        name: "OutOfMemoryException",
        pattern: r"\bOutOfMemoryException\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // (Chrome's sandbox: `SBOX_FATAL_MEMORY_EXCEEDED`.)
        name: "memory limit code",
        // (SMAC's and auto-sklearn's run status `StatusType.MEMOUT`, `Memout (used more than 1024 MB).`)
        pattern: r"\bEXCEEDED_\w*MEMORY_LIMIT\b|\bMEMORY_LIMIT_EXCEEDED\b|\b[A-Z]+_FATAL_MEMORY_EXCEEDED\b|\bMEMOUT\b|\bMemout \(used more than\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // The CUDA runtime's error 2 (cudaErrorMemoryAllocation) from an allocation call
        // (nvdiffrast's `RuntimeError: Cuda error: 2[cudaMalloc(&m_gpuPtr, bytes);]`).
        name: "CUDA error 2 from an allocation call",
        pattern: r"(?i)\bcuda error:?\s*2\s*\[\s*(?:cu|cuda)\w*(?:malloc|alloc)\w*\(",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // llama.cpp's server when the KV cache, allocated up front for the context, is full
        // (`update_slots: failed to find free space in the KV cache, retrying with smaller batch size`).
        name: "no free space in the KV cache (llama.cpp)",
        pattern: r"(?i)\bfailed to find (?:a )?free space in the KV cache\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // TensorFlow Lite Micro's tensor arena (`Arena size is too small for all buffers. Needed
        // 212064 but only 191120 was available.`).
        name: "arena size is too small (TFLite Micro)",
        pattern: r"(?i)\barena size is too small\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // MSVC's C3859 (`c1xx : error C3859: Failed to create virtual memory for PCH`): the
        // compiler could not reserve its precompiled header's address space.
        name: "failed to create virtual memory (MSVC)",
        pattern: r"(?i)\bfailed to create virtual memory\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // MSVC's C1076 (`fatal error C1076: compiler limit: internal heap limit reached`).
        name: "internal heap limit reached (MSVC)",
        pattern: r"(?i)\binternal heap limit reached\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // Android's status_t -12 (`MediaCodec: Codec reported err 0xfffffff4/NO_MEMORY, actionCode 0`).
        // (Or in camel case as an error's value: librsvg's `glib: rendering error: NoMemory`.)
        name: "NO_MEMORY status (Android, librsvg)",
        pattern: r"\bNO_MEMORY\b|\b[Ee]rror:\s*NoMemory\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // Kubernetes' admission of a pod to a node (`OutOfmemory: Pod Node didn't have enough
        // resource: memory, requested: …, used: …, capacity: …`).
        name: "not enough resource: memory (Kubernetes)",
        pattern: r"(?i)(?:\bnot|n't) have enough resources?: memory\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // A task's end told with its cause (`Command exited with return code -9 due to RAM`).
        name: "ended due to memory",
        pattern: r"(?i)\b(?:exited|killed|died|crash(?:ed|es)|terminated|aborted)\b[^.;]{0,60}\bdue to (?:the )?(?:lack of |insufficient |low |not enough )?(?:RAM|memory)\b",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        // The CUDA driver's numbered result (`CUresult error result=2 … func=cu_mem_create`):
        // 2 is CUDA_ERROR_OUT_OF_MEMORY.
        name: "CUDA result 2",
        pattern: r"\bCUresult\b(?:\s+(?:error|code))?\s+(?:result\s*)?[=:]?\s*2\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // Resources in general, which another sentence may tell are memory (LM Studio's `Model
        // loading was stopped due to insufficient system resources. Under the current settings,
        // this model requires approximately 273.25 GB of memory`); else another resource's.
        name: "insufficient resources",
        pattern: r"(?i)\binsufficient (?:system |hardware )?resources\b",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        // An allocator could not get more memory from the system: the Boehm GC's `GC Warning:
        // Failed to expand heap by 16384 KiB`, before its `Out of Memory!`, and dmalloc's
        // `could not extend heap 4096 more bytes`. (And a title's: MediaPipe's WebAssembly `Pose
        // solution intermittently aborts failing to grow heap to 60MB from 50MB`.) (GAP calls its
        // heap the workspace: `Panic in src/sysmem.c:654: cannot extend the workspace any more!`)
        name: "could not grow the heap (Boehm GC, dmalloc)",
        pattern: r"(?i)\b(?:fail(?:ed|ing|s)? to|could not|couldn't|cannot|can't|unable to) (?:expand|extend|grow) (?:the )?(?:heap\b|workspace any ?more\b)",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // GPT Mobile's `Error: system memory overloaded`.
        name: "memory overloaded",
        pattern: r"(?i)\bmemory (?:is |was )?overloaded\b",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        // systemd-oomd's report of the cgroups it chose from before it kills (`systemd-oomd[1852]:
        // Considered 50 cgroups for killing, top candidates were:`).
        name: "cgroups considered for killing (systemd-oomd)",
        pattern: r"\bConsidered \d+ cgroups for killing\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // SGLang's `Loaded weights leave no GPU memory for the KV cache`, Kamailio's
        // `db_allocate_row(): no private memory left`.
        name: "no memory left",
        pattern: r"(?i)\b(?:leaves?|left|with) no GPU memory\b|\bno GPU memory (?:left|available|remaining)\b|\bno memory (?:left|remaining)\b|\bno (?:private|shared) memory left\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // A program's check of its own memory use against its cap, the two figures compared
        // (storjnode's `CRITICAL storjnode.api 241: Excessive memory usage 104882176 > 104857600!`).
        // (`Excessive`, not any `memory usage`: a training log prints that on every step, and a
        // hint of it would send every such line through the whole vocabulary.)
        name: "memory usage over its cap (A > B)",
        pattern: r"(?i)\bexcessive memory usage:?\s+[\d.,]+\s*(?:[KMGT]i?B|bytes)?\s*>\s*[\d.,]+",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        // Kamailio's (SER's) memory manager found no free fragment as large as the request in its
        // pool (`qm_malloc(0x809132000, 3976) called from core: …; Free fragment not found!`).
        name: "free fragment not found (Kamailio)",
        pattern: r"\bFree fragment not found\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // NVENC's status 10 is NV_ENC_ERR_OUT_OF_MEMORY (`nvEncOpenEncodeSessionEx(…) returned
        // error 10`).
        name: "NVENC error 10",
        pattern: r"\bnvEnc\w+\b[^.;]{0,80}\breturned error 10\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // An error that tells the allocation it attempted (ClamAV's `LibClamAV Error:
        // cli_realloc(): Attempt to allocate 190840848 bytes.`): the attempt failed. So does an
        // assertion that tells it (OpenModelica's `pool_expand: Assertion `0 && "Attempt to
        // allocate an unusually large memory. …"' failed.`).
        name: "an error's attempt to allocate",
        pattern: r"(?i)\b(?:error|assertion)\b[^.;]{0,80}?\battempt(?:ed)? to (?:re)?allocate\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // kraken2's `Failed attempt to allocate 95668727220bytes`.
        name: "failed attempt to allocate",
        pattern: r"(?i)\bfailed attempt to (?:re)?allocate\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // The Vulkan validation layer's check of an allocation against its heap
        // (`vkAllocateMemory: attempting to allocate 268435456 bytes from heap 2,but size of that
        // heap is only 257949696 bytes.`): a device's heap, as `vkAllocateMemory failed` is.
        name: "an allocation larger than its heap (Vulkan)",
        pattern: r"(?i)\battempting to allocate \d+ bytes from heap \d+,\s*but size of that heap is only\b",
        closest: Closest::Kind(Kind::RuntimeAllocationFailure),
        strength: Phrase,
    },
    Wording {
        // An allocation that returned no memory (dpctl's `RuntimeError: Null memory pointer
        // returned`).
        name: "null memory pointer returned",
        pattern: r"(?i)\bnull memory pointer returned\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // A buffer larger than the largest allocation an OpenCL device allows (LuxCore's `The
        // Merge buffer is too big for … device (i.e. CL_DEVICE_MAX_MEM_ALLOC_SIZE=402653184)`).
        name: "over the device's largest allocation (OpenCL)",
        pattern: r"(?i)\b(?:too (?:big|large)|exceeds?|larger than|greater than)\b[^;]{0,100}?\b(?:CL_DEVICE_)?MAX_MEM_ALLOC_SIZE\b",
        closest: Closest::Kind(Kind::RuntimeAllocationFailure),
        strength: Token,
    },
    Wording {
        // Fluent Bit pauses an input whose memory buffer reached its `Mem_Buf_Limit` (`[ warn]
        // [input] systemd.0 paused (mem buf overlimit)`), and drops or delays its records.
        name: "memory buffer over its limit (Fluent Bit)",
        pattern: r"(?i)\bpaused \(mem buf overlimit\)",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // An allocation call's size, then its failure (slapd's `ch_calloc of 1 elems of
        // 60129541696 bytes failed`), or a component's failed call (SSIS's `The buffer manager
        // failed a memory allocation call for 10484760 bytes`).
        name: "an allocation call of N bytes failed",
        pattern: r"(?i)\b\w*[cm]alloc of [^.;]{0,40}\bbytes failed\b|\bfailed a memory allocation call\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        name: "a device allocation call failed",
        pattern: r"\b(?:cu|cuda|hip)\w*(?:Alloc|Malloc)\w* (?i:failed)\b|\b(?i:failed) (?:on|in|at) (?:cu|cuda|hip|gpu)\w*(?:Alloc|Malloc)\w*\(",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        name: "not enough memory resources to complete (Windows)",
        pattern: r"(?i)\b(?:not )?enough (?:memory resources|storage is available)\b[^.]{0,40}\b(?:complete|process) this (?:operation|command)\b|\bE_OUTOFMEMORY\b|\b(?:0x)?8007000[8E]\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // PyTorch's figures of a CUDA OOM without its head, pasted alone: only its message
        // prints them so.
        name: "CUDA OOM figures without their head (PyTorch)",
        pattern: r"\(GPU \d+; \d+(?:\.\d+)? [KMGT]iB total capacity; \d+(?:\.\d+)? [KMGT]iB already allocated;",
        closest: Closest::Kind(Kind::PytorchCudaOom),
        strength: Token,
    },
    Wording {
        // Foundation's exception when a buffer cannot grow (`NSMallocException, reason: Failed
        // to grow buffer`).
        name: "NSMallocException (Apple)",
        pattern: r"\bNSMallocException\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // ESP-IDF's and lwIP's status (`ESP_ERROR_CHECK failed: esp_err_t 0x101 (ESP_ERR_NO_MEM)`).
        // (Nordic's `NRF_ERROR_NO_MEM` too, and Suricata's `[ERRCODE: SC_ERR_MEM_ALLOC(1)]`.)
        name: "ERR_NO_MEM or ERR_MEM_ALLOC status",
        pattern: r"\b(?:[A-Z]+_)*ERR(?:OR)?_(?:NO_MEM|MEM(?:ORY)?_ALLOC)\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // Ray's shared-memory object store, full of objects still in scope (`ObjectStoreFullError:
        // Failed to put object … in object store because it is full. Object size is 516884584
        // bytes.`).
        name: "object store full",
        pattern: r"\bObjectStoreFullError\b|\bobject store because it is full\b|\bobject store is full\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // AddressSanitizer's refusal of a size beyond what its allocator serves (`requested
        // allocation size 0xffffffffff7f0000 (…) exceeds maximum supported size of 0x10000000000`).
        name: "requested allocation size exceeds maximum supported size",
        pattern: r"\brequested allocation size\b.{0,160}?\bexceeds maximum supported size\b",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        // A user-space OOM killer's trigger (nohang's `Memory status that requires corrective
        // actions:` over `MemAvailable [48 MiB, 0.4 %] <= soft_threshold_min_mem [710 MiB, …]`).
        name: "memory status requires corrective action",
        pattern: r"(?i)\bmemory (?:status|state|levels?) (?:that )?requires? corrective actions?\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Phrase,
    },
    Wording {
        // A pool's own limit met (Guppy's `CUDA device 0 reached memory limit while trying to
        // allocate 0 bytes, currently at 64/11551440896`).
        name: "reached memory limit",
        // (GAP's `Error, reached the pre-set memory limit`; Gephi's `Gephi reached the maximum
        // amount of memory(458mb).`)
        // (Or the limit named first, then reached: R's `Error: vector memory limit of 100.0 Gb
        // reached, see mem.maxVSize()`; or as the cause of a crash: PHPStan's `PHPStan process
        // crashed because it reached configured PHP memory limit: 128M`.)
        pattern: r"(?i)\breached (?:its |the )?memory limit while\b|\breached the pre-?set memory limit\b|\breached (?:its |the )?maximum amount of memory\b|\bmemory limit of [\d.,]+ ?[KMGT]i?b reached\b|\b(?:crashed|died|was killed|terminated|aborted) because it reached (?:the |its )?(?:configured |set )?(?:\w+ )?memory limit\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // ONNX Runtime's arena, at its limit (`BFCArena::AllocateRawInternal(…) Available memory
        // of 0 is smaller than requested bytes of 5505024`).
        name: "available memory smaller than requested (ONNX Runtime)",
        pattern: r"(?i)\bavailable memory of \d+ is smaller than requested bytes of \d+",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // A regex library's `REG_ESPACE`, as libmagic prints it (`regex error 14 for `…',
        // (failed to get memory)`).
        name: "failed to get memory",
        // Memory itself, or a piece of it (Thrust's `radix_sort: failed to get memory buffer: out
        // of memory` is a device's); not a figure about it (Android's `android.os.Debug: failed
        // to get memory consumption info: -1`).
        pattern: r"(?i)\bfailed to get memory(?:\s*(?:$|[^\w\s])| (?:buffer|block|chunk|region|pages?|space)\b)",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // RabbitMQ's alarm that blocks publishers when the broker's memory passes its watermark.
        name: "memory resource limit alarm (RabbitMQ)",
        pattern: r"(?i)\bmemory resource limit alarm set\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Phrase,
    },
    Wording {
        // ISO Prolog's error term (`error(resource_error(memory), …)`).
        // (And a Lisp's condition of the kind, Julia's femtolisp parser's `(memory-error out of gc
        // handles)`.)
        name: "resource_error(memory) (Prolog) or memory-error (Lisp)",
        pattern: r"\bresource_error\(memory\)|\(memory-error\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // NWChem's words when the memory its input line gave is too little (`ptsalloc:
        // increase memory in input line`).
        name: "increase memory in input (NWChem)",
        pattern: r"(?i)\bincrease memory in (?:the )?input\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // (Also after a record's dashes: Gambit's `*** FATAL ERROR -- Heap overflow`.)
        name: "heap overflow (GHC)",
        pattern: r"(?:^\s*|:\s*|\bdue to (?:a )?)heap overflow\b|\s--\s*[Hh]eap overflow\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Phrase,
    },
    Wording {
        name: "not executed in the allotted memory",
        pattern: r"(?i)\bcould not be (?:executed|completed|run) (?:in|within) the (?:allotted|available) memory\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        name: "OUT_OF_RESOURCES",
        pattern: r"\b[A-Z]+(?:_[A-Z]+)*_OUT_OF_RESOURCES\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // PyTorch's caching allocator's exception, its message maybe cut before `Tried to
        // allocate` (a title's `torch.cuda.OutOfMemoryError: CUDA out of memory.`).
        name: "OutOfMemoryError (PyTorch)",
        pattern: r"\btorch\.(?:cuda\.)?OutOfMemoryError\b",
        closest: Closest::Kind(Kind::PytorchCudaOom),
        strength: Token,
    },
    Wording {
        name: "OutOfMemory",
        // (oneDNN's status as benchdnn prints it: `returned 'out_of_memory'`.)
        // (DjVuLibre names its messages in lower case: `GException.outofmemory`.)
        // (Nim names GDI+'s status in camel case: `Can't load Image fromF file, status: outOfMemory`.)
        // (UMFPACK's status keeps its name's end in lower case: `UMFPACK_ERROR_out_of_memory`.)
        pattern: r"OutOf[Mm]emory|\boutOfMemory\b|OUT_OF_(?:DEVICE_|HOST_|VIDEO_|GPU_|SYSTEM_)?MEMORY|'out_of_memory'|\bout of (?:GPU|device) resources\b|\bErrorOutOfMemory\b|OutOf(?:Device|Host)Memory|\b(?:[A-Z0-9]+_)?OUTOF(?:VIDEO)?MEMORY\b|\b[A-Z]\w*\.outofmemory\b|\boutofmemoryerror\b|\b[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*out_of_memory\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        name: "MemoryError",
        // (Also pyarrow's `pyarrow.lib.ArrowMemoryError`, and Ruby's `NoMemoryError: failed to
        // allocate memory`.)
        pattern: r"(?:\b|_?Array|Arrow|No)MemoryError\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // A memory exception by its name, as a record states it (auto-sklearn's
        // `[WARNING] … Memory Exception -- restart with less ensemble_nbest: 12`), not
        // a memory access fault (`Memory exception at 0x…`).
        name: "Memory Exception",
        pattern: r"\bMemory Exception\b(?:\s*(?:--|:|—)|\s*$)",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        name: "RESOURCE_EXHAUSTED",
        pattern: r"RESOURCE_EXHAUSTED|Resource exhausted|ResourceExhausted(?:Error)?",
        closest: ByPlace,
        strength: Shared,
    },
    Wording {
        name: "out of memory",
        // (Also cut at its last letter, as NBMiner's post stores it: `cuda error: out of memor
        // (errn_um=2)`; or glued to the next message, MediaPipe's `Failed to build program
        // executable - Out of host memoryPass`.)
        // (A hyphenated word may follow the one before `memory`: Taichi's `Out of CUDA
        // pre-allocated memory`.) (And its short form: avilib's `AVILIB: out of mem (size = …)`.)
        // (Or a code's first words kept as typed, the rest spaced: a Ray report retyped from a
        // screenshot, `Worker exit type: NODE.OUT_OF MEMORY`; not an identifier, `out_of_memory`.)
        // (Or its last letter doubled by a hurried title: TractSeg's `bedpostX out of memoryy`.)
        pattern: r"(?i)\bout(?:[ -]?|_)of[ -](?:\w+ )?(?:\w+-[\w-]+ )?(?:heap )?(?:(?:memory+|memor|v?RAM)\b|memory(?-i:[A-Z][a-z]))|\bran out (?:\w+ )?(?:memory|v?RAM)\b|\bout of (?:JVM )?Metaspace\b|\b(?:run|ran) out of store\b|\bout of mem\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        name: "out of heap space",
        // (Or of the JVM's heap by name: CodeQL's `Query evaluation ran out of Java heap (Java heap
        // maximum: 1200 MiB, …)`.)
        pattern: r"(?i)\bout of (?:(?:JVM|Java) heap(?: space)?|heap space)\b",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        name: "cannot enlarge memory",
        pattern: r"(?i)\bcannot enlarge memory\b",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    // (Not a class or file of that name: `OOM.java line 378`, `OOM$setOOM`.)
    Wording { name: "OOM", pattern: r"\bOOM(?:$|[^\w.$]|\.(?:\s|$))", closest: ByPlace, strength: Phrase },
    Wording {
        // A status field whose value is a code for running out (Bazel's crash report's `code:
        // CRASH_OOM`, after its `DetailedExitCode{exitCode=OOM_ERROR, …`, which reads as code).
        name: "OOM code as a status",
        pattern: r"(?i:\b(?:exit ?code|code|status|reason)\s*[=:]\s*)(?:[A-Z]+_)*OOM(?:_[A-Z]+)*\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // In lower case only after the memory's place (a title's `cuda oom`): alone it is
        // part of too many words and names.
        name: "oom after its place, in lower case",
        pattern: r"\b(?i:cuda|gpu|vram|cpu|ram|host|tpu|hbm|npu|xpu|mps)\s+oom\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // macOS's dialog when apps take all memory and swap (a person's `your` is the system's).
        name: "your system has run out of application memory (macOS)",
        pattern: r"\bYour system has run out of application memory\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // Android's lmkd: `Kill 'com.app' (6870), uid 0, oom_score_adj 1000 to free 2740708kB rss`.
        name: "lmkd kill to free memory (Android)",
        pattern: r"\bKill '[^']+' \(\d+\), uid \d+, oom_score_adj -?\d+ to free \d+kB\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // Rust's allocation error handler, where a WebAssembly module traps in it (Automerge's
        // `RuntimeError: unreachable at __rg_oom`): the Rust program ran out of memory.
        name: "Rust's allocation error handler (__rg_oom)",
        pattern: r"\b__rg_oom\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // ESP-IDF's components, a buffer they could not allocate (`lcd_panel.rgb:
        // lcd_rgb_panel_alloc_frame_buffers(159): no mem for frame buffer`).
        name: "no mem for (ESP-IDF)",
        pattern: r"\bno mem for \w",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // The kubelet's node event when the kernel killed a process (`System OOM encountered,
        // victim process: php, pid: 27824`).
        name: "System OOM encountered (kubelet)",
        pattern: r"\bSystem OOM encountered\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // Godot's pool allocator, every block of its pool taken.
        name: "all memory pool allocations are in use (Godot)",
        pattern: r"\bAll memory pool allocations are in use\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // SuperLU's memory expansion failed (`Can't expand MemType 0: jcol 798940`): its work
        // arrays for L and U could not grow, which scipy's `splu` and `spsolve` meet as
        // out of memory.
        name: "SuperLU cannot expand its memory",
        pattern: r"\bCan't expand MemType \d+\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        name: "not enough memory",
        // (Also faceswap's `You do not have enough GPU memory available to train …`, and hashcat's
        // `not enough allocatable device memory for this attack`; mandelbulber2's `Critical: Not
        // enough GPU mem!`; Power BI's `cancelled because there wasn't enough memory`; Paddle Lite's
        // `Error occurred in TargetWrapper::Malloc period: no enough for mallocing 4294946096 bytes.`)
        pattern: r"(?i)\bnot enough (?:[\w-]+ ){0,2}(?:memory|mem|v?RAM)\b|\b(?:was|is|were|are)n't enough (?:[\w-]+ ){0,2}(?:memory|v?RAM)\b|\bnot enough (?:free |GPU |device |video |host |system |virtual )?space\b|\b(?:do|does|did)(?: not|n't) have enough (?:free |GPU |device |video |host |system )?(?:memory|v?RAM)\b|\bno enough (?:memory )?for (?:m|c|re)?alloc\w*",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // Memory too little for what a program was to hold (gpu-burn's `Couldn't init a GPU test:
        // Low mem for result. aborting.`).
        name: "low memory for what was to be allocated",
        pattern: r"(?i)\blow (?:mem|memory) for (?:the |a |an )?\w+",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // (Also an allocator's name labelling it: ESP-IDF's `wifi_malloc: no memory`; an
        // exclamation, Asterisk's `FATAL: unhandled exception PJLIB/No memory!`; and space for a
        // heap, MonetDB's `HEAPalloc: ERROR: Insufficient space for HEAP of 131072 bytes.`; and
        // memory short of what is required, Milvus' `The memory of all indexnodes does not meet
        // the requirements`.)
        name: "memory not available",
        pattern: r"(?i)\b\w*alloc\w*:\s+no (?:more )?memory\b|\bno memory!|\bmemory not available\b|\b[iu]nsufficient (?:\w+ )?(?:memory|v?RAM)\b|\binsufficient space for (?:the )?heap\b|\bmemory is (?:insufficient|not enough)\b|\bno (?:available|free) memory\b|\bno (?:additional |more |free )?memory (?:is )?available\b|\bmemory\b[^.;]{0,40}\b(?:does not|doesn't|do not|don't) meet the requirements?\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // (Also a request that failed, MonetDB's `requesting virtual memory failed`, and a call
        // that failed, zkevm-prover's `failed calling malloc() of size 461239222272`, or
        // returned no memory, Blender's `aligned_malloc returns null: len=7247757312`.)
        name: "could not allocate",
        // (Misspelt `allcate` as several programs print it: x64dbg's `Could not allcate
        // memory(minidump wil be created).`)
        pattern: r"(?i)\b(?:cannot|can ?not|can't|could not|couldn't|unable to|failed to|fails? to|inability to|failure to) (?:be |\w+ )?(?:(?:re)?alloc(?:ated?)?|[cm]alloc|realloc)\b|\b(?:cannot|could not|unable to|failed to) (?:commit|reserve|acquire) (?:the )?(?:\d+ bytes|\d+(?:\.\d+)? ?[KMGT]i?B|(?:\w+ )?memory)\b|\berror (?:when |while |during )?allocating\b|\balloc(?:ate)? \d+ (?:bytes )?error\b|\bfail(?:ed|s)? to apply for (?:\w+ )?memory\b|\b(?:requesting|reserving|committing|allocating) (?:(?:virtual|device|host|GPU|shared|pinned|system) )?memory failed\b|\bfail(?:ed|s|ure)? (?:when |while )?(?:calling|to call) \w*alloc\w*\b|\b\w*alloc\w*(?:\(\))? (?:returns?|returned) (?:null|nullptr)\b|\b(?:cannot|could not|couldn't|unable to|failed to) allcate (?:\w+ )?memory\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        name: "larger than the maximum",
        // (Also what a fixed memory holds: QNN's `requires 0x2400000 bytes of TCM, which is greater
        // than the TCM size of 0x800000!`.)
        pattern: r"\d\)?(?: bytes| ?[KMGT]i?B)?(?: of \w+)?,? (?:which )?(?:is|are) (?:larger|bigger|greater|more) than (?:the )?(?:[\w-]+ ){0,2}(?:max(?:imum)?|total (?:mem|memory)(?: size)?|size of)\b",
        closest: ByPlace,
        strength: Shared,
    },
    Wording {
        name: "failed check of an allocation",
        // (Also an allocation call checked for success that returned ENOMEM, PyTorch's CPU
        // allocator's `posix_memalign(&data, gAlignment, nbytes) == 0. 12 vs 0`.)
        pattern: r"(?i)\b(?:allocat\w*|request\w*) <=? (?:available|free|capacity|limit)\b|\b\w*(?:alloc|memalign)\w*\([^)]*\) == 0\. 12 vs 0\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // TensorFlow's error class for a tensor that found no memory (gRPC's quota errors are
        // `ResourceExhausted` without it), and its message when a paste lost its first letter
        // (`OM when allocating tensor with shape[…]`).
        name: "ResourceExhaustedError (TensorFlow)",
        pattern: r"\bResourceExhaustedError\b|\bO?OM when allocating tensor\b",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // Stata's r(909): `op. sys. refuses to provide memory`.
        name: "refuses to provide memory (Stata)",
        // (Mata's error 3900 too: `J():  3900  unable to allocate real <tmp>[29,536870912]`.)
        pattern: r"\brefuses to provide memory\b|\b3900\s+unable to allocate\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // Electron's and VS Code's renderer killed for memory: `The window terminated
        // unexpectedly (reason: 'oom', code: '-536870904')`, Logseq's `Renderer process oom - see …`.
        name: "reason: oom (Electron)",
        pattern: r"(?i)\breason\W{0,3}oom\b|\b(?:renderer|GPU|utility) process oom\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // iOS and macOS: a process over its memory limit (jetsam).
        name: "EXC_RESOURCE RESOURCE_TYPE_MEMORY (iOS)",
        pattern: r"\bRESOURCE_TYPE_MEMORY\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // Hadoop and the JVM's tools print the heap's OutOfMemoryError by its cause alone.
        name: "Java heap space",
        // (Lowercased whole by a person: `outofmemoryerror:java heap space`.)
        pattern: r"\b[Jj]ava [Hh]eap [Ss]pace\b|(?i:\bheap space error\b)",
        closest: Closest::Kind(Kind::HostOom),
        strength: Phrase,
    },
    Wording {
        // PostgreSQL's refusal of a request past its largest allocation (1 GB).
        name: "invalid memory alloc request size (PostgreSQL)",
        pattern: r"\binvalid memory alloc(?: request size)?\b",
        closest: Closest::Kind(Kind::HostOom),
        strength: Token,
    },
    Wording {
        // A failure told with its cause (`It kept failing due to lack of RAM and swap space`,
        // `crashed after 380k epochs because it ran out allocated RAM`, nnU-Net's `Prediction on
        // device was unsuccessful, probably due to a lack of memory.`).
        name: "failed for lack of memory",
        pattern: r"(?i)\b(?:fail(?:s|ed|ing)?|crash(?:es|ed|ing)?|died|dies|killed|abort(?:s|ed)?|(?:was|were|is) unsuccessful,?) (?:[\w-]+ ){0,4}(?:due to|because(?: of)?|for|from|with|as) (?:a |the |it |we )?(?:lack of |insufficient |not enough |no more |ran out (?:of )?|run out (?:of )?|running out (?:of )?)(?:\w+ )?(?:memory|v?RAM)\b",
        closest: HostUnlessDevice,
        strength: Token,
    },
    Wording {
        // Kaggle's `tried to allocate more memory than is available`, a judge's
        // `used more memory than allowed`, JRuby's `used more memory than the safety cap of 500M`,
        // Galaxy's `This job was terminated because it used more memory than it was allocated.`
        name: "more memory than available",
        // (Or than a setting allows: Vim's `E363: pattern uses more memory than maxmempattern`,
        // Qiskit Aer's `ERROR: a circuit requires more memory than max_memory_mb.`)
        pattern: r"(?i)\bmore (?:\w+ )?memory (?:\([^)]{1,30}\) )?than (?:is |was |it )?(?:available|allowed|permitted|the limit)\b|\bused more memory than (?:it|the job) (?:was|had been) (?:allocated|assigned|given)\b|\b(?:uses|used|requires|required|needs|needed) more memory than '?max\w+|\bmore memory than (?:the |its )?(?:safety |memory |heap )?(?:cap|limit) of\b",
        closest: HostUnlessDevice,
        strength: Phrase,
    },
    Wording {
        // (Or a process's resident memory: sidekiq-worker-killer's `current RSS 523.28515625 of
        // … exceeds maximum RSS 480`; CMS's job wrapper's `Job has exceeded maxPSS: 16000 MB`.)
        name: "exceeds memory",
        pattern: r"(?i)\bexceed(?:s|ed|ing)?\b(?: the)?(?: [\w-]+){0,3}[ _-](?:memory|resources|RSS)\b|\bexceed(?:s|ed|ing)?\s+max(?:imum)?[ _-]?(?:RSS|PSS)\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // The memory something needs, over what it may have (the Android emulator's `The memory
        // needed by this AVD exceeds the max specified in your HAXM configuration.`).
        name: "memory needed exceeds the maximum",
        pattern: r"(?i)\b(?:memory|RAM) (?:needed|required|requested)\b[^.;]{0,40}\bexceed(?:s|ed)? (?:the |your |its )?(?:max\w*|limit|available)\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // A device or a host that says it is low on memory and refuses the work (IOS XR's XML
        // service: `detected the 'fatal' condition 'The router is low on memory. Please retry the
        // request after memory consumption has gone down.'`; oVirt's scheduler: `its available
        // memory is too low (487.000000 MB) to run the VM`).
        name: "low on memory, the work refused",
        // (Not a warning of the state alone: Positron's `The system is low on memory (689.47MB
        // remaining). Consider removing data …`.)
        pattern: r"(?i)\b(?:fatal|error)'? condition\W{0,3}[^.]{0,40}\blow on memory\b|\blow on memory\b[^.]{0,40}\.\s*please retry\b|\b(?:available|free) memory is too low\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // The ESP8266 Arduino core's crash dump names the allocation that failed last, its
        // caller's address and its size (`last failed alloc call: 4021B18E(544)`).
        name: "last failed alloc call (ESP8266)",
        pattern: r"\blast failed alloc call: [0-9A-Fa-f]{8}\(\d+\)",
        closest: ByPlace,
        strength: Token,
    },
    Wording {
        // TensorFlow Lite Micro's arena, too small for a buffer it grows, with the figures
        // (ESPHome's micro_wake_word: `Failed to resize buffer. Requested: 19440, available 11876,
        // missing: 7564`).
        name: "failed to resize a buffer, more requested than available",
        pattern: r"(?i)\bfailed to resize (?:the )?(?:\w+ )?(?:buffer|arena)\b\W{0,3}requested:?\s*\d+,\s*available\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // The address space a program reserves for itself, refused (qemu-user's `Unable to reserve
        // 0xf7000000 bytes of virtual address space for use as guest address space (check your
        // virtual memory ulimit setting …)`; the binder driver's `binder_alloc_buf size 1056768
        // failed, no address space`).
        name: "could not reserve address space",
        pattern: r"(?i)\b(?:unable to|cannot|can't|could not|failed to) reserve (?:0x[0-9a-f]+|\d+) bytes of (?:virtual )?address space\b|\b\w*alloc\w* size \d+ failed, no address space\b",
        closest: ByPlace,
        strength: Phrase,
    },
    Wording {
        // The memory a task needs, in figures, over the little that is available (BOINC's
        // `Rosetta needs 1907.35 MB RAM but only 965.88 MB is available for use.`).
        name: "needs more memory than is available (A needed, only B available)",
        pattern: r"(?i)\b(?:needs?|requires?|needed|required)\s+(?:at least\s+)?[\d.,]+\s*(?:[KMGT]i?B|bytes)\s+(?:of\s+)?(?:free\s+)?(?:RAM|memory|VRAM|GPU memory)\b[^.;]{0,30}?\bbut\s+(?:there\s+(?:is|are)\s+)?only\s+[\d.,]+\s*(?:[KMGT]i?B|bytes)\b[^.;]{0,20}?\bavailable\b",
        closest: ByPlace,
        strength: Phrase,
    },
];

/// Literals of which every line a row of [`FAILURE_WORDS`] matches holds one
/// (a test checks it for every row's real line), searched first so that the
/// lines without any (nearly all of a log, and the ones that merely say
/// `memory`) cost almost nothing: plain literals, ASCII case ignored. At most
/// 64, so that the search stays the packed (SIMD) one (a test checks it). Their
/// order is the packed searcher's too: it files each literal into a bucket by its
/// place, and an unlucky order makes every plain line dearer by a tenth. After an
/// anchor is added, `cargo run --release -p xmem-benches --bin anchor-order -- LOG…`
/// finds a cheap order on the logs given (BENCHMARKS.md says which).
pub(super) const ANCHORS: &[&str] = &[
    "mmap of",
    "kill",
    "speicher",
    // (`memoria agotada`, `mémoire épuisée`.)
    "memoria",
    "moire",
    "out_of",
    "exhaust",
    "메모리",
    // (`heap space`, `heap overflow`, `expand heap`, `internal heap limit`.)
    "heap",
    "kv cache",
    "errno",
    "available",
    "内存",
    "out-of",
    "failure in",
    // (Grid Engine's `execd enforced h_vmem limit`.)
    "enforced",
    "o reserve",
    "lack of",
    "显存",
    // (Rust's allocation error handler, as WebAssembly traps in it: `RuntimeError: unreachable at
    // __rg_oom`.)
    "rg_oom",
    "auslagerungsdatei",
    "o commit",
    "enomem",
    "ran out",
    "メモリ",
    "due to ram",
    "full",
    "nvenc",
    " oom",
    "out of",
    "没有记忆",
    // (Fluent Bit's `paused (mem buf overlimit)`.)
    "overlimit",
    // (`insufficient`, and Wan2GP's misspelt `unsufficient RAM`.)
    "nsuf",
    // (Ada's `raised STORAGE_ERROR : s-poosiz.adb:108 explicit raise`.)
    "storage_error",
    "allcate",
    "failed in",
    "exceed",
    "failed with error -",
    "памяти",
    "pamięci",
    "circuit",
    "shared data",
    "error 1455",
    "paging file",
    "thrashing",
    "curesult",
    "reason",
    "than",
    "页面文件",
    // (`ESP_ERR_NO_MEM`.)
    "no_mem",
    // (ESP-IDF's `no mem for frame buffer`.)
    "no mem",
    "enough",
    // (`low memory! at or below SIGTERM limits`, gpu-burn's `Low mem for result`.)
    "low mem",
    // (GNU ld's `region `RAM' overflowed by`.)
    "overflowed by",
    // (GNU ld's `section `.itcm' will not fit in region `itcm'`.)
    "fit in region",
    "arena size",
    // (STAR's `limitGenomeGenerateRAM=31000000000 is too small`.)
    "too small",
    "memout",
    // (GAP's `cannot extend the workspace any more!`.)
    "workspace any",
    // (Cactus' `posix_memalign fail!`: a call whose name holds no `alloc`.)
    "memalign",
    // (SuperLU's `Can't expand MemType 0: jcol 798940`, scipy's sparse LU out of memory.)
    "memtype",
    // (macOS' malloc cut to the kernel's refusal: `*** mach_vm_map(size=1048576) failed (error code=3)`.)
    "mach_vm_map",
    // Last, the gated anchors ([`GATED_ANCHORS`]).
    MEMORY_ANCHOR,
    ALLOCATION_ANCHOR,
];

/// The anchors that lines without a failure hold as often as lines with one, each with
/// the words of which every failure's line that holds it also holds one: a line whose only
/// anchors these are goes on to the vocabulary only where it also holds one of their
/// hints. Hints are not anchors, so a wording of these anchors' adds a hint, not an anchor
/// to the packed list's 64.
pub(super) const GATED_ANCHORS: &[(&str, &[&str])] =
    &[(MEMORY_ANCHOR, MEMORY_FAILURE_HINTS), (ALLOCATION_ANCHOR, ALLOCATION_FAILURE_HINTS)];

/// The word that every memory figure's line may hold (`Created device with 14.2 GB
/// memory`, a step's `memory (MB) | …`), and that many failures' words hold beside
/// another word.
pub(super) const MEMORY_ANCHOR: &str = "memory";

/// The words beside `memory` in every row of [`FAILURE_WORDS`] that has no other anchor.
pub(super) const MEMORY_FAILURE_HINTS: &[&str] = &[
    "virtual memory",
    "shared memory",
    "memory error",
    "memoryerror",
    // (auto-sklearn's `Memory Exception -- restart with less ensemble_nbest`.)
    "memory exception",
    // (Ruby's `NoMemoryError: too large allocation size`, Chromium's `OnNoMemoryInternal(`,
    // librsvg's `rendering error: NoMemory`.)
    "nomemory",
    // (ONNX Runtime's `Available memory of 0 is smaller than requested bytes of 5505024`.)
    "smaller than requested",
    // (libmagic's `(failed to get memory)`.)
    "to get memory",
    // (`RESOURCE_TYPE_MEMORY`, Android's `NO_MEMORY`.)
    "_memory",
    // (`OutOfMemoryError`, `E_OUTOFMEMORY`, `ERROR_OUTOFVIDEOMEMORY`.)
    "outof",
    "too much memory",
    "no free memory",
    "no gpu memory",
    // (Kamailio's `no private memory left`; not any `memory left`, which a training log may
    // print on every step.)
    "no memory left",
    "no memory remaining",
    "private memory left",
    "shared memory left",
    "memory out",
    "memory limit",
    // (ThatOpen's title `WASM linear memory ceiling hit during conversion`.)
    "memory ceiling",
    // (GPT Mobile's `Error: system memory overloaded`.)
    "overloaded",
    // (cc65's ld65: `Segment 'ZEROPAGE' overflows memory area 'ZP' by 26 bytes`.)
    "overflows memory area",
    // (PHP's message cut before `exhausted`: Dolibarr's `Fatal error: Allowed memory size of
    // 1342177728bytes in C:\...`.)
    "allowed memory size",
    // (storjnode's `Excessive memory usage 104882176 > 104857600!`.)
    "excessive memory",
    "enlarge memory",
    "due to memory",
    "to provide memory",
    "low on resource: memory",
    // (Prolog's `resource_error(memory)`.)
    "(memory)",
    // (NWChem's `increase memory in input line`.)
    "increase memory",
    // (`Failed to acquire gpu memory (157mb)`.)
    "to acquire",
    // (Vim's `pattern uses more memory than maxmempattern`.)
    "more memory than",
    // (Guppy's `reached memory limit while trying to allocate`.)
    "reached memory limit",
    // (Gephi's `reached the maximum amount of memory(458mb)`.)
    "maximum amount of memory",
    // (IOS XR's `The router is low on memory. Please retry …`, oVirt's `available memory is too
    // low`.)
    "low on memory",
    "memory is too low",
    // (RabbitMQ's `memory resource limit alarm set`.)
    "resource limit alarm",
    // (Sapphire's `memory too low on GPU 0 to reliably allocate 1297920 byte block`.)
    "memory too low",
    // (dpctl's `Null memory pointer returned`.)
    "memory pointer",
    // (Pants' `was using 1428697088 bytes of memory (above the limit of …`.)
    "memory (above",
    // (Asterisk's `PJLIB/No memory!`.)
    "no memory!",
    // (SSIS's `failed a memory allocation call`.)
    "memory allocation call",
    // (MonetDB's `requesting virtual memory failed`.)
    "memory failed",
    // (nohang's `Memory status that requires corrective actions`.)
    "corrective action",
    // (Milvus' `The memory of all indexnodes does not meet the requirements`.)
    "meet the requirement",
    // (Verilator's `memory exausted.`, as its parser spelled it.)
    "exausted",
    // (The kernel's `System is deadlocked on memory`.)
    "deadlocked on memory",
    // (Safari's `This webpage was reloaded because it was using significant memory`.)
    "significant memory",
    // (Godot's `All memory pool allocations are in use`.)
    "pool allocations are in use",
    // (Kubernetes' `The node had condition: [MemoryPressure]`.)
    "had condition",
];

/// The anchor that every allocation's words hold, failed or not: a line of
/// memory statistics (`allocated 11.1 GiB` on every step of a training log)
/// holds it too.
pub(super) const ALLOCATION_ANCHOR: &str = "alloc";

/// The words beside `alloc` in every row of [`FAILURE_WORDS`] that has no
/// other anchor: how an allocation failed (`failed to allocate`, `cannot
/// allocate`, `bad_alloc`, `cudaErrorMemoryAllocation`, `allocating <= available`,
/// `Tried to allocate` before its device, `Allocation on device`, `malloc: no
/// memory`).
pub(super) const ALLOCATION_FAILURE_HINTS: &[&str] = &[
    "fail",
    "not",
    "n't",
    "unable",
    "inability",
    "error",
    "_alloc",
    "bad alloc",
    "badalloc",
    "tried to alloc",
    "on device",
    "invalid memory alloc",
    "no memory",
    "no more memory",
    // (Blender's `aligned_malloc returns null`, tcmalloc's `large alloc 4294868992 bytes == (nil)`.)
    "null",
    "(nil)",
    "<",
    // (Apple's `NSMallocException`.)
    "mallocexception",
    // (PyTorch's figures without their head: `(GPU 0; 15.75 GiB total capacity; 79.11 MiB already allocated; …`.)
    "total capacity;",
    // (bamdst's `trying to allocate 598017592 bytes (limits: 500000000)`.)
    "(limit",
    // (DIALS' `There was a problem allocating memory for shoeboxes`.)
    "problem allocating",
    // (TensorFlow's `OOM when allocating tensor` cut to `OM when allocating tensor`.)
    "allocating tensor",
    // (GRASS' German `G_malloc: Kann nicht 2272853112 Byte … reservieren`.)
    "kann nicht",
];

/// The anchor whose case matters (`OOM`, not `room` or `zoom`).
pub(super) const ANCHOR_EXACT_CASE: &str = "OOM";

/// Where the memory that ran out is, in the line's own words. The first
/// place word in the message decides a [`Closest::ByPlace`] row.
pub(super) const PLACE_WORDS: &[(&str, Place)] = &[
    (
        // (OpenCL's buffers are memory objects: Futhark's `failed with error code -4 (Memory
        // object allocation failure)`, `CL_MEM_OBJECT_ALLOCATION_FAILURE`; Qualcomm Adreno's KGSL;
        // AWS Neuron's runtime, `nrt_tensor_allocate status=4`.)
        r"\b(?:CUDA|[Cc]uda|GPU|[Gg]pu|[Dd]evice|HIP|[Hh]ip|ROCm|VRAM|HBM|hbm|TPU|NPU|XPU|MIOpen|TensorRT|TRT|NCCL|cuMem\w*|cudaMalloc\w*|(?:cuda|hip)Error\w*|CUBLAS|cuBLAS|CUDNN|cuDNN|OpenCL|[Mm]emory object|\w*MEM_OBJECT_\w+|Adreno|KGSL|kgsl|Neuron(?:Core)?|nrt_\w+)\b|CUDA\d",
        Place::Device,
    ),
    (
        // (The kernel's OOM killer's `Out of memory: Kill process …` is the host's; a JVM
        // package names no place, `java.lang.RuntimeException: cudaMalloc failed; …`, but the
        // JVM's own `java.lang.OutOfMemoryError`.)
        r"\b(?:[Hh]ost|RAM|[Hh]eap|[Mm]etaspace|[Cc]ompressed class space|Java|JVM|JavaScript|GC overhead|[Cc]ontainer|[Pp]od|the node|cgroup|swap|[Vv]irtual memory|[Pp]hysical memory|VirtualAlloc|Errno|malloc|mach_vm_map|Hauptspeicher|Arbeitsspeicher|[Kk]ill(?:ed)? process)\b|\bjava(?:[^.\w]|$|\.lang\.OutOfMemoryError\b)",
        Place::Host,
    ),
];

/// A place a line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    Device,
    Host,
}

/// What makes a [`Strength::Phrase`] line an error record rather than a
/// sentence about memory: an error word, an exception class, a status code.
pub(super) const ERROR_MARKS: &str = concat!(
    r"(?i:\berror\b|\berr\b|\bfatal\b|\bfail(?:ed|s)\b|\b(?:is|are|was|were|keeps?|kept|been|started) (?:failing|crashing)\b|\bfailure\b|\bwarn(?:ing)?\b|\babort|\bkill(?:ed|ing)\b|\bterminat|\bpanic)",
    // What the failure did to the process (`the job did exit with OOM last night`, `the linux
    // oom killer kicks-in and kill my shell`, `the session keeps failing because it is running
    // out of memory`).
    r"|(?i:\bcrash(?:es|ed)?\b|\bcrashing with\b|\bdied\b|\bexit(?:s|ed)? with\b|\boom[- ]killer\b.{0,20}\bkills?\b)",
    // An exception named by when it was raised (ComfyUI's `!!! Exception during processing !!!
    // Allocation on device`, `Unhandled exception`).
    r"|(?i:\bexception (?:during|while|occurred|raised|thrown)\b|\b(?:unhandled|uncaught) exception\b)",
    // A logger's severity in brackets (TensorRT's `[TRT] [W]`, trtexec's `[E]`).
    r"|\[[EWF]\]",
    // `error` and `failure` in Portuguese, Spanish, German, French and Italian.
    r"|(?i:\b(?:erros?|falha|falhou|fallo|fehler|erreur|errore)\b)",
    // `error`, `failure`, `could not` in Japanese.
    r"|エラー|失敗|できなかった",
    // `error`, `reports an error`, `failed`, `exception` in Chinese.
    r"|错误|报错|失败|异常",
    // `occurred`, `appeared` in Chinese (`发生了OOM`, `运行出现内存不足`).
    r"|发生了|出现",
    // (A class's name typed in lower case: `runtimeError: 507 - System out of memory`; Vim's
    // `E363:`.)
    r"|\bfails?\b|RESOURCE_EXHAUSTED|OUT_OF_MEMORY|OutOf[Mm]emory|\bINTERNAL\b|\bE\d{4}\b|\bE\d{2,3}:|\b(?:[A-Za-z]\w*)?(?:Error|Exception):",
    // A C++ exception's message as `std::terminate` prints it (libtorch's `what(): CUDA out of
    // memory.`).
    r"|\bwhat\(\):",
    // What the failure made impossible (`Can no longer compile our app due to OOM …`).
    "|",
    inability_due_to!(),
);

/// Words that make a sentence talk about memory failures rather than report
/// one: what a setting may cause, what to do to avoid it. Only the sentence
/// holding the failure words counts: a program's message may go on with
/// advice (`If reserved but unallocated memory is large try …`, `if you
/// want malloc to return NULL …`).
pub(super) const TALK: &str = concat!(
    r"(?i)\b(?:may|might|can|could|will|would|should|must) (?:\w+ )?(?:cause|lead to|result in|trigger|crash|fail|return|throw|raise|call|abort|panic|exit|run out of)\b",
    // (`a pod that would go "out of memory"`; not `It will go wrong "Out of Memory Error: …"`,
    // a writer's way of saying it goes wrong.)
    r"|\b(?:would|could|might) go\b",
    // Messages that may come (`Out of memory errors may occur`).
    r"|\b",
    may_come!(),
    r"|\bit (?:looks|seems) like\b|\bseems to be\b|\b(?:probably|perhaps|maybe|likely)\b|\bI (?:think|guess|suspect|believe)\b",
    // (Or thought, a guess the writer goes on to doubt: `At first, I thought it was out of memory,
    // but below is what `top` shows`.)
    r"|\bI (?:first |initially )?(?:thought|assumed|suspected)\b",
    // A title asking about it (`Questions about OutOfMemory Error:`).
    r"|^\W*questions? (?:about|on|regarding)\b",
    // A request for a better message (`Proper error message when program runs out of memory`),
    // and what happens as a rule (`Out of memory killing has historically happened …`).
    // (And a message a writer wishes a program sent: PrairieLearn's `Would it be possible to pass
    // a more informative error message in this case, … "The container was killed, presumably
    // for using too much memory" …?`.)
    r"|\b(?:proper|better|clear|clearer|helpful|useful|friendlier|improved?|(?:more )?(?:informative|descriptive|meaningful|explicit)) (?:error |warning )?messages?\b|\b(?:historically|in general|generally)\b",
    r"|\bwould it be possible to\b|\bit would be (?:nice|great|good|helpful|useful|better) (?:if|to)\b",
    r"|\bto (?:avoid|prevent)\b|\bin case of\b|\bis not involved\b|^\W*hint:",
    // A guide's words (`PRB: Avoiding "Insufficient Memory to Run" Errors`, `Types of
    // OutOfMemoryError`).
    r"|\b(?:avoiding|preventing|troubleshooting)\b|\b(?:types|kinds) of\b",
    // What happens as a rule (`consistent with what happens when CUDA … fails to allocate memory`).
    r"|\bwhat happens (?:when|if)\b",
    // What it comes from as a rule (`On Kaggle this almost always comes from: 1) CPU/GPU
    // out-of-memory, …`).
    r"|\b(?:usually|typically|often|commonly|almost always|most likely) (?:comes? from|caused by)\b",
    // A change that adds what acts on it (`Adds `-XX:+ExitOnOutOfMemoryError` … so the Gradle
    // daemon dies immediately on an `OutOfMemoryError``).
    r"|^\W*(?:adds|introduces|implements)\s",
    // A proposal (`One option could be a systemd component that traces oom kills …`).
    r"|\b(?:one|an|another|the) (?:option|idea|approach|solution|alternative|way) (?:could|would|might|may) be\b",
    // A definition (`Out of memory (OOM) is an often undesired state of computer operation …`).
    r"|\b(?:is|are) an? (?:often |usually |rare |common )?(?:undesired |unwanted )?(?:state|condition|situation) (?:of|in|where)\b",
    // A how-to (`How to Solve GPU Out of Memory Error on Google Colab`), and a remedy after the
    // failure's name (`- **Init OOM** (…, KV cache allocation fails): increase `mem_fraction_static``).
    r"|^\W*how (?:to|do i|can i|do you|can you|should i) (?:solve|fix|avoid|prevent|handle|deal with|resolve|debug|reduce)\b",
    // (Not a program's own hint after its figures: LuxCore's `… (i.e.
    // CL_DEVICE_MAX_MEM_ALLOC_SIZE=402653184): try to reduce related parameters`.)
    r"|^\D*:\s+(?:increase|decrease|reduce|lower|raise|set|use|try|enable|disable)\b",
    // A message judged rather than met (`Buffer creation out of memory warning is incorrect`).
    r"|\b(?:error|warning|message)s? (?:is|are) (?:incorrect|wrong|misleading|spurious|inaccurate)\b",
    // A Chinese guide's title: an analysis, a detailed account, a summary, a solution
    // (`Java内存溢出错误：OutOfMemoryError异常分析`).
    r"|分析|详解|总结|解决(?:方案|方法|办法)",
    // A translation's review (`问题描述：译文为"内存溢出"`, `哪一项：out-of-memory`).
    r"|译文|翻译|哪一项|怎样是正确的",
    // A Japanese guide's: what it is, an explanation, remedies, the people it helps
    // (`メモリ不足(Out of memory)とはどんな状態?原因や対処法を詳しく解説します!`).
    r"|とは|解説|対処法|困っている",
    // What it is, a guide's `without` and `how to`, in Chinese and Korean (`OOM killer
    // 是什么意思`, `GPU 메모리 최적화: OOM 없이 더 크게 훈련하는 법`).
    // (Not `是什么原因` or `是什么问题`, what the cause of a failure met is.)
    r"|是什么(?:意思|概念|东西)|什么是|없이|하는 법|이란",
    // The failures in general (`Out-of-memory (OOM) errors are one of the first barriers
    // beginners hit`).
    r"|\b(?:errors|failures|crashes) (?:are|can be) (?:one of|among|a common|common|usually|often|typically|frequent|the most)\b|\b(?:errors|failures|crashes) (?:happen|occur) when\b",
    // A message's wording as a topic, in Chinese (`内存不足导致游戏崩溃的文案如下`).
    r"|文案",
    // A title tagged as a request (`[Feature Request] java.lang.OutOfMemoryError: Metaspace error`),
    // in Chinese too (`[优化] 由于内存不足导致游戏崩溃的文案修改`).
    r"|^\W*(?:\[|【)(?:优化|建议|功能|需求|新功能)(?:\]|】)",
    r"|^\W*\[?(?:feature request|feature|enhancement|rfc|proposal)\]?:?\s",
    // A change's title (`fix: OOM when loading from checkpoints`) or an issue it closes
    // (`- Closes #[torch.OutOfMemoryError: CUDA out of memory. …]`): named, not met. A
    // program's path (Futhark's `./test: Failed to allocate memory …`) is not a tag.
    r"|^[^\w./\\]*(?:fix|feat|chore|docs|refactor|perf|test|build|ci|style|revert|typo)(?:\([^)]*\))?!?:",
    r"|\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#",
    // A title that asks for a change (`Support OOMKilled`, `Add OOM detection`): named, not met.
    r"|^\W*(?:fix|fixes|fixed|fixing|support|add|handle|detect|expose|surface|implement|track|alert on|notify on|reduce|avoid|prevent|improve|lower|allow|enable|disable|document|remove)\s",
    // A Markdown task item (`- [ ] Oversized allocation produces immediate OOM error`): a to-do.
    r"|^\s*[-*+] \[[ xX]\]\s",
    // OOM as a topic's name (`OOM behavior tests`, `OOM handling`, `the OOM score`, `Cgroup OOM controller`).
    r"|\bOOM[- ](?:fix(?:es)?|error messages?|behaviou?r|handling|tests?|testing|protection|prevention|detection|scor(?:e|es|ing)|polic(?:y|ies)|settings?|controllers?)\b",
);

/// People write to people; a program's error record seldom says `you`,
/// `we` or `let's`. These words make the whole line talk, unless the sentence with the
/// failure words opens as a record (a label, an exception class, an error
/// word before them): then only the words before the failure words count
/// (`This error means you ran out of memory` is talk; `DefaultCPUAllocator:
/// not enough memory: you tried to allocate …` and `RuntimeError:
/// Aborted(Cannot enlarge memory arrays … (OOM). … if you want malloc to
/// return NULL …` are records). `my` is no such word: the writer telling what happened to
/// their own (`the linux oom killer kicks-in and kill my shell`) reports.
pub(super) const PEOPLE: &str = r"(?i)\b(?:you|your|we|our|let's|let us)\b";

/// Courtesies that say `you` without talking about the failure (`You are right, it's an out of
/// memory error.`, `Thank you`, `Sorry to bother you`): not [`PEOPLE`]'s words.
pub(super) const COURTESY: &str = r"(?i)\b(?:you(?:'re| are) (?:right|correct)|thanks? you|thank you(?: very much)?|sorry to (?:bother|trouble) you)\b";

/// A line that opens in the writer's own voice (`I even checked the RAM
/// usage and it shows …`, `we see this on …`): the person's next sentence,
/// never the next line of a program's message, so it adds no sizes to it. So does one that
/// opens by setting itself against the last (`However, other processes have allocated
/// 13435703296 bytes …`).
pub(super) const WRITER_OPENS: &str = r"(?i)^\W*(?:i|i'm|i've|we|my|our|however|therefore)\b";

/// Words that, before the failure words in their sentence, make it a
/// condition or an expectation (a test plan's `verify immediate OOM error`,
/// `should not OOM`) rather than a report: `If processes are killed by the oom
/// killer, dmesg should …`, `In case the process is being killed by the OOM
/// killer, no dump …`, `When a container is killed by the kernel OOM killer,
/// Pelagos doesn't …`, `… support for notification when a container has been
/// killed by the OOM killer` (`when` only where it opens the sentence or a
/// subject follows it: `Error when allocating …` is a record). A condition's clause ends at
/// its comma: the failure after it is what happened (`even if I change the batch size from
/// 128 to 1, I still get the same 'hipErrorOutOfMemory' error`). `when` right before the
/// failure words is a condition too (`when malloc fails the functions keep going`). Other
/// languages' `if` too (`если ошибка OutOfMemoryError произошла в библиотеке`), and Chinese
/// `may` (`其他区域都有可能会产生OutOfMemoryError异常`), which a comma ends, full-width or not
/// (its bytes, as these tables read text).
pub(super) const CONDITIONS: &str = r"(?i)\b(?:if|unless|whenever|in case)\b[^,:]*$|(?:^|\s)(?:если|wenn)\s[^,:]*$|(?:如果|もし|可能|也许)(?:[^,:\xEF]|\xEF(?:[^\xBC]|\xBC[^\x8C]))*$|\b(?:verify|verifies|ensure|ensures|expect|expects|should)\b|^\W*when\b[^,:]*$|\bwhen (?:a|an|the|it|they|this|that|its|their)\b[^,:]*$|\bwhen\s+$";

/// Words of a sentence that introduces a quote as an example rather than
/// as what happened (`Error message becomes as following:`, `instead of:`,
/// `Alerts should trigger if the pod has a `Last State` section of:`): a
/// pull request showing a message it changes, a feature request showing
/// what it wants to act on. Read on the line of prose right before the
/// quote, only where it ends with a colon ([`super::quotes`]).
pub(super) const EXAMPLE_INTRODUCTIONS: &str = concat!(
    // (`becomes` only before `as`, `like` or the colon: `the memory becomes insufficient:` tells
    // what happened next.)
    r"(?i)\b(?:becomes?(?: as| like|\s*:)|instead of|for example|for instance|e\.g\.|such as|^\W*examples? (?:of|output|log)",
    r"|(?:should|would|will) (?:look|read) like|expected (?:output|message)|alerts? (?:should|would|will))\b",
);

/// Source code before the failure words (a statement that throws, catches
/// or compares with the failure, in a diff or a traceback's quoted line):
/// `throw std::bad_alloc();`, `if (res == VK_ERROR_OUT_OF_DEVICE_MEMORY)`,
/// `raise MemoryError(...)`; or a command that searches logs for it, by its flags or its
/// pipe, after a shell's prompt or not (`[root@boot1 etc]# grep "out of swap space" …`, `grep -i
/// "OutOfMemoryError\|heap space" /var/log/…`, `dmesg | grep -i oom`). Code names the
/// failure, it does not report one. Nor does a link whose address holds the words.
pub(super) const CODE: &str = concat!(
    r"^[\s+>-]*(?:throw|raise|catch|except|elif|return|case)\b|(?:==|!=|\|\||&&)\s*\(?\s*[\w:.]*$",
    // (`if` or `while` before a gerund opens a sentence, not a loop: Tez's wrapped `Failure` /
    // `while running task:java.lang.RuntimeException: java.lang.OutOfMemoryError`.)
    r"|^[\s+>-]*(?:if|while)(?:\s*$|\s*[^\w\s]|\s+\w*(?:[^\Wg]|[^\Wn]g|[^\Wi]ng)\b)",
    r"|^[\s>]*(?:\[[^\]]+\]\s*)?[#$%]\s*(?:sudo\s+)?(?:grep|egrep|zgrep|rg|findstr)\s[^|]*$",
    // (Also by its path, the pattern quoted: hustoj's `/bin/grep 'java.lang.OutOfMemoryError' …/error.out`.)
    // (A title may name grep's own error, quoted: `grep "memory exhausted" error on openSUSE`.)
    r"|^[\s>]*(?:sudo\s+)?(?:grep|egrep|zgrep|rg|findstr)\s+-[^|]*$|^[\s>]*(?:sudo\s+)?/\S*/(?:grep|egrep|zgrep|rg|findstr)\s+[-'\x22][^|]*$",
    r"|\|\s*(?:grep|egrep|rg|findstr)\s[^|]*$",
    r"|https?://\S*$",
    // A set of names in a type or a literal (Zig's `error{OutOfMemory}![][]const u8`).
    r"|\w\{[\w,\s.]*$",
    // A statement that raises it, after a title's tag (`[sqlite3] raise MemoryError if …`), and a
    // string a call prints (`printf("Fatal: failed to allocate %zu bytes …")`).
    r"|\b(?:raise|throw)\s+(?:new\s+)?[\w.]*$|\b(?:f|s|sn|v)?printf\s*\([^\x22]*\x22[^\x22]*$",
);

/// A command-line flag that the failure words are part of (`-XX:+HeapDumpOnOutOfMemoryError`,
/// `--oom-kill-disable`, `--oom-score-adj`): the flag is named, nothing
/// failed. Matched against the text right before the words; a flag's name
/// starts with a letter (`(-4:Insufficient memory)` is a status, not a flag).
pub(super) const FLAG: &str = r#"(?:^|[\s`'"=(\[,])--?(?:[A-Za-z][\w:+.-]*)?$"#;

/// A markdown list item's marker (`- `, `* `, `1. `): an item opens with
/// the marker, not with the failure words after it (`- OOM kill behavior
/// options`), so it is a record only by its own error words.
pub(super) const LIST_MARKER: &str = r"^\s*(?:[-*+]|\d{1,3}[.)])\s+$";

/// A determiner right before the failure words: the failure named as a
/// thing (`why does this give a MemoryError`, `will throw an
/// OutOfMemoryError if …`), talk unless the sentence opens as a record
/// (`Task failed with an OutOfMemoryError`).
pub(super) const NAMED: &str = r#"(?i)\b(?:a|an|the|any|each|every|no|this|that)\s+(?:[a-z][\w-]*\s+)?["'`]?$"#;

/// Words before a failure's name that say it did not happen, might, or is what work is
/// about (`Trains without OOM`, `Possible OOM`, `Avoiding OOM with large batches`): a
/// short title with them states no failure.
pub(super) const UNMET: &str = r"(?i)\b(?:without|no|not|never|avoid\w*|prevent\w*|possible|possibly|potential|reduc\w*|fix\w*|handl\w*|detect\w*|catch\w*|debug\w*|test\w*|simulat\w*|diagnos\w*|reproduc\w*|investigat\w*)\b";

/// A negation right before the failure's words: the failure did not happen, or was not the
/// cause (`My crashes are not due to insufficient memory`), or another came in its place
/// (`Instead of a user friendly "out of memory" error, we get "TextDecoder" errors`). A failure
/// that might come is none yet (Chrome DevTools' `Paused before potential out-of-memory crash`).
pub(super) const NEGATED: &str = concat!(
    r"(?i)\b(?:(?:not|never)\s+(?:due to|because of|caused by|related to)|isn't|wasn't|aren't|weren't)\s+(?:(?:an?|the)\s+)?$",
    r#"|(?i)\binstead of\s+(?:(?:an?|the)\s+)?(?:[\w-]+\s+){0,2}["'`]?$"#,
    r"|(?i)\b(?:potential|possible|imminent|impending)\s+$",
    // (What the failure does not look like: `it does not look like an OOM error or permissions
    // error at first glance`.)
    r"|(?i)\b(?:(?:does|do|did)\s+not|doesn't|don't|didn't)\s+(?:look|seem|sound|appear)\s+(?:like|to be)\s+(?:(?:an?|the)\s+)?$",
    // (A purpose or a habit that denies it: xz's `Reduced the number of threads from 64 to 2 to
    // not exceed the memory usage limit of 3000 MiB`, `so as not to run out of memory`.)
    r"|(?i)\b(?:to\s+not|not\s+to|never)\s+$",
    // (A failure the writer wishes were raised: pyvips' `Why the memory issue in vips library …
    // is not raised as MemoryError for python to handle gracefully?`.)
    r"|(?i)\b(?:not|n't)\s+(?:raised|thrown|reported|returned)\s+(?:as|with)\s+(?:(?:an?|the)\s+)?$"
);

/// A verb of work right before the failure's words: the failure is what the work is about,
/// not what happened (`unable to diagnose OOM`, `Testing OOM issues`, `how to reproduce the OOM`,
/// `Check allocations for OOM`). The one who works is no work (CBMC's `SAT checker ran out of
/// memory`).
pub(super) const WORKED_ON: &str = r"(?i)\b(?:(?:avoid|prevent|fix|detect|catch|debug|test|check|guard)(?:s|es|ed|ing|ion|ions|ance)?|(?:reduc|handl|simulat|diagnos|reproduc|investigat)(?:e|es|ed|ing|ion|ions|tion|is)?)\s+(?:(?:\w+\s+){0,2}(?:for|against)\s+)?(?:(?:the|an?|this|these|those)\s+)?$";

/// A verb of the failure's occurrence before [`NAMED`]'s determiner, or before a code in
/// backticks: the writer reports a failure met (`there will be a MemoryError`, `I got an out
/// of memory error`, ``which errors out with `hipErrorOutOfMemory` ``), not a thing named.
pub(super) const MET: &str =
    concat!(r"(?i)\b(?:", meeting_verbs!(), r#")\s+(?:(?:a|an|the|this|that)\s+(?:[a-z][\w-]*\s+)?)?["'`]?$"#);

/// The class of what was met as a writer types it, before its message (Coqui TTS's `but then it
/// threw runtimeError bad allocation`).
pub(super) const MET_CLASS_TYPED: &str =
    concat!(r"(?i)\b(?:thrown|raises|", meeting_verbs!(), r")\s+[a-z_][\w.]*(?:error|exception)\s*:?\s+$");

/// The writer, reporting that they met the failure: their pronoun does not make the sentence
/// talk ([`PEOPLE`]).
/// Nor do the `you`s of one who tells how to meet it, before the message after a colon
/// (`If you compiling the sb2008 data you get this error: TeX capacity exceeded`).
pub(super) const WRITER_MEETS: &str = concat!(
    r"(?i)\b(?:I|we|I(?:'|’)m|we(?:'|’)re)\s+(?:",
    meeting_verbs!(),
    r")\b|^.*\byou\s+(?:will\s+)?(?:get|see)\s+(?:this|the following|an?|the same)\s+(?:error|message|warning|output)\s*:"
);

/// A failed allocation call with the size it was given, its first decimal argument of three
/// digits or more (`mmap(MAP_ANON|MAP_SHARED, 524288000) failed`, InnoDB's `mmap(137363456 bytes)
/// failed`, the JVM's `os::commit_memory(0x0000000090000000, 117440512, 0) failed`, SlimGuard's
/// `mmap(8589934592): Cannot allocate memory`). An argument is whole, between the parenthesis
/// or commas: digits in a file's name are not one (MonetDB's
/// `mmap(/var/lib/…/174471412.tail,65536) failed`).
pub(super) const FAILED_CALL: &str = concat!(
    r"\b(?:",
    allocation_calls!(),
    r")(?:\[[^\]]{0,40}\])?\s*\((?:[^)]*?,)?\s*(\d{3,})(?:\s*bytes)?\s*(?:,[^)]*)?\)\s*(?i:failed\b|:\s*(?:cannot allocate memory|out of memory)\b)",
    // (Or after it: PG-Strom's `failed on gpuMemAlloc(536878168)`.)
    r"|\b(?i:failed) (?:on|in|at) \w*(?:Alloc|alloc)\w*\(\s*(\d{3,})\s*\)"
);

/// The writer, reporting the failure met right before its words (`Every time I get CUDA out of
/// memory issue`, `we still hit OOM`, a message quoted after it), or as the end a story reached (`the memory keeps
/// increasing, and finally cuda out of memory`): a report, though no error word follows.
pub(super) const WRITER_MET: &str = concat!(
    // (The quote may open before the words that lead the message: `I get "JavaScript heap out of
    // memory"`.)
    r"(?i)\b(?:I|we|I(?:'|’)m|we(?:'|’)re)\s+(?:(?:still|always|often|sometimes|now|also|then|just|constantly|randomly)\s+)?(?:",
    meeting_verbs!(),
    r#")\s+(?:["'`]?[\w-]+\s+){0,2}["'`]?$"#,
    // (Or after what the writer did first: `I tried A10 GPU with 24 GB and received OOM`, `We
    // are using pnpm … and during install pnpm errors with FATAL ERROR: …`.)
    r"|(?i)\b(?:I|we)\s+[^.;!?]{1,80}?\band\s+(?:then\s+)?(?:[^.;!?]{1,40}?\s)?(?:",
    meeting_verbs!(),
    r#")\s+(?:["'`]?[\w-]+\s+){0,2}["'`]?$"#,
    r"|(?i)\b(?:finally|eventually)\s+(?:[\w-]+\s+)?$",
    // (Or what it made impossible: `Can no longer compile our app due to OOM compiler crash`.)
    "|",
    inability_due_to!(),
    // A message quoted after the words of meeting it (Stata's ``getting the message `unable to
    // restore data due to insufficient memory` ``, ``exit with the message ` Exit Code: 137,
    // Exit Message: "OOM Killed"` ``).
    r"|(?i)\b(?:",
    meeting_verbs!(),
    // (Also with when it came between: `I am getting an error when trying to run your code:
    // "failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED"`.)
    // (Or the following error: Crater's `I get the following error "Allowed memory size of …`.)
    // (And a problem like the message, which may quote the error it met in turn: DALI's `i met a
    // problem like "Critical error in pipeline: […] CUDA runtime api error "out of memory" …"`.)
    r#"|see|seeing)\s+(?:the|this|that|a|an)\s+(?:following\s+)?(?:error|message|warning|problem|issue)(?:\s+like)?(?:\s+(?:when|while|after)\s[^"'`.;!?]{0,80})?\s*:?\s*(?:`[^`]*|"[^"]*(?:\s"\s*)?|'[^']*)$"#
);

/// A message quoted right after the verb of meeting it, its place first in any case (a title's
/// `run test_demo.py encounter "cuda out of memory"`): what was printed. Only after the verb: a
/// place word after any quote's mark made a Korean explainer's `“CUDA out of memory”라는
/// 메시지를` ("the message called …") a record.
pub(super) const QUOTED_AFTER_MEETING: &str = concat!(
    r"\b(?i:",
    meeting_verbs!(),
    r#")\s+["'\u{201c}\u{2018}]\s*(?i:cuda|gpu|hip|device|host|system|vram|ram)\s+$"#
);

/// An exception class followed by a noun or a verb, as a sentence names it
/// (`MemoryError message is often empty`, `OutOfMemoryError handling`, JRuby's `Specify -w
/// for full OutOfMemoryError stack trace`): matched from the failure words on.
pub(super) const CLASS_AS_NOUN: &str = r"^\w*(?:Error|Exception)\s+(?:message|messages|handling|(?:stack\s+)?traces?|backtraces?|class|type|types|objects?|instances?|is|was|are|were|should|will|can|could|would|might|may)\b";

/// A status number explained by the failure's name (`Error -2 is
/// VK_ERROR_OUT_OF_DEVICE_MEMORY`, `errno 12 means ENOMEM`): a person
/// decoding a code, whatever error words the line holds. So is a pointer to a code's
/// documentation (PyTorch's ``Search for `cudaErrorMemoryAllocation' in https://… for more
/// information.``, under the error it explains).
pub(super) const EXPLAINED: &str = r#"(?i)\b(?:error|code|errcode|errno|status)\s*[-=:#]?\s*-?\d+\s+(?:is|means|stands for)\s+["'`]?[\w:.]*$|\bsearch for\s+["'`]$"#;

/// What ran out, where it is not memory: the rest of the sentence after the
/// failure words names another resource (`failed to allocate a pty`,
/// `Failed to allocate directory watch: Too many open files`, `failed to
/// allocate for range 0: no IP addresses available`, `There is not enough
/// space on the disk`, `ResourceExhausted: 429 Quota exceeded for quota
/// metric …`). It counts only where that rest names no memory
/// ([`MEMORY_NAMED`]): `Memory quota exceeded` and `not enough space to
/// allocate 20 MiB` are memory failures.
pub(super) const OTHER_RESOURCE: &str = concat!(
    r"(?i)\b(?:ptys?|ttys?|ports?|IPs?|IP address(?:es)?|for range \d+|directory watch|inotify|watch(?:es)?",
    r"|file descriptors?|open files|file handles?|sockets?|disk|drive|file ?system|partition|storage",
    r"|space left|quota|rate limit|requests? per|429|too many requests|resources|time limit|nodes?|cpus?)\b",
);

/// Failure words that state no shortage of memory, by what follows them: the memory is
/// another thing, or the failure another error. One row per reading, its comment saying why,
/// so that a new one is one row; a test walks every row against a real line under `fixtures/`.
pub(super) struct NoShortage {
    pub scope: Scope,
    pub pattern: &'static str,
    /// What makes it a shortage after all, in the same sentence.
    pub unless: Option<&'static str>,
}

/// The text a row of [`NO_SHORTAGE`] is matched on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// The failure words' sentence, from the words on.
    Words,
    /// The line before the words.
    Before,
    /// The whole line.
    Line,
}

pub(super) const NO_SHORTAGE: &[NoShortage] = &[
    // A status's field named by the words, its value no (Pterodactyl's `Out of memory: false`).
    NoShortage { scope: Scope::Words, pattern: r"(?i)^[\w -]{0,40}?\s*[:=]\s*(?:false|no)\s*$", unless: None },
    // The dynamic loader's fixed reserve for thread-local storage is full, however much memory
    // is free.
    NoShortage { scope: Scope::Words, pattern: r"(?i)^cannot allocate memory in static TLS block\b", unless: None },
    // Memory as the name of another thing: a quantum simulator's classical memory slots, a
    // machine's memory channels or bandwidth.
    NoShortage {
        scope: Scope::Words,
        pattern: r"(?i)^(?:not enough|insufficient|no (?:more |free )?|out of) (?:[\w-]+ ){0,2}?memory (?:slots?|bandwidth|channels?|modules?|banks?)\b",
        unless: None,
    },
    // A shader compiler's packing of a signature's elements into its registers (DXC's `Failed to
    // allocate all input signature elements in available space.`): no memory's.
    NoShortage {
        scope: Scope::Words,
        pattern: r"(?i)\ballocate all (?:input|output|patch constant) signature elements\b",
        unless: None,
    },
    // A kernel launch that asks for more registers or threads per block than the device has.
    NoShortage { scope: Scope::Words, pattern: r"^[A-Z_]*LAUNCH_OUT_OF_RESOURCES\b", unless: None },
    // Memory read out of its bounds (wasmtime's `out of bounds memory access`): a fault.
    NoShortage { scope: Scope::Words, pattern: r"(?i)^out[ -]?of[ -](?:bounds|range)\b", unless: None },
    // Gdb's `gdb.MemoryError`, a read of memory it could not access.
    NoShortage {
        scope: Scope::Line,
        pattern: r"\bgdb\.MemoryError\b|(?i:\bcannot access memory at address\b)",
        unless: None,
    },
    // A call that failed with another error than a shortage (valgrind's `mmap(…) failed in UME
    // with error 22 (Invalid argument)`, pycuda's `cuMemAllocManaged failed: invalid argument`).
    NoShortage {
        scope: Scope::Words,
        pattern: r"(?i)(?:\)|\b\w*alloc\w*)\s*failed\b.{0,40}?\b(?:error 22|errno 22|EINVAL|invalid argument|(?:operation )?not supported)\b",
        unless: Some(SHORTAGE_NAMED),
    },
    // An allocation refused for a cause it states that is no shortage (QSVEnc's `Failed to
    // allocate frames: undeveloped feature.`, CUDA.jl's `Cannot allocate a unified memory buffer
    // (returns "operation not supported")`).
    NoShortage {
        scope: Scope::Words,
        pattern: r#"(?i)^(?:failed to|cannot|can't|unable to) allocate\b[^.:;]{0,60}(?::|\(returns?)\s*"?(?:undeveloped feature|unsupported|(?:operation )?not supported|invalid (?:video )?param)"#,
        unless: Some(SHORTAGE_NAMED),
    },
    // A store kept under its own cap by dropping what is oldest, as it goes (AR.Drone's `Too
    // much memory used 394 mb > 40 mb, removing oldest flight ./flight`).
    NoShortage {
        scope: Scope::Words,
        pattern: r"(?i)\b(?:removing|evicting|deleting|dropping|purging|discarding) (?:the )?(?:oldest|least recently used)\b",
        unless: None,
    },
    // A scheduler's check of its tasks' estimates against what it was given, before it runs them
    // (nipype's `Some nodes exceed the total amount of memory available (2.23GB).`): a plan, not
    // a failure met.
    NoShortage {
        scope: Scope::Line,
        pattern: r"(?i)\bsome nodes exceed the total amount of memory available\b",
        unless: None,
    },
    // An assertion of the allocator's that failed (glibc's `malloc assertion failure in
    // __libc_calloc: !mem || chunk_is_mmapped …`): a corrupt heap caught, not a shortage.
    NoShortage { scope: Scope::Before, pattern: r"(?i)\bassertion\s+$", unless: None },
    // The words as a pattern searched for, in a command with its options (Cromwell's memory
    // retry's `grep -E -q 'OutOfMemory|Killed' /cromwell_root/stderr`; not a title's `grep
    // "memory exhausted" error`).
    NoShortage {
        scope: Scope::Before,
        pattern: r#"\b(?:[efz]?grep|rg|findstr|Select-String)(?:\s+-{1,2}[\w-]+(?:=\S+)?)+\s+(?:["'][^"']*|[^\s"']*)$"#,
        unless: None,
    },
];

/// The words that name a shortage outright, whatever else a failed call says.
const SHORTAGE_NAMED: &str = r"(?i)\b(?:ENOMEM|error 12|errno 12|cannot allocate memory|out of memory)\b";

/// Words that name memory, or a size: with them, the failure is memory's,
/// whatever other resource the sentence names ([`OTHER_RESOURCE`]).
pub(super) const MEMORY_NAMED: &str = r"(?i)\b(?:memory|mem|RAM|VRAM|HBM\d*|heap|bytes?|buffers?|tensors?|arrays?|OOM|KV cache|\w*out_?of_?(?:[a-z]+_)?memory\w*|\w*memory_?error|memory_?pressure)\b|\dbytes?\b|\d\s*[KMGTP](?:i?B)?\b|\benough storage is available to (?:complete|process) this (?:operation|command)\b";

/// What a size in a failure message stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Requested,
    Capacity,
    Free,
    Used,
    ExceededBy,
    /// A figure of its own kind (reserved, cached, rounded): it takes no
    /// role, and the words further away do not give it one.
    Other,
}

/// Which side of the size the words are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// The words come before the size: `tried to allocate 20 MiB`, `limit=2147483648`.
    Before,
    /// The words follow the size: `2.88 MiB free`, `1.96 GiB total capacity`.
    After,
}

/// One way of saying what a size is.
pub(super) struct SizeRole {
    /// Matched case-insensitively, on word boundaries.
    pub words: &'static str,
    pub side: Side,
    pub role: Role,
}

/// The words next to a size that say what it is. A size takes the role of
/// the words right after it if there are any, else of the nearest words
/// before it (the longest at equal distance: `total allocation` over
/// `allocation`). Sizes written `A of B` or `A / B` are what is used of a
/// capacity, whatever the words around them.
pub(super) const SIZE_ROLES: &[SizeRole] = &[
    SizeRole {
        words: r"(?:failed|unable|trying|tried) to allocated|tried to allocate|trying to allocate|attempting to allocate|(?:re)?allocat(?:e|es|ing|ion)|\w*alloc(?:_\w+)?|mmap|acquire|want|request(?:ed|ing|s)?|reqsize|delta|commit|reserve|desired|needs?|needed|requires?|required|requirements?|for size|(?:enlarge|grow)\w* [\w ]{0,20}?to(?: size)?|(?:expand|extend)\w* (?:the )?heap(?: by)?|asked|asking for|len|length|object size(?: is)?|assigning|size ==|needs? (?:approx(?:imately|\.)?|about|around|roughly)|kann nicht",
        side: Side::Before,
        role: Role::Requested,
    },
    SizeRole {
        // Before the capacity words they start with: `limit with 133.961 MB` (App Engine),
        // `total sbrk() is 314472448 bytes` (Perl), `Max memory usage of this container is N`
        // (CircleCI: the peak, what was used).
        words: r"limit with|total sbrk\(\)(?: is)?|would use|max(?:imum)? memory usage|used size",
        side: Side::Before,
        role: Role::Used,
    },
    SizeRole {
        // (Vulkan's `size of that heap is only 257949696 bytes`.) (A resident size's maximum, as
        // CMS's job wrapper prints it: `Job has exceeded maxPSS: 16000 MB`.) (What a pool holds for
        // all, the words of what it is for not the figure's: VictoriaMetrics' `total available memory
        // for concurrent requests: 28991029248 bytes; requested memory: 33351738840 bytes`.)
        words: r"max(?:imum)? (?:rss|pss|vsize)|total available memory(?: for [\w ]{1,40})?|max(?:imum)? mem alloc size|(?:heap|bank|pool|arena|region|space)[ -]size(?: bytes| is)?|size of (?:the |that |this |its )?(?:heap|bank|pool|arena|region)(?: is)?(?: only)?|(?:in|of) (?:a |the )?region that is|total (?:mem|memory) size|higher than the current value|total allocation|total capacity|total|hardware limit(?:ation)?|device limit|limit of|(?:memory_)?limit set to|limite de|than (?:the )?(?:[\w-]+ )?size of|limits?|capacity|cap(?: of)?|max(?:imum)? allowed|allowed|max(?:imum)? alloc(?:ation)? size|max(?:imum)?",
        side: Side::Before,
        role: Role::Capacity,
    },
    // (`Needed 212064 but only 191120 was available`: what there was, after what was needed.)
    SizeRole { words: r"free|available|avail|but only", side: Side::Before, role: Role::Free },
    SizeRole {
        // (jemalloc's `Requested: 1266803878728, active: 317336846336`; bwa-mem2's `Current
        // Allocation = 45.78 GB`; Quickwit's `memory limit was exceeded. Limit: 500.00 MB, Current:
        // 1.36 PB`.)
        // (Arduino's `Global variables use 10284 bytes (125%) of dynamic memory`.)
        words: r"consumed(?: memory)?|allocated so far|already allocated|after a total of|allocated|in use|used|uses too much(?: \w+){0,2}|using|uses?|p?v?mem|rss|pss|current (?:memory|usage|allocation)|current|memory usage|real usage|peak usage|active",
        side: Side::Before,
        role: Role::Used,
    },
    SizeRole {
        words: r"exceed(?:s|ed)? [\w ]{0,30}by|over by|overflowed by|overflows memory area [`'\x22]?\w+[`'\x22]? by|missing",
        side: Side::Before,
        role: Role::ExceededBy,
    },
    // (Android's heap footprint is its size now, below the limit it may grow to: `max allowed
    // footprint 9432960, growth limit 268435456`.)
    SizeRole {
        // (A page's size is no request's: the kernel's `HugeTLB: allocating 1024 of page size 2.00
        // MiB failed`.)
        words: r"reserved|cached|rounded to|peak|largest|allocations|fragmentation|client-requested|to free|footprint|page size",
        side: Side::Before,
        role: Role::Other,
    },
    // (What a task needs there to be free, its purpose after it: metaSPAdes' `You need approx.
    // 142.954GB of free RAM to assemble your dataset`.)
    SizeRole { words: r"free (?:memory|RAM) to [a-z]+", side: Side::After, role: Role::Requested },
    // (DataFusion's `45560 bytes remain available for the total pool`.)
    SizeRole { words: r"free|available|remaining|remains?(?: available)?", side: Side::After, role: Role::Free },
    // (CockroachDB's `512000000 bytes in budget`.)
    // (ptxas' `(0xc180 bytes, 0xc000 max)`.)
    SizeRole { words: r"total capacity|total|capacity|limit|in budget|max", side: Side::After, role: Role::Capacity },
    SizeRole { words: r"already allocated|allocated|in use|used", side: Side::After, role: Role::Used },
    // (Dask's `Task 'getattr-…' has 197.16 GiB worth of input dependencies, but worker … has
    // memory_limit set to 35.88 GiB.`)
    SizeRole {
        words: r"(?:larger|bigger|greater) than|worth of input dependencies",
        side: Side::After,
        role: Role::Requested,
    },
    // (`returns ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY for 20 GiB allocation`.)
    // (CuPy's `pinned memory (2147483648 bytes) could not be allocated`.)
    SizeRole {
        // (hhvm's `mprotect(@nil) 32768 bytes failed ( Cannot allocate memory)`.) (planetiler's
        // `26G JVM heap requested for read phase`.)
        words: r"(?:(?:JVM |off-)?heap |memory |RAM )?requested|needed|required|allocation|\)?\s*(?:could not|couldn't|cannot|can't|failed to) be allocated|failed",
        side: Side::After,
        role: Role::Requested,
    },
    SizeRole { words: r"exceed(?:s|ed)? (?:the |its )?limit", side: Side::After, role: Role::Used },
    // (Nor is a program's size in flash: the Arduino IDE's `Sketch uses 13262 bytes (5%) of program
    // storage space.`)
    SizeRole {
        words: r"reserved|cached|client-requested|\(\d{1,3}%\) of program storage",
        side: Side::After,
        role: Role::Other,
    },
];

/// Role words of other languages, as [`SIZE_ROLES`] says them: Chinese, as Paddle's and
/// MindSpore's users translate their messages (`已分配11.999512 GB内存，可用内存仅为0.000000B`).
/// The longer word first: `已分配` before `分配`.
pub(super) const ROLE_WORDS_IN_ENGLISH: &[(&str, &str)] = &[
    ("已分配", " already allocated "),
    ("已使用", " used "),
    ("已用", " used "),
    ("可用", " available "),
    ("剩余", " free "),
    ("空闲", " free "),
    ("总共", " total "),
    ("总量", " total "),
    ("尝试分配", " tried to allocate "),
    ("申请", " request "),
    ("分配", " allocate "),
    // Polish: Hyper-V's `… do uruchomienia maszyny wirtualnej X z rozmiarem pamięci 1024 MB`
    // (`… to start the virtual machine X with ram size 1024 megabytes`).
    ("z rozmiarem pamięci", " with ram size "),
];

/// The failure vocabulary compiled: a set to find every row that matches,
/// and each row alone. ASCII classes and word boundaries (the words are
/// English): a Unicode word boundary would make the set fall back from the
/// lazy DFA to a much slower engine on every line that mentions memory.
pub(super) struct Compiled {
    pub set: RegexSet,
    pub rows: Vec<Regex>,
    pub places: Vec<(Regex, Place)>,
    pub error_marks: Regex,
    pub talk: Regex,
    pub conditions: Regex,
    pub people: Regex,
    pub writer_opens: Regex,
    pub code: Regex,
    pub named: Regex,
    pub met: Regex,
    pub writer_meets: Regex,
    pub failed_call: Regex,
    pub writer_met: Regex,
    pub worked_on: Regex,
    pub negated: Regex,
    pub courtesy: Regex,
    pub unmet: Regex,
    pub explained: Regex,
    pub class_as_noun: Regex,
    pub flag: Regex,
    pub list_marker: Regex,
    pub other_resource: Regex,
    pub memory_named: Regex,
    pub example_introductions: Regex,
    /// [`NO_SHORTAGE`]'s rows: where each is matched, its pattern and its `unless`.
    pub no_shortage: Vec<(Scope, Regex, Option<Regex>)>,
    /// One regex per side: each alternative a row of [`SIZE_ROLES`], as a numbered group.
    pub roles_before: Regex,
    pub roles_after: Regex,
}

/// Whether `raw` holds an anchor: the cheap test every line of a log goes
/// through. The line is lowered to ASCII lower case in a buffer kept for
/// the next line, so that the lower-case anchors are found by one packed
/// (SIMD) search; built apart from the tables, which a log without any
/// anchor never compiles.
pub(super) fn anchored(raw: &[u8]) -> bool {
    struct Anchored {
        any_case: AhoCorasick,
        /// Per anchor, its place in [`GATED_ANCHORS`], if it is gated.
        gate_of: Vec<Option<usize>>,
        hints: Vec<AhoCorasick>,
        exact_case: memchr::memmem::Finder<'static>,
    }
    static ANCHORED: LazyLock<Anchored> = LazyLock::new(|| {
        // Leftmost-first lets the automaton use its packed (SIMD) prefilter.
        let packed = |literals: &[&str]| {
            let lower = literals.iter().map(|literal| literal.to_ascii_lowercase());
            AhoCorasick::builder().match_kind(MatchKind::LeftmostFirst).build(lower).expect("anchors in xmem's source")
        };
        Anchored {
            any_case: packed(ANCHORS),
            gate_of: ANCHORS.iter().map(|anchor| GATED_ANCHORS.iter().position(|(gated, _)| gated == anchor)).collect(),
            hints: GATED_ANCHORS.iter().map(|(_, hints)| packed(hints)).collect(),
            exact_case: memchr::memmem::Finder::new(ANCHOR_EXACT_CASE),
        }
    });
    thread_local! {
        static LOWERED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let anchors = &*ANCHORED;
    anchors.exact_case.find(raw).is_some()
        || LOWERED.with_borrow_mut(|lowered| {
            lowered.clear();
            lowered.extend_from_slice(raw);
            lowered.make_ascii_lowercase();
            let mut gates_found = 0u32;
            for found in anchors.any_case.find_iter(lowered.as_slice()) {
                match anchors.gate_of[found.pattern().as_usize()] {
                    None => return true,
                    Some(gate) => gates_found |= 1 << gate,
                }
            }
            anchors
                .hints
                .iter()
                .enumerate()
                .any(|(gate, hints)| gates_found & 1 << gate != 0 && hints.is_match(lowered.as_slice()))
        })
}

/// The tables, compiled on first use. They are literals of this file, so a
/// failure to compile is a bug here, found by the tests.
pub(super) fn compiled() -> &'static Compiled {
    static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
        let patterns = FAILURE_WORDS.iter().map(|w| w.pattern);
        let roles = |side: Side, anchored: bool| {
            let alternatives: Vec<String> =
                SIZE_ROLES.iter().filter(|r| r.side == side).map(|r| format!("({})", r.words)).collect();
            let body = alternatives.join("|");
            let pattern = if anchored {
                // Right after the size, past the words that only link it to its role.
                format!(
                    r"(?i)^\s*(?:(?:of|which|memory|gpu|device|host|bytes?|is|are|has|have|had|been|was|were|so|far|currently|already)\s+)*(?:{body})\b"
                )
            } else {
                // (A field printed as a call: `reqsize(157mb) used(432.731mb) limit(512mb)`; or
                // with brackets, Druid's `maxDirectMemory[4,110,417,920], memoryNeeded[…]`.)
                format!(r"(?i)\b(?:{body})(?:\s*[:=]\s*|\(|\[|\s+|$)")
            };
            ascii(&pattern)
        };
        Compiled {
            set: RegexSetBuilder::new(patterns).unicode(false).build().expect("failure words in xmem's source"),
            rows: FAILURE_WORDS.iter().map(|w| ascii(w.pattern)).collect(),
            places: PLACE_WORDS.iter().map(|(pattern, place)| (ascii(pattern), *place)).collect(),
            error_marks: ascii(ERROR_MARKS),
            talk: ascii(TALK),
            conditions: ascii(CONDITIONS),
            people: ascii(PEOPLE),
            writer_opens: ascii(WRITER_OPENS),
            code: ascii(CODE),
            named: ascii(NAMED),
            met: ascii(MET),
            writer_meets: ascii(WRITER_MEETS),
            failed_call: ascii(FAILED_CALL),
            writer_met: ascii(WRITER_MET),
            worked_on: ascii(WORKED_ON),
            negated: ascii(NEGATED),
            courtesy: ascii(COURTESY),
            unmet: ascii(UNMET),
            explained: ascii(EXPLAINED),
            class_as_noun: ascii(CLASS_AS_NOUN),
            flag: ascii(FLAG),
            list_marker: ascii(LIST_MARKER),
            other_resource: ascii(OTHER_RESOURCE),
            memory_named: ascii(MEMORY_NAMED),
            example_introductions: ascii(EXAMPLE_INTRODUCTIONS),
            no_shortage: NO_SHORTAGE.iter().map(|row| (row.scope, ascii(row.pattern), row.unless.map(ascii))).collect(),
            roles_before: roles(Side::Before, false),
            roles_after: roles(Side::After, true),
        }
    });
    &COMPILED
}

/// A pattern of these tables, compiled for ASCII text (see [`Compiled`]).
fn ascii(pattern: &str) -> Regex {
    RegexBuilder::new(pattern).unicode(false).build().expect("a table pattern in xmem's source")
}

/// The row of [`SIZE_ROLES`] (its index there) on `side` whose group matched.
pub(super) fn role_row(side: Side, captures: &Captures) -> Option<usize> {
    SIZE_ROLES
        .iter()
        .enumerate()
        .filter(|(_, r)| r.side == side)
        .enumerate()
        .find_map(|(group, (row, _))| captures.get(group + 1).map(|_| row))
}
