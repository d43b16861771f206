//! Which frame of a stack is the user's: the innermost Python frame outside
//! Python's standard library, installed packages (`site-packages`,
//! `dist-packages`) and PyTorch itself (`torch/`). The stacks of a snapshot
//! interleave C++ frames (the allocator, ATen, the interpreter) with the
//! Python ones; C++ frames are never the user's.

use std::sync::LazyLock;

use regex::Regex;

use crate::model::torch_snapshot::TorchFrame;

/// Files of Python's standard library and of installed packages.
static LIBRARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(^|/)(site-packages|dist-packages|lib(64)?/python[0-9][^/]*|torch)/|^<frozen ")
        .expect("a valid pattern")
});

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
    LIBRARY.is_match(file)
}

/// Why an allocation has no user frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoUserFrame {
    /// The stack is empty: the block was allocated before recording began.
    BeforeRecording,
    /// Every Python frame is in a library, or there is none (`stacks="cpp"`).
    LibraryOnly,
}

impl NoUserFrame {
    pub fn describe(self) -> &'static str {
        match self {
            NoUserFrame::BeforeRecording => "allocated before recording began (no stack)",
            NoUserFrame::LibraryOnly => "no Python frame outside the standard library, site-packages and torch",
        }
    }
}

/// The user's frame of a stack (innermost first), or why there is none.
pub fn user_frame<'a>(mut frames: impl Iterator<Item = &'a TorchFrame>) -> Result<&'a TorchFrame, NoUserFrame> {
    let mut empty = true;
    let found = frames.find(|frame| {
        empty = false;
        is_python(&frame.function, &frame.file) && !is_library(&frame.file)
    });
    match found {
        Some(frame) => Ok(frame),
        None if empty => Err(NoUserFrame::BeforeRecording),
        None => Err(NoUserFrame::LibraryOnly),
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
        for file in
            ["/home/user/models/torch_snapshot.py", "train.py", "/work/torchvision_models/resnet.py", "<string>"]
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
        assert_eq!(user_frame(stack.iter()), Ok(&stack[4]));
        assert_eq!(user_frame(stack[..3].iter()), Err(NoUserFrame::LibraryOnly));
        assert_eq!(user_frame([].iter()), Err(NoUserFrame::BeforeRecording));
    }
}
