//! What the log says before a memory error that the error's own line does
//! not: the traceback that leads to it (the user's frame), the kernel the
//! autotuner was trying when it ran out, and the pool each device's
//! allocator was given at start (JAX's and TensorFlow's memory fraction)
//! and the device's size. The scanner shows every line to [`Context::observe`],
//! which keeps only these few facts, and hands each new event to
//! [`Context::apply`].

use super::event::{OomEvent, Phase, UserFrame};
use super::line::normalise;
use super::size::{self, SIZE};

/// An event this many lines after the last frame of a traceback is the
/// exception that traceback ends in (its message can run over several
/// lines: `Failed to get configs … Example failure:` then the error).
const TRACEBACK_REACH: u64 = 12;

/// An event this many lines after the autotuner named the instruction it
/// could not tune belongs to that autotuning (the HLO it prints runs over several lines).
const AUTOTUNE_REACH: u64 = 60;

/// Devices whose pool and size are remembered, by index.
const MAX_DEVICES: usize = 64;

#[derive(Default)]
pub(super) struct Context {
    traceback: Option<Traceback>,
    /// The traceback before it: a message read only after the next traceback began (a chained
    /// exception's `During handling of the above exception …`) ended this one.
    previous_traceback: Option<Traceback>,
    autotuning: Option<Autotuning>,
    /// The pool the allocator of device N may use (`XLA backend will use up to …`).
    pools: Vec<(u32, u64)>,
    /// The whole memory of device N (`totalMemory: 15.75GiB`).
    devices: Vec<(u32, u64)>,
    /// The device a multi-line description (`Found device 0 with properties:`) is about.
    describing: Option<u32>,
}

struct Traceback {
    /// The innermost frame so far that is the user's own code.
    user_frame: Option<UserFrame>,
    /// The innermost frame of code without a file (`<string>`: `python -c`, or code a library generated),
    /// the user's only when no file of theirs is in the traceback.
    unnamed_frame: Option<UserFrame>,
    /// A frame allocates pinned (page-locked) host memory (CuPy's `pinned_memory.pyx … hostAlloc`,
    /// PyTorch's `pin_memory`): the CUDA runtime's `out of memory` there is the host's RAM.
    pins_host_memory: bool,
    last_line: u64,
}

impl Traceback {
    fn starting(line: u64) -> Traceback {
        Traceback { user_frame: None, unnamed_frame: None, pins_host_memory: false, last_line: line }
    }

    fn user_frame(&self) -> Option<UserFrame> {
        self.user_frame.clone().or_else(|| self.unnamed_frame.clone())
    }
}

struct Autotuning {
    instruction: Option<String>,
    shape: Option<String>,
    line: u64,
    /// The instruction is on the next line (`Failed to determine best cudnn convolution algorithm for:`).
    instruction_follows: bool,
}

impl Context {
    /// Reads the facts a line gives, if it is one of the few lines that give any.
    pub fn observe(&mut self, number: u64, raw: &[u8]) {
        let pending = self.autotuning.as_ref().is_some_and(|a| a.instruction_follows && a.line + 1 == number);
        if !pending && !regex!(bytes concat!(
            r#"File "|File ~|File /|Cell In\[|Traceback \(most recent call last\)"#,
            r"|XLA backend|Created (?:TensorFlow )?device|with properties|totalMemory:|deviceMemorySize:|Total memory:",
            r"|Could not get config for HLO|best cudnn convolution algorithm|Autotuning failed|All algorithms tried for",
            r"|algorithm_picker\w*\.cc:\d|autotuner\w*\.cc:\d",
        ))
        .is_match(raw)
        {
            return;
        }
        // XLA's autotuners log from their own files: `cudnn_conv_algorithm_picker.cc:525] Resource exhausted: …`.
        if regex!(bytes r"algorithm_picker\w*\.cc:\d|autotuner\w*\.cc:\d").is_match(raw) {
            self.autotuning_seen(number);
        }
        let line = normalise(number, raw);
        // (torchrun tags each rank's lines: `[rank0]:   File "train.py", line 8, in <module>`.)
        let text = regex!(r"^\[(?:rank|default)\d+\]:").replace(line.text.trim(), "");
        let text = text.trim();
        if pending {
            self.instruction_follows(text);
        }
        if text.starts_with("Traceback (most recent call last)") {
            self.previous_traceback = self.traceback.replace(Traceback::starting(number));
        } else if let Some(frame) = frame(text) {
            let traceback = self.traceback.get_or_insert_with(|| Traceback::starting(number));
            traceback.last_line = number;
            traceback.pins_host_memory |=
                regex!(r"pinned_memory|[hH]ostAlloc|MallocHost|\bpin_memory\b|empty_pinned").is_match(text);
            if frame.file.starts_with("<frozen ") {
                // The interpreter's own bootstrap code.
            } else if frame.file.starts_with('<') && frame.file.ends_with('>') {
                traceback.unnamed_frame = Some(frame);
            } else if crate::python_code::is_user_code(&frame.file) {
                traceback.user_frame = Some(frame);
            }
        } else {
            self.autotuner(number, text);
            self.memory(text);
        }
    }

    /// Gives a new event what the lines before it said about it.
    pub fn apply(&mut self, event: &mut OomEvent) {
        event.program = event.program.take().or_else(|| program(&event.message));
        let ended_by = |traceback: &&Traceback| {
            event.line >= traceback.last_line && event.line <= traceback.last_line + TRACEBACK_REACH
        };
        if let Some(traceback) = self.traceback.iter().chain(&self.previous_traceback).find(ended_by) {
            event.user_frame = event.user_frame.take().or_else(|| traceback.user_frame());
            if traceback.pins_host_memory && event.memory_space.is_none() {
                event.memory_space = Some("host".to_string());
            }
        }
        if let Some(autotuning) = &self.autotuning {
            if event.line >= autotuning.line && event.line <= autotuning.line + AUTOTUNE_REACH {
                event.phase = Some(Phase::Autotune);
                if event.op.is_none() {
                    event.op = autotuning.instruction.clone();
                    event.shape = event.shape.take().or_else(|| autotuning.shape.clone());
                }
            }
        }
        let Some(device) = device_of(event) else { return };
        let known = |table: &[(u32, u64)]| table.iter().find(|(d, _)| *d == device).map(|(_, bytes)| *bytes);
        event.limit_bytes = event.limit_bytes.or_else(|| known(&self.pools));
        event.device_bytes = event.device_bytes.or_else(|| known(&self.devices));
    }

    /// `Could not get config for HLO: %gemm_fusion_dot.1 = f32[8192,8192]{1,0} fusion(…`
    /// and the older wordings of the same failure.
    fn autotuner(&mut self, number: u64, text: &str) {
        let Some(found) = regex!(
            r"Could not get config for HLO|best cudnn convolution algorithm|Autotuning failed|All algorithms tried for"
        )
        .find(text) else {
            return;
        };
        let rest = text.get(found.end()..).unwrap_or_default();
        let (instruction, shape) = instruction(rest).unzip();
        let instruction_follows = instruction.is_none();
        self.autotuning = Some(Autotuning { instruction, shape, line: number, instruction_follows });
    }

    /// A line from an autotuner without the instruction's name: autotuning goes on.
    fn autotuning_seen(&mut self, number: u64) {
        match &mut self.autotuning {
            Some(autotuning) if number <= autotuning.line + AUTOTUNE_REACH => autotuning.line = number,
            _ => {
                self.autotuning =
                    Some(Autotuning { instruction: None, shape: None, line: number, instruction_follows: false })
            }
        }
    }

    fn instruction_follows(&mut self, text: &str) {
        if let Some(autotuning) = &mut self.autotuning {
            autotuning.instruction_follows = false;
            if let Some((instruction, shape)) = instruction(text) {
                autotuning.instruction = Some(instruction);
                autotuning.shape = Some(shape);
            }
        }
    }

    /// The pool and the device's size, as XLA and TensorFlow print them when they start.
    fn memory(&mut self, text: &str) {
        if let Some(found) = regex!(&format!(
            r"XLA backend (?:will use up to|allocating) (?:{SIZE} \()?(\d+) bytes\)? on device (\d+) for BFCAllocator"
        ))
        .captures(text)
        {
            remember(&mut self.pools, &found[2], found[1].parse().ok());
        } else if let Some(found) =
            regex!(r"Created (?:TensorFlow )?device \S*?(?:GPU|gpu):(\d+) with (\d+) MB memory").captures(text)
        {
            // TensorFlow prints the pool in MiB, rounded down.
            remember(&mut self.pools, &found[1], found[2].parse::<u64>().ok().and_then(|mib| mib.checked_mul(1 << 20)));
        } else if let Some(found) = regex!(r"Found device (\d+) with properties").captures(text) {
            self.describing = found[1].parse().ok();
        }
        if let Some(found) = regex!(&format!(r"(?:totalMemory|deviceMemorySize|Total memory): ({SIZE})")).captures(text)
        {
            if let Some(device) = self.describing {
                remember(&mut self.devices, &device.to_string(), size::unsigned(size::parse(&found[1])));
            }
        }
    }
}

/// The executable a message names: `[executable_name='jit_step']`.
pub(super) fn program(text: &str) -> Option<String> {
    regex!(r"\[executable_name='([^']+)'\]").captures(text).map(|found| found[1].to_string())
}

fn remember(table: &mut Vec<(u32, u64)>, device: &str, bytes: Option<u64>) {
    let (Ok(device), Some(bytes)) = (device.parse::<u32>(), bytes) else { return };
    if let Some(entry) = table.iter_mut().find(|(d, _)| *d == device) {
        entry.1 = bytes;
    } else if table.len() < MAX_DEVICES {
        table.push((device, bytes));
    }
}

/// The device an event is about: its allocator (`GPU_0_bfc`) or the memory it names (`device 0`, `GPU 0`).
fn device_of(event: &OomEvent) -> Option<u32> {
    let named = event.allocator.as_deref().and_then(|a| regex!(r"^GPU_(\d+)_bfc$").captures(a));
    if let Some(found) = named {
        return found[1].parse().ok();
    }
    let space = event.memory_space.as_deref()?;
    regex!(r"^(?:device|gpu|device ordinal) (\d+)$").captures(&space.to_lowercase())?[1].parse().ok()
}

/// `%gemm_fusion_dot.1 = f32[8192,8192]{1,0} fusion(…` → the instruction and its shape.
fn instruction(text: &str) -> Option<(String, String)> {
    let found = regex!(r"%([\w.\-]+) = (\([^=]*?\)|[a-z]\w*\[[\d,]*\](?:\{[^}]*\})?)").captures(text)?;
    Some((found[1].to_string(), found[2].to_string()))
}

/// A traceback frame: Python's `File "train.py", line 14, in <module>`,
/// IPython's `File ~/train.py:14, in step(x)` and `Cell In[3], line 2`.
fn frame(text: &str) -> Option<UserFrame> {
    if let Some(found) = regex!(r#"^File "([^"]+)", line (\d+)(?:, in (.+))?$"#).captures(text) {
        return Some(UserFrame {
            file: found[1].to_string(),
            line: found[2].parse().ok()?,
            function: found.get(3).map(|f| f.as_str().trim().to_string()),
        });
    }
    if let Some(found) = regex!(r"^(Cell In\[\d+\]), line (\d+)(?:, in (.+))?$").captures(text) {
        return Some(UserFrame {
            file: found[1].to_string(),
            line: found[2].parse().ok()?,
            function: found.get(3).map(|f| f.as_str().trim().to_string()),
        });
    }
    let found = regex!(r"^File ([~/]\S*?\.py):(\d+)(?:, in ([\w.<>]+))?").captures(text)?;
    Some(UserFrame {
        file: found[1].to_string(),
        line: found[2].parse().ok()?,
        function: found.get(3).map(|f| f.as_str().to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_in_every_wording() {
        let f = frame(r#"File "/home/user/train.py", line 14, in <module>"#).unwrap();
        assert_eq!((f.file.as_str(), f.line, f.function.as_deref()), ("/home/user/train.py", 14, Some("<module>")));
        let f = frame("File ~/proj/train.py:21, in step(x, y)").unwrap();
        assert_eq!((f.file.as_str(), f.line, f.function.as_deref()), ("~/proj/train.py", 21, Some("step")));
        let f = frame("Cell In[3], line 2").unwrap();
        assert_eq!((f.file.as_str(), f.line), ("Cell In[3]", 2));
        assert!(frame("File system full").is_none());
    }

    #[test]
    fn a_file_of_the_users_wins_over_generated_code() {
        let mut context = Context::default();
        let lines = [
            "Traceback (most recent call last):",
            r#"  File "/home/user/train.py", line 12, in <module>"#,
            r#"  File "/venv/lib/python3.10/site-packages/triton/runtime/autotuner.py", line 114, in run"#,
            r#"  File "<string>", line 65, in cvmm_kernel"#,
            r#"  File "<frozen runpy>", line 88, in _run_code"#,
        ];
        for (number, line) in (1..).zip(lines) {
            context.observe(number, line.as_bytes());
        }
        let frame = context.traceback.as_ref().and_then(Traceback::user_frame).unwrap();
        assert_eq!((frame.file.as_str(), frame.line), ("/home/user/train.py", 12));
        // `python -c`: the command's own code is all there is.
        let mut context = Context::default();
        context.observe(1, br#"  File "<string>", line 1, in <module>"#);
        assert_eq!(
            context.traceback.as_ref().and_then(Traceback::user_frame).map(|f| f.file),
            Some("<string>".to_string())
        );
    }

    #[test]
    fn instructions_and_their_shapes() {
        assert_eq!(
            instruction(" %gemm_fusion_dot.1 = f32[8192,8192]{1,0} fusion(%x.1, %y), kind=kCustom"),
            Some(("gemm_fusion_dot.1".to_string(), "f32[8192,8192]{1,0}".to_string()))
        );
        assert_eq!(
            instruction("%cudnn-conv.1 = (f32[1,64,12,12]{3,2,1,0}, u8[0]{0}) custom-call(…)"),
            Some(("cudnn-conv.1".to_string(), "(f32[1,64,12,12]{3,2,1,0}, u8[0]{0})".to_string()))
        );
    }
}
