//! Telling the user's Python code from the libraries under it, so that
//! memory and failures are blamed on the line the user wrote (`train.py:47`)
//! rather than on the library function that did the work for it
//! (`jax/_src/stages.py:952`). JAX device memory profiles, OOM tracebacks and
//! PyTorch snapshots all ask this of a frame's file.

/// Whether a frame's file is the user's code: not an installed package, not
/// the Python standard library, not a compiled extension or an interpreter
/// frame. Files named as the interpreter names code without one (`<string>`,
/// a notebook's `Cell In[3]`) are the user's.
pub fn is_user_code(file: &str) -> bool {
    !is_library(file)
}

/// Whether a frame's file is a library's: in `site-packages` or
/// `dist-packages`, the standard library (`…/lib/python3.12/…`, `lib64`,
/// Windows' `Lib`), an extension (`.pyx`, `.so`, `.pyd`), or the
/// interpreter's own bootstrap (`<frozen runpy>`).
pub fn is_library(file: &str) -> bool {
    let file = file.replace('\\', "/");
    let lower = file.to_ascii_lowercase();
    if file.starts_with("<frozen ") || [".pyx", ".pxd", ".pxi", ".so", ".pyd"].iter().any(|e| lower.ends_with(e)) {
        return true;
    }
    let parts: Vec<&str> = file.split('/').collect();
    let installed = parts.iter().any(|&p| p == "site-packages" || p == "dist-packages");
    // The directory is `Lib` itself on Windows, `lib/pythonX.Y` (or lib64) elsewhere.
    let standard = parts.iter().rev().skip(1).any(|&p| p == "Lib")
        || parts.windows(2).any(|pair| {
            matches!(pair[0], "lib" | "lib64")
                && pair[1].strip_prefix("python").is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        });
    installed || standard
}

/// Whether `file` is under a directory named `directory` (`torch` for
/// PyTorch's own files, wherever it was installed or checked out).
pub fn in_directory(file: &str, directory: &str) -> bool {
    let file = file.replace('\\', "/");
    let mut parts: Vec<&str> = file.split('/').collect();
    parts.pop();
    parts.contains(&directory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libraries_are_not_the_users_code() {
        for user in [
            "/home/user/models/wl_gpu_mlp_adam.py",
            "train.py",
            "<string>",
            "Cell In[3]",
            "/home/me/library/python/train.py",
            "/srv/torchvision_models/resnet.py",
        ] {
            assert!(is_user_code(user), "{user}");
        }
        for library in [
            "/opt/torch/.venv/lib/python3.12/site-packages/jax/_src/stages.py",
            "/usr/local/lib/python3.8/dist-packages/jax/_src/profiler.py",
            "/usr/lib/python3/dist-packages/numpy/core/numeric.py",
            "/usr/lib/python3.11/threading.py",
            "/usr/lib64/python3.9/threading.py",
            "/usr/lib/python3.13t/runpy.py",
            "lib/python3.10/contextlib.py",
            "<frozen runpy>",
            "cupy/_core/core.pyx",
            r"C:\Python311\Lib\site-packages\torch\nn\modules\module.py",
            r"C:\Python311\Lib\threading.py",
        ] {
            assert!(is_library(library), "{library}");
        }
        assert!(in_directory("/home/dev/pytorch/torch/optim/adam.py", "torch"));
        assert!(in_directory("torch/nn/functional.py", "torch"));
        assert!(!in_directory("/home/user/torch.py", "torch"));
    }
}
