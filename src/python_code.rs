//! Telling the user's Python code from the libraries under it, so that
//! memory is blamed on the line the user wrote (`train.py:47`) rather than on
//! the JAX function that made the buffer for it (`jax/_src/stages.py:952`).

/// Whether a frame's file is the user's code: not an installed package
/// (`site-packages`, `dist-packages`), not the Python standard library
/// (`…/lib/python3.12/…`, `<frozen runpy>`), not a compiled extension.
pub fn is_user_code(file: &str) -> bool {
    let file = file.replace('\\', "/");
    let lower = file.to_ascii_lowercase();
    let installed = ["/site-packages/", "/dist-packages/"].iter().any(|dir| lower.contains(dir));
    let extension = [".pyx", ".pxd", ".pxi", ".so", ".pyd"].iter().any(|suffix| lower.ends_with(suffix));
    !(installed || extension || is_standard_library(&file) || file.starts_with("<frozen "))
}

/// `/usr/lib/python3.11/threading.py`, `~/.pyenv/versions/3.10.4/lib/python3.10/runpy.py`,
/// `C:/Python311/Lib/threading.py`: a `lib/pythonX[.Y]` (or Windows `Lib`) directory.
fn is_standard_library(file: &str) -> bool {
    if file.contains("/Lib/") {
        return true;
    }
    file.match_indices("/lib/python").any(|(at, part)| {
        let version = &file[at + part.len()..];
        let digits = version.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
        digits > 0 && version[digits..].trim_start_matches('t').starts_with('/')
    })
}

#[cfg(test)]
mod tests {
    use super::is_user_code;

    #[test]
    fn libraries_are_not_the_users_code() {
        assert!(is_user_code("/home/user/models/wl_gpu_mlp_adam.py"));
        assert!(is_user_code("train.py"));
        assert!(is_user_code("<string>"));
        assert!(is_user_code("/home/me/library/python/train.py"));
        assert!(!is_user_code("/opt/torch/.venv/lib/python3.12/site-packages/jax/_src/stages.py"));
        assert!(!is_user_code("/usr/local/lib/python3.8/dist-packages/jax/_src/profiler.py"));
        assert!(!is_user_code("/usr/lib/python3.11/threading.py"));
        assert!(!is_user_code("/usr/lib/python3.13t/runpy.py"));
        assert!(!is_user_code("<frozen runpy>"));
        assert!(!is_user_code("cupy/_core/core.pyx"));
        assert!(!is_user_code(r"C:\Python311\Lib\site-packages\torch\nn\modules\module.py"));
        assert!(!is_user_code(r"C:\Python311\Lib\threading.py"));
    }
}
