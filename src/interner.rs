//! One shared string per distinct text. A module repeats the same opcode,
//! op name, source file and shape across thousands of instructions, and its
//! heap trace names every instruction again: interned, each is stored once
//! and the model and the reports built from it share it.

use std::sync::Arc;

use rustc_hash::FxHashSet;

#[derive(Default)]
pub struct Interner {
    strings: FxHashSet<Arc<str>>,
}

impl Interner {
    pub fn text(&mut self, text: &str) -> Arc<str> {
        if let Some(shared) = self.strings.get(text) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(text);
        self.strings.insert(shared.clone());
        shared
    }

    /// Bytes from the file, with invalid UTF-8 replaced as everywhere else.
    pub fn bytes(&mut self, bytes: &[u8]) -> Arc<str> {
        self.text(&String::from_utf8_lossy(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_share_one_string() {
        let mut interner = Interner::default();
        let a = interner.text("fusion");
        let b = interner.bytes(b"fusion");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &interner.text("copy")));
        assert_eq!(&*interner.bytes(b"\xffx"), "\u{fffd}x");
    }
}
