//! Which frame of a stack is the user's: the innermost Python frame outside
//! Python's standard library, installed packages (`site-packages`,
//! `dist-packages`) and PyTorch itself (`torch/`). The stacks of a snapshot
//! interleave C++ frames (the allocator, ATen, the interpreter) with the
//! Python ones; C++ frames are never the user's.

use std::sync::{Arc, LazyLock};

use regex::Regex;

use serde::Serialize;

use crate::analysis::device_memory::StackFrame;
use crate::model::torch_snapshot::TorchFrame;

/// C and C++ sources and what a symbolizer writes when it knows no file.
const NATIVE_EXTENSIONS: [&str; 9] = [".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".cu", ".cuh", ".so"];

/// A Python frame: one with a file that is not a C or C++ source, in a
/// function whose name is not a C++ one (`at::native::…`). The unwinder
/// writes `??` or nothing for native code it cannot place.
pub fn is_python(function: &str, file: &str) -> bool {
    !file.is_empty()
        && file != "??"
        && !NATIVE_EXTENSIONS.iter().any(|ext| file.ends_with(ext))
        && !function.contains("::")
}

/// A file of the standard library, an installed package or PyTorch.
pub fn is_library(file: &str) -> bool {
    crate::python_code::is_library(file) || crate::python_code::in_directory(file, "torch")
}

/// Why an allocation has no user frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoUserFrame {
    /// The stack is empty: the block was allocated before recording began.
    BeforeRecording,
    /// Every Python frame is in a library (a trainer that is itself a package).
    LibraryOnly,
    /// No Python frame: the autograd engine's thread running the backward pass.
    AutogradBackward,
    /// No Python frame, outside autograd (`stacks="cpp"`, a C++ extension).
    CppOnly,
}

/// Who owns an allocation: the user's frame, or when its stack has none, what does.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Owner {
    pub user_frame: Option<StackFrame>,
    /// Why `user_frame` is null; null when it is not.
    pub no_user_frame: Option<NoUserFrame>,
    /// For a stack of library frames only, its innermost Python frame.
    pub library_frame: Option<StackFrame>,
    /// For the backward pass, the autograd node that allocated (`NllLossBackward0`), when the stack names it.
    pub autograd_node: Option<Arc<str>>,
}

impl Owner {
    fn without(reason: NoUserFrame) -> Self {
        Owner { user_frame: None, no_user_frame: Some(reason), library_frame: None, autograd_node: None }
    }

    /// `step (train.py:53)`, or what owns the bytes instead.
    pub fn label(&self) -> String {
        if let Some(frame) = &self.user_frame {
            return frame_label(frame);
        }
        match (self.no_user_frame, &self.library_frame, &self.autograd_node) {
            (Some(NoUserFrame::LibraryOnly), Some(frame), _) => format!("in a library: {}", frame_label(frame)),
            (Some(NoUserFrame::AutogradBackward), _, Some(node)) => format!("autograd backward: {node}"),
            (Some(NoUserFrame::AutogradBackward), _, None) => "autograd backward".to_string(),
            (Some(NoUserFrame::BeforeRecording), _, _) => "allocated before recording began".to_string(),
            (Some(NoUserFrame::CppOnly), _, _) => "C++ only (no Python frame)".to_string(),
            _ => "no Python frame outside libraries".to_string(),
        }
    }
}

/// `step (train.py:53)`.
pub fn frame_label(frame: &StackFrame) -> String {
    let file = frame.file.rsplit('/').next().unwrap_or(&frame.file);
    format!("{} ({file}:{})", frame.function, frame.line)
}

fn stack_frame(frame: &TorchFrame) -> StackFrame {
    StackFrame { function: frame.function.clone(), file: frame.file.clone(), line: frame.line }
}

/// The autograd node a C++ frame runs: `NllLossBackward0` of
/// `torch::autograd::generated::NllLossBackward0_apply_functional(…)` or of `…::NllLossBackward0::apply(…)`.
static AUTOGRAD_NODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^torch::autograd::(?:generated::)?([A-Za-z_][A-Za-z0-9_]*?)(?:_apply_functional|::apply)\(")
        .expect("a valid pattern")
});

/// Frames of the autograd engine's worker threads.
fn is_autograd_engine(function: &str) -> bool {
    function.starts_with("torch::autograd::Engine::")
        || function.starts_with("torch::autograd::python::PythonEngine::")
        || function.starts_with("torch::autograd::Node::operator()")
}

/// Who owns an allocation made with this stack (innermost frame first).
pub fn owner<'a>(frames: impl Iterator<Item = &'a TorchFrame> + Clone) -> Owner {
    let mut python = frames.clone().filter(|f| is_python(&f.function, &f.file)).peekable();
    let Some(innermost) = python.peek().copied() else {
        if frames.clone().next().is_none() {
            return Owner::without(NoUserFrame::BeforeRecording);
        }
        if !frames.clone().any(|f| is_autograd_engine(&f.function)) {
            return Owner::without(NoUserFrame::CppOnly);
        }
        let node = frames
            .filter_map(|f| AUTOGRAD_NODE.captures(&f.function))
            .find_map(|c| c.get(1).map(|m| Arc::from(m.as_str())));
        return Owner { autograd_node: node, ..Owner::without(NoUserFrame::AutogradBackward) };
    };
    match python.find(|f| !is_library(&f.file)) {
        Some(user) => {
            Owner { user_frame: Some(stack_frame(user)), no_user_frame: None, library_frame: None, autograd_node: None }
        }
        None => Owner { library_frame: Some(stack_frame(innermost)), ..Owner::without(NoUserFrame::LibraryOnly) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(function: &str, file: &str, line: i64) -> TorchFrame {
        TorchFrame { function: function.into(), file: file.into(), line }
    }

    #[test]
    fn libraries_are_told_by_their_paths() {
        for file in [
            "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py",
            "/usr/lib/python3.11/contextlib.py",
            "/usr/lib64/python3.9/threading.py",
            "/usr/local/lib/python3.10/dist-packages/transformers/models/llama/modeling_llama.py",
            "/home/dev/pytorch/torch/optim/adam.py",
            "torch/nn/functional.py",
            "<frozen runpy>",
        ] {
            assert!(is_library(file), "{file}");
        }
        for file in ["/home/user/models/torch_snapshot.py", "train.py", "/srv/torchvision_models/resnet.py", "<string>"]
        {
            assert!(!is_library(file), "{file}");
        }
    }

    #[test]
    fn the_user_frame_is_the_innermost_python_frame_of_the_users_code() {
        let stack = [
            frame("torch::unwind::unwind()", "??", 0),
            frame("at::native::empty_cuda(c10::ArrayRef<long>)", "RegisterCUDA_0.cpp", 0),
            frame("forward", "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", 125),
            frame("_PyEval_EvalFrameDefault", "??", 0),
            frame("forward", "/home/user/model.py", 39),
            frame("step", "/home/user/model.py", 53),
        ];
        assert_eq!(owner(stack.iter()).label(), "forward (model.py:39)");
        assert_eq!(owner(stack[..3].iter()).label(), "in a library: forward (linear.py:125)");
        assert_eq!(owner(stack[..3].iter()).no_user_frame, Some(NoUserFrame::LibraryOnly));
        assert_eq!(owner([].iter()).no_user_frame, Some(NoUserFrame::BeforeRecording));
        assert_eq!(owner(stack[..2].iter()).no_user_frame, Some(NoUserFrame::CppOnly));
    }

    #[test]
    fn the_backward_pass_is_owned_by_its_autograd_node() {
        let stack = [
            frame(
                "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long)",
                "CUDACachingAllocator.cpp",
                0,
            ),
            frame(
                "torch::autograd::generated::NllLossBackward0_apply_functional(std::vector<at::Tensor>)",
                "Functions.cpp",
                0,
            ),
            frame("torch::autograd::Node::operator()(std::vector<at::Tensor>&&)", "", 0),
            frame("torch::autograd::python::PythonEngine::thread_init(int)", "", 0),
        ];
        let owner = owner(stack.iter());
        assert_eq!(owner.no_user_frame, Some(NoUserFrame::AutogradBackward));
        assert_eq!(owner.label(), "autograd backward: NllLossBackward0");
        let accumulate =
            [frame("torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor>&&)", "", 0), stack[3].clone()];
        assert_eq!(super::owner(accumulate.iter()).label(), "autograd backward: AccumulateGrad");
    }
}
