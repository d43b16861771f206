//! Memory-mapped inputs that another process may shrink while xmem reads
//! them. A read of a mapped page past the new end of a file raises SIGBUS,
//! which kills the process. xmem maps its inputs (a 1 GB profile is not
//! copied into memory: BENCHMARKS.md, "Reading a shrinking file") and
//! protects each map instead: a SIGBUS inside a live map puts zero pages over
//! the rest of it, so the read carries on, and the file is marked changed.
//! [`shrunk`] then names it, and the command fails with exit code 2 before it
//! prints anything read from it. A SIGBUS anywhere else goes to the handler
//! that was there before (or kills the process, as it would have).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

use memmap2::Mmap;

/// Maps alive at once that are protected; more are read into memory.
const SLOTS: usize = 1024;

/// One protected map: its address range (`start` 0: free; 1: being filled)
/// and whether a read in it faulted.
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    faulted: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)] // the initialiser of each slot
const FREE: Slot = Slot { start: AtomicUsize::new(0), end: AtomicUsize::new(0), faulted: AtomicBool::new(false) };
static SLOT_TABLE: [Slot; SLOTS] = [FREE; SLOTS];

/// The files whose map faulted, by slot, while the map lives.
static PATHS: Mutex<Vec<(usize, PathBuf)>> = Mutex::new(Vec::new());
/// The files whose map faulted, once the map is gone.
static SHRUNK: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

static INSTALL: Once = Once::new();
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);
/// The SIGBUS action before xmem's, written once before xmem's is installed.
static mut PREVIOUS: Option<libc::sigaction> = None;

/// A read-only map of a whole file whose faults are caught. It owns the
/// bytes of a [`bytes::Bytes`].
pub struct GuardedMap {
    map: Mmap,
    slot: Option<usize>,
}

impl AsRef<[u8]> for GuardedMap {
    fn as_ref(&self) -> &[u8] {
        &self.map
    }
}

impl Drop for GuardedMap {
    fn drop(&mut self) {
        let Some(slot) = self.slot else { return };
        let mut paths = PATHS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = paths.iter().position(|(s, _)| *s == slot) {
            let (_, path) = paths.swap_remove(at);
            if SLOT_TABLE[slot].faulted.load(Ordering::Acquire) {
                SHRUNK.lock().unwrap_or_else(|e| e.into_inner()).push(path);
            }
        }
        SLOT_TABLE[slot].start.store(0, Ordering::Release);
    }
}

/// Maps `file` (named `path`), protected against its shrinking when a slot
/// is free; `None` when none is, for the caller to read the file instead.
pub fn map(file: &File, path: &Path) -> std::io::Result<Option<GuardedMap>> {
    install();
    let Some(slot) =
        (0..SLOTS).find(|&i| SLOT_TABLE[i].start.compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed).is_ok())
    else {
        return Ok(None);
    };
    // SAFETY: the map is read-only; xmem never writes to its inputs. A file
    // truncated while mapped makes reads past its new end fault with SIGBUS,
    // which the handler below turns into zero pages and a mark on the slot.
    let map = match unsafe { Mmap::map(file) } {
        Ok(map) => map,
        Err(e) => {
            SLOT_TABLE[slot].start.store(0, Ordering::Release);
            return Err(e);
        }
    };
    let _ = map.advise(memmap2::Advice::Sequential);
    let start = map.as_ptr() as usize;
    PATHS.lock().unwrap_or_else(|e| e.into_inner()).push((slot, path.to_path_buf()));
    SLOT_TABLE[slot].faulted.store(false, Ordering::Release);
    SLOT_TABLE[slot].end.store(start + map.len(), Ordering::Release);
    SLOT_TABLE[slot].start.store(start, Ordering::Release);
    Ok(Some(GuardedMap { map, slot: Some(slot) }))
}

/// The files that shrank while they were mapped since the last call, each once.
pub fn take_shrunk() -> Vec<PathBuf> {
    let mut files = std::mem::take(&mut *SHRUNK.lock().unwrap_or_else(|e| e.into_inner()));
    let paths = PATHS.lock().unwrap_or_else(|e| e.into_inner());
    for (slot, path) in paths.iter() {
        if SLOT_TABLE[*slot].faulted.swap(false, Ordering::AcqRel) {
            files.push(path.clone());
        }
    }
    files.sort();
    files.dedup();
    files
}

fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf and sigaction are called with valid arguments;
        // PREVIOUS is written here, once, before the handler that reads it can run.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE_SIZE.store(page as usize, Ordering::Relaxed);
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &action, &mut previous) == 0 {
                PREVIOUS = Some(previous);
            }
        }
    });
}

/// The SIGBUS handler. Only async-signal-safe work: atomics, `mmap`, `sigaction`.
extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t for a SA_SIGINFO handler.
    let address = unsafe { (*info).si_addr() } as usize;
    let page = PAGE_SIZE.load(Ordering::Relaxed);
    for slot in &SLOT_TABLE {
        let start = slot.start.load(Ordering::Acquire);
        let end = slot.end.load(Ordering::Acquire);
        if start > 1 && start <= address && address < end {
            let from = address & !(page - 1);
            let to = end.div_ceil(page) * page;
            // SAFETY: [from, to) lies in a live read-only map xmem owns;
            // zero pages replace the part of it the file no longer backs.
            let zeros = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    to - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if zeros != libc::MAP_FAILED {
                slot.faulted.store(true, Ordering::Release);
                return;
            }
        }
    }
    // Not a read of an input: what would have happened without xmem's handler.
    // SAFETY: PREVIOUS was written before this handler was installed.
    unsafe {
        match *std::ptr::addr_of!(PREVIOUS) {
            Some(previous) if previous.sa_sigaction != libc::SIG_DFL && previous.sa_sigaction != libc::SIG_IGN => {
                if previous.sa_flags & libc::SA_SIGINFO != 0 {
                    let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(previous.sa_sigaction);
                    handler(signal, info, context);
                } else {
                    let handler: extern "C" fn(libc::c_int) = std::mem::transmute(previous.sa_sigaction);
                    handler(signal);
                }
            }
            _ => {
                // The default action: returning re-runs the read, which faults again and ends the process.
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
            }
        }
    }
}
