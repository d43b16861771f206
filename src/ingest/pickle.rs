//! A reader of Python pickles of built-in types (protocols 2 to 5): the
//! opcodes Python's own `pickle` module writes for `None`, booleans, ints,
//! floats, strings, bytes, lists, tuples, dicts and sets, with its memo
//! (`MEMOIZE`, `BINPUT`, `LONG_BINPUT`, `BINGET`, `LONG_BINGET`) and frames.
//! Anything that would run code on load (`GLOBAL`, `REDUCE`, `BUILD`, …)
//! is refused with its name, never executed.
//!
//! Values live in one arena and refer to each other by index, so an object
//! the memo shares (a PyTorch snapshot shares each stack frame among
//! thousands of trace entries) is stored once however often it is used,
//! and nothing is copied. A [`Hooks`] implementation sees each dict as soon as
//! its items are set and may convert it into something smaller: that is how
//! a million trace entries are read without a million dicts.
//!
//! Allocation is bounded by the input: strings and bytes are ranges of it,
//! every length is checked against what is left before it is used, and the
//! values created are counted against [`MAX_VALUES_PER_BYTE`] of the input.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

/// An index into the arena of [`Objects`].
pub type ObjectId = u32;

/// A value on the machine's stack, in the memo or inside a container:
/// scalars inline, everything else by index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// An integer that does not fit in 64 bits; its digits are not kept.
    BigInt,
    Float(f64),
    Object(ObjectId),
}

/// What the arena holds. Containers are boxed so that a slot takes 16
/// bytes: a million trace entries leave a million slots behind once the
/// hooks have converted them.
#[derive(Debug, Clone, PartialEq)]
pub enum Object {
    /// UTF-8, a range of the input.
    Str(Box<Range<usize>>),
    /// A range of the input.
    Bytes(Box<Range<usize>>),
    List(Box<Vec<Value>>),
    Tuple(Box<Vec<Value>>),
    Dict(Box<Vec<(Value, Value)>>),
    Set(Box<Vec<Value>>),
    /// What [`Hooks::dict`] made of a dict: an index the hooks' owner
    /// gave it and knows the meaning of.
    Converted(u32),
}

/// A pickle that cannot be read: where, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickleError {
    /// Byte offset of the opcode at fault.
    pub offset: u64,
    pub what: String,
}

impl fmt::Display for PickleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.what)
    }
}

/// At most this many values (stack entries, container items, memo entries,
/// marks) per byte of input, so that a hostile pickle (a long run of
/// one-byte `NONE`s) cannot make the reader hold many times its size. Real
/// snapshots create about one value per four bytes.
pub const MAX_VALUES_PER_BYTE: f64 = 0.5;
/// Below this many values no input is refused.
const MIN_VALUE_BUDGET: u64 = 1 << 22;

/// Called as the pickle is read.
pub trait Hooks {
    /// The items of dict `id` were just set (by `SETITEMS`, `SETITEM` or
    /// `DICT`); returning `Some(index)` replaces the dict in the arena with
    /// [`Object::Converted`]`(index)`. An error stops the read.
    fn dict(&mut self, objects: &mut Objects, id: ObjectId) -> Result<Option<u32>, String>;
}

/// Hooks that keep every dict as it is.
pub struct KeepAll;

impl Hooks for KeepAll {
    fn dict(&mut self, _: &mut Objects, _: ObjectId) -> Result<Option<u32>, String> {
        Ok(None)
    }
}

/// The arena, with the input its strings point into.
pub struct Objects<'a> {
    input: &'a [u8],
    arena: Vec<Object>,
}

impl<'a> Objects<'a> {
    pub fn get(&self, id: ObjectId) -> Option<&Object> {
        self.arena.get(id as usize)
    }

    /// The object a value refers to, if it refers to one.
    pub fn of(&self, value: Value) -> Option<&Object> {
        match value {
            Value::Object(id) => self.get(id),
            _ => None,
        }
    }

    /// The text of a string value.
    pub fn str(&self, value: Value) -> Option<&'a str> {
        // Checked to be UTF-8 when it was read.
        std::str::from_utf8(self.str_bytes(value)?).ok()
    }

    fn str_bytes(&self, value: Value) -> Option<&'a [u8]> {
        match self.of(value)? {
            Object::Str(range) => self.input.get(range.start..range.end),
            _ => None,
        }
    }

    /// The items of a list or tuple value.
    pub fn items(&self, value: Value) -> Option<&[Value]> {
        match self.of(value)? {
            Object::List(items) | Object::Tuple(items) => Some(items),
            _ => None,
        }
    }

    /// The pairs of a dict value.
    pub fn pairs(&self, value: Value) -> Option<&[(Value, Value)]> {
        match self.of(value)? {
            Object::Dict(pairs) => Some(pairs),
            _ => None,
        }
    }

    /// The value under string key `key` in a dict value (the last, if set twice, as Python keeps).
    pub fn lookup(&self, dict: Value, key: &str) -> Option<Value> {
        self.pairs(dict)?.iter().rev().find(|(k, _)| self.str_bytes(*k) == Some(key.as_bytes())).map(|(_, v)| *v)
    }

    /// Replaces an object's content, e.g. to free a list the hooks have converted.
    pub fn replace(&mut self, id: ObjectId, object: Object) {
        if let Some(slot) = self.arena.get_mut(id as usize) {
            *slot = object;
        }
    }
}

/// A pickle read whole: its value and the arena it refers to.
pub struct Pickle<'a> {
    pub root: Value,
    pub objects: Objects<'a>,
}

/// Tells a pickle from other bytes: the `PROTO` opcode with a protocol of 2 to 5.
pub fn is_pickle(bytes: &[u8]) -> bool {
    matches!(bytes, [0x80, 2..=5, ..])
}

/// Reads a pickle, calling `hooks` as dicts are filled.
pub fn read<'a>(input: &'a [u8], hooks: &mut dyn Hooks) -> Result<Pickle<'a>, PickleError> {
    let budget = ((input.len() as f64 * MAX_VALUES_PER_BYTE) as u64).max(MIN_VALUE_BUDGET);
    let mut machine = Machine {
        at: 0,
        objects: Objects { input, arena: Vec::new() },
        stack: Vec::new(),
        marks: Vec::new(),
        memo: Vec::new(),
        sparse_memo: HashMap::new(),
        created: 0,
        budget,
    };
    let root = machine.run(hooks)?;
    Ok(Pickle { root, objects: machine.objects })
}

struct Machine<'a> {
    /// Offset of the next byte to read.
    at: usize,
    objects: Objects<'a>,
    stack: Vec<Value>,
    /// Stack lengths at each `MARK`.
    marks: Vec<usize>,
    /// The memo by index, for the indices Python writes: 0, 1, 2, … in order.
    memo: Vec<Value>,
    /// Indices put out of order, which Python never writes but a pickle may.
    sparse_memo: HashMap<u32, Value>,
    /// Values created so far, against `budget`.
    created: u64,
    budget: u64,
}

mod op {
    pub const MARK: u8 = b'(';
    pub const STOP: u8 = b'.';
    pub const POP: u8 = b'0';
    pub const POP_MARK: u8 = b'1';
    pub const DUP: u8 = b'2';
    pub const BININT: u8 = b'J';
    pub const BININT1: u8 = b'K';
    pub const BININT2: u8 = b'M';
    pub const NONE: u8 = b'N';
    pub const BINFLOAT: u8 = b'G';
    pub const BINUNICODE: u8 = b'X';
    pub const BINBYTES: u8 = b'B';
    pub const SHORT_BINBYTES: u8 = b'C';
    pub const EMPTY_LIST: u8 = b']';
    pub const APPEND: u8 = b'a';
    pub const APPENDS: u8 = b'e';
    pub const LIST: u8 = b'l';
    pub const EMPTY_TUPLE: u8 = b')';
    pub const TUPLE: u8 = b't';
    pub const EMPTY_DICT: u8 = b'}';
    pub const DICT: u8 = b'd';
    pub const SETITEM: u8 = b's';
    pub const SETITEMS: u8 = b'u';
    pub const GET: u8 = b'g';
    pub const BINGET: u8 = b'h';
    pub const LONG_BINGET: u8 = b'j';
    pub const PUT: u8 = b'p';
    pub const BINPUT: u8 = b'q';
    pub const LONG_BINPUT: u8 = b'r';
    pub const PROTO: u8 = 0x80;
    pub const TUPLE1: u8 = 0x85;
    pub const TUPLE2: u8 = 0x86;
    pub const TUPLE3: u8 = 0x87;
    pub const NEWTRUE: u8 = 0x88;
    pub const NEWFALSE: u8 = 0x89;
    pub const LONG1: u8 = 0x8a;
    pub const LONG4: u8 = 0x8b;
    pub const SHORT_BINUNICODE: u8 = 0x8c;
    pub const BINUNICODE8: u8 = 0x8d;
    pub const BINBYTES8: u8 = 0x8e;
    pub const EMPTY_SET: u8 = 0x8f;
    pub const ADDITEMS: u8 = 0x90;
    pub const FROZENSET: u8 = 0x91;
    pub const MEMOIZE: u8 = 0x94;
    pub const FRAME: u8 = 0x95;
    pub const BYTEARRAY8: u8 = 0x96;
}

/// Opcodes that build or call Python objects, which a pickle of built-in
/// types never holds; named in the error.
fn refused(opcode: u8) -> Option<&'static str> {
    Some(match opcode {
        b'c' => "GLOBAL (a reference to a Python class or function)",
        0x93 => "STACK_GLOBAL (a reference to a Python class or function)",
        b'R' => "REDUCE (a call that builds a Python object)",
        b'b' => "BUILD (a Python object's state)",
        b'i' => "INST (a Python object)",
        b'o' => "OBJ (a Python object)",
        0x81 => "NEWOBJ (a Python object)",
        0x92 => "NEWOBJ_EX (a Python object)",
        0x82..=0x84 => "EXT (a registered Python extension)",
        b'P' | b'Q' => "PERSID (a persistent id)",
        0x97 | 0x98 => "NEXT_BUFFER (an out-of-band buffer)",
        b'I' | b'L' | b'F' | b'S' | b'V' | b'T' | b'U' => "a protocol 0 or 1 opcode (xmem reads protocols 2 to 5)",
        _ => return None,
    })
}

impl<'a> Machine<'a> {
    fn error(&self, offset: usize, what: impl Into<String>) -> PickleError {
        PickleError { offset: offset as u64, what: what.into() }
    }

    fn take(&mut self, start: usize, n: usize) -> Result<&'a [u8], PickleError> {
        let input = self.objects.input;
        let end = self.at.checked_add(n).filter(|&end| end <= input.len());
        match end {
            Some(end) => {
                let bytes = &input[self.at..end];
                self.at = end;
                Ok(bytes)
            }
            None => Err(self.error(
                start,
                format!("cut short: the opcode needs {n} bytes, {} are left", input.len() - self.at.min(input.len())),
            )),
        }
    }

    fn array<const N: usize>(&mut self, start: usize) -> Result<[u8; N], PickleError> {
        let bytes = self.take(start, N)?;
        let mut array = [0; N];
        array.copy_from_slice(bytes);
        Ok(array)
    }

    /// A length from the file, as an offset it must fit in the input.
    fn length(&mut self, start: usize, length: u64) -> Result<usize, PickleError> {
        let left = self.objects.input.len() - self.at;
        usize::try_from(length).ok().filter(|&n| n <= left).ok_or_else(|| {
            self.error(start, format!("a length of {length} bytes, but only {left} bytes are left in the file"))
        })
    }

    /// A decimal argument ended by a newline (`GET`, `PUT`).
    fn decimal_line(&mut self, start: usize) -> Result<u32, PickleError> {
        let rest = &self.objects.input[self.at..];
        let end = rest
            .iter()
            .take(12)
            .position(|&b| b == b'\n')
            .ok_or_else(|| self.error(start, "a memo index without its newline"))?;
        let text = std::str::from_utf8(&rest[..end]).ok().and_then(|t| t.trim().parse::<u32>().ok());
        self.at += end + 1;
        text.ok_or_else(|| self.error(start, "a memo index that is not a number"))
    }

    fn count(&mut self, start: usize, values: u64) -> Result<(), PickleError> {
        self.created = self.created.saturating_add(values);
        if self.created > self.budget {
            return Err(self.error(
                start,
                format!(
                    "the pickle builds more than {} values from {} bytes, more than any memory snapshot of that size holds",
                    self.budget,
                    self.objects.input.len()
                ),
            ));
        }
        Ok(())
    }

    fn push(&mut self, start: usize, value: Value) -> Result<(), PickleError> {
        self.count(start, 1)?;
        self.stack.push(value);
        Ok(())
    }

    fn new_object(&mut self, start: usize, object: Object) -> Result<Value, PickleError> {
        let id = ObjectId::try_from(self.objects.arena.len())
            .map_err(|_| self.error(start, "more than 4 billion objects in one pickle"))?;
        self.count(start, 1)?;
        self.objects.arena.push(object);
        Ok(Value::Object(id))
    }

    fn push_object(&mut self, start: usize, object: Object) -> Result<(), PickleError> {
        let value = self.new_object(start, object)?;
        self.stack.push(value);
        Ok(())
    }

    fn pop(&mut self, start: usize) -> Result<Value, PickleError> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.error(start, "an opcode takes a value from an empty stack"));
        }
        self.stack.pop().ok_or_else(|| self.error(start, "an opcode takes a value from an empty stack"))
    }

    fn top(&self, start: usize) -> Result<Value, PickleError> {
        let floor = self.marks.last().copied().unwrap_or(0);
        match self.stack.last() {
            Some(value) if self.stack.len() > floor => Ok(*value),
            _ => Err(self.error(start, "an opcode reads the top of an empty stack")),
        }
    }

    /// The values since the last `MARK`, which is removed.
    fn pop_mark(&mut self, start: usize) -> Result<Vec<Value>, PickleError> {
        let mark = self.marks.pop().ok_or_else(|| self.error(start, "an opcode needs a MARK and there is none"))?;
        Ok(self.stack.split_off(mark))
    }

    /// A string (`text`, checked to be UTF-8) or bytes of `length` bytes, as a range of the input.
    fn string(&mut self, start: usize, length: u64, text: bool) -> Result<(), PickleError> {
        let n = self.length(start, length)?;
        let range = self.at..self.at + n;
        self.at += n;
        if !text {
            return self.push_object(start, Object::Bytes(Box::new(range)));
        }
        if std::str::from_utf8(&self.objects.input[range.clone()]).is_err() {
            return Err(self.error(start, "a string that is not UTF-8"));
        }
        self.push_object(start, Object::Str(Box::new(range)))
    }

    fn memo_put(&mut self, start: usize, index: u32) -> Result<(), PickleError> {
        let value = self.top(start)?;
        self.count(start, 1)?;
        if index as usize == self.memo.len() {
            self.memo.push(value);
        } else if let Some(slot) = self.memo.get_mut(index as usize) {
            *slot = value;
        } else {
            self.sparse_memo.insert(index, value);
        }
        Ok(())
    }

    fn memo_get(&mut self, start: usize, index: u32) -> Result<(), PickleError> {
        let value = self
            .memo
            .get(index as usize)
            .or_else(|| self.sparse_memo.get(&index))
            .copied()
            .ok_or_else(|| self.error(start, format!("memo index {index} is read before it is written")))?;
        self.push(start, value)
    }

    fn container(&mut self, start: usize, value: Value) -> Result<(ObjectId, &mut Object), PickleError> {
        let Value::Object(id) = value else {
            return Err(self.error(start, "items are added to a value that is not a container"));
        };
        match self.objects.arena.get_mut(id as usize) {
            Some(object) => Ok((id, object)),
            None => Err(PickleError { offset: start as u64, what: "a reference to no object".to_string() }),
        }
    }

    fn extend_list(&mut self, start: usize, list: Value, items: Vec<Value>) -> Result<(), PickleError> {
        match self.container(start, list)? {
            (_, Object::List(existing)) | (_, Object::Set(existing)) => {
                existing.extend(items);
                Ok(())
            }
            _ => Err(self.error(start, "APPEND or ADDITEMS on a value that is not a list or set")),
        }
    }

    fn set_items(
        &mut self,
        start: usize,
        dict: Value,
        items: Vec<Value>,
        hooks: &mut dyn Hooks,
    ) -> Result<(), PickleError> {
        if !items.len().is_multiple_of(2) {
            return Err(self.error(start, "SETITEMS with a key and no value"));
        }
        let (id, object) = self.container(start, dict)?;
        let Object::Dict(pairs) = object else {
            return Err(self.error(start, "SETITEM on a value that is not a dict"));
        };
        pairs.extend(items.chunks_exact(2).map(|pair| (pair[0], pair[1])));
        self.after_dict(start, id, hooks)
    }

    fn after_dict(&mut self, start: usize, id: ObjectId, hooks: &mut dyn Hooks) -> Result<(), PickleError> {
        match hooks.dict(&mut self.objects, id) {
            Ok(Some(index)) => {
                self.objects.replace(id, Object::Converted(index));
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(what) => Err(self.error(start, what)),
        }
    }

    fn run(&mut self, hooks: &mut dyn Hooks) -> Result<Value, PickleError> {
        loop {
            let start = self.at;
            let [opcode] = self.array::<1>(start).map_err(|_| self.error(start, "cut short: no STOP opcode"))?;
            match opcode {
                op::PROTO => {
                    let [version] = self.array(start)?;
                    if !(2..=5).contains(&version) {
                        return Err(
                            self.error(start, format!("pickle protocol {version}; xmem reads protocols 2 to 5"))
                        );
                    }
                }
                op::FRAME => {
                    self.array::<8>(start)?;
                }
                op::STOP => {
                    let value = self.pop(start)?;
                    return Ok(value);
                }
                op::MARK => {
                    self.count(start, 1)?;
                    self.marks.push(self.stack.len());
                }
                op::POP => {
                    self.pop(start)?;
                }
                op::POP_MARK => {
                    self.pop_mark(start)?;
                }
                op::DUP => {
                    let value = self.top(start)?;
                    self.push(start, value)?;
                }
                op::NONE => self.push(start, Value::None)?,
                op::NEWTRUE => self.push(start, Value::Bool(true))?,
                op::NEWFALSE => self.push(start, Value::Bool(false))?,
                op::BININT => {
                    let value = i32::from_le_bytes(self.array(start)?);
                    self.push(start, Value::Int(value.into()))?;
                }
                op::BININT1 => {
                    let [value] = self.array(start)?;
                    self.push(start, Value::Int(value.into()))?;
                }
                op::BININT2 => {
                    let value = u16::from_le_bytes(self.array(start)?);
                    self.push(start, Value::Int(value.into()))?;
                }
                op::LONG1 => {
                    let [n] = self.array(start)?;
                    let digits = self.take(start, n.into())?;
                    self.push(start, long(digits))?;
                }
                op::LONG4 => {
                    let n = i32::from_le_bytes(self.array(start)?);
                    let n = u64::try_from(n).map_err(|_| self.error(start, "LONG4 with a negative length"))?;
                    let n = self.length(start, n)?;
                    let digits = self.take(start, n)?;
                    self.push(start, long(digits))?;
                }
                op::BINFLOAT => {
                    let value = f64::from_be_bytes(self.array(start)?);
                    self.push(start, Value::Float(value))?;
                }
                op::SHORT_BINUNICODE => {
                    let [n] = self.array(start)?;
                    self.string(start, n.into(), true)?;
                }
                op::BINUNICODE => {
                    let n = u32::from_le_bytes(self.array(start)?);
                    self.string(start, n.into(), true)?;
                }
                op::BINUNICODE8 => {
                    let n = u64::from_le_bytes(self.array(start)?);
                    self.string(start, n, true)?;
                }
                op::SHORT_BINBYTES => {
                    let [n] = self.array(start)?;
                    self.string(start, n.into(), false)?;
                }
                op::BINBYTES => {
                    let n = u32::from_le_bytes(self.array(start)?);
                    self.string(start, n.into(), false)?;
                }
                op::BINBYTES8 | op::BYTEARRAY8 => {
                    let n = u64::from_le_bytes(self.array(start)?);
                    self.string(start, n, false)?;
                }
                op::EMPTY_LIST => self.push_object(start, Object::List(Box::default()))?,
                op::EMPTY_DICT => self.push_object(start, Object::Dict(Box::default()))?,
                op::EMPTY_SET => self.push_object(start, Object::Set(Box::default()))?,
                op::EMPTY_TUPLE => self.push_object(start, Object::Tuple(Box::default()))?,
                op::TUPLE1 | op::TUPLE2 | op::TUPLE3 => {
                    let n = usize::from(opcode - op::TUPLE1 + 1);
                    let mut items = vec![Value::None; n];
                    for slot in items.iter_mut().rev() {
                        *slot = self.pop(start)?;
                    }
                    self.push_object(start, Object::Tuple(Box::new(items)))?;
                }
                op::TUPLE => {
                    let items = self.pop_mark(start)?;
                    self.push_object(start, Object::Tuple(Box::new(items)))?;
                }
                op::LIST => {
                    let items = self.pop_mark(start)?;
                    self.push_object(start, Object::List(Box::new(items)))?;
                }
                op::FROZENSET => {
                    let items = self.pop_mark(start)?;
                    self.push_object(start, Object::Set(Box::new(items)))?;
                }
                op::DICT => {
                    let items = self.pop_mark(start)?;
                    let dict = self.new_object(start, Object::Dict(Box::default()))?;
                    self.stack.push(dict);
                    self.set_items(start, dict, items, hooks)?;
                }
                op::APPEND => {
                    let item = self.pop(start)?;
                    let list = self.top(start)?;
                    self.extend_list(start, list, vec![item])?;
                }
                op::APPENDS | op::ADDITEMS => {
                    let items = self.pop_mark(start)?;
                    let list = self.top(start)?;
                    self.extend_list(start, list, items)?;
                }
                op::SETITEM => {
                    let value = self.pop(start)?;
                    let key = self.pop(start)?;
                    let dict = self.top(start)?;
                    self.set_items(start, dict, vec![key, value], hooks)?;
                }
                op::SETITEMS => {
                    let items = self.pop_mark(start)?;
                    let dict = self.top(start)?;
                    self.set_items(start, dict, items, hooks)?;
                }
                op::MEMOIZE => {
                    let index = u32::try_from(self.memo.len()).map_err(|_| self.error(start, "memo full"))?;
                    self.memo_put(start, index)?;
                }
                op::BINPUT => {
                    let [index] = self.array(start)?;
                    self.memo_put(start, index.into())?;
                }
                op::LONG_BINPUT => {
                    let index = u32::from_le_bytes(self.array(start)?);
                    self.memo_put(start, index)?;
                }
                op::PUT => {
                    let index = self.decimal_line(start)?;
                    self.memo_put(start, index)?;
                }
                op::BINGET => {
                    let [index] = self.array(start)?;
                    self.memo_get(start, index.into())?;
                }
                op::LONG_BINGET => {
                    let index = u32::from_le_bytes(self.array(start)?);
                    self.memo_get(start, index)?;
                }
                op::GET => {
                    let index = self.decimal_line(start)?;
                    self.memo_get(start, index)?;
                }
                other => {
                    let what = match refused(other) {
                        Some(name) => format!("opcode {name}: xmem reads only pickles of built-in types"),
                        None => format!("unknown pickle opcode 0x{other:02x}"),
                    };
                    return Err(self.error(start, what));
                }
            }
        }
    }
}

/// A little-endian two's-complement integer (`LONG1`, `LONG4`).
fn long(digits: &[u8]) -> Value {
    if digits.len() > 8 {
        // Python writes the fewest bytes that hold the value, so more than eight do not fit in 64 bits.
        return Value::BigInt;
    }
    let negative = digits.last().is_some_and(|&b| b & 0x80 != 0);
    let mut bytes = if negative { [0xff; 8] } else { [0; 8] };
    bytes[..digits.len()].copy_from_slice(digits);
    Value::Int(i64::from_le_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arena_slot_takes_16_bytes() {
        assert_eq!(std::mem::size_of::<Object>(), 16);
        assert_eq!(std::mem::size_of::<Value>(), 16);
    }

    fn read_all(bytes: &[u8]) -> Result<(Value, Vec<Object>), PickleError> {
        let pickle = read(bytes, &mut KeepAll)?;
        Ok((pickle.root, pickle.objects.arena))
    }

    // `pickle.dumps({'a': [1, -2, 300, 2**40, None, True]}, protocol=2)`
    const DICT_P2: &[u8] = b"\x80\x02}q\x00X\x01\x00\x00\x00aq\x01]q\x02(K\x01J\xfe\xff\xff\xffM,\x01\x8a\x06\x00\x00\x00\x00\x00\x01N\x88es.";

    #[test]
    fn reads_what_python_writes_at_protocol_2() {
        let pickle = read(DICT_P2, &mut KeepAll).unwrap();
        let list = pickle.objects.lookup(pickle.root, "a").unwrap();
        assert_eq!(
            pickle.objects.items(list).unwrap(),
            &[Value::Int(1), Value::Int(-2), Value::Int(300), Value::Int(1 << 40), Value::None, Value::Bool(true)]
        );
    }

    #[test]
    fn long_integers_are_twos_complement() {
        assert_eq!(long(&[]), Value::Int(0));
        assert_eq!(long(&[0xff]), Value::Int(-1));
        assert_eq!(long(&[0x00, 0x80]), Value::Int(-32768));
        assert_eq!(long(&[0xff, 0x00]), Value::Int(255));
        assert_eq!(long(&[0; 9]), Value::BigInt);
    }

    #[test]
    fn code_is_refused_by_name() {
        // `pickle.dumps(print, protocol=4)` starts with STACK_GLOBAL after two strings.
        let bytes = b"\x80\x04\x95\x16\x00\x00\x00\x00\x00\x00\x00\x8c\x08builtins\x94\x8c\x05print\x94\x93\x94.";
        let error = read_all(bytes).unwrap_err();
        assert!(error.what.contains("STACK_GLOBAL"), "{error}");
        assert_eq!(error.offset, 30);
        // A protocol 1 opcode (INT, as text) in a protocol 2 stream.
        let error = read_all(b"\x80\x02I1\n.").unwrap_err();
        assert!(error.what.contains("protocol 0 or 1"), "{error}");
    }

    #[test]
    fn lengths_past_the_end_are_errors_not_allocations() {
        let error = read_all(b"\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7f").unwrap_err();
        assert!(error.what.contains("only 0 bytes are left"), "{error}");
        let error = read_all(b"\x80\x04X\x10\x00\x00\x00abc").unwrap_err();
        assert!(error.what.contains("a length of 16 bytes"), "{error}");
    }

    #[test]
    fn malformed_streams_say_what_is_wrong() {
        let cases: [(&[u8], &str); 7] = [
            (b"", "no STOP"),
            (b"\x80\x01N.", "protocol 1"),
            (b"\x80\x02.", "empty stack"),
            (b"\x80\x02e.", "MARK"),
            (b"\x80\x02h\x05.", "memo index 5"),
            (b"\x80\x02K\x01K\x02a.", "not a container"),
            (b"\x80\x02\x8c\x02\xff\xfe.", "not UTF-8"),
        ];
        for (bytes, expected) in cases {
            let error = read_all(bytes).unwrap_err();
            assert!(error.what.contains(expected), "{bytes:?}: {error}");
        }
    }

    #[test]
    fn a_run_of_tiny_values_is_stopped_by_the_budget() {
        let mut bytes = vec![0x80, 0x04];
        bytes.extend(std::iter::repeat_n(b'N', (MIN_VALUE_BUDGET as usize) + 10));
        bytes.push(b'.');
        let error = read_all(&bytes).unwrap_err();
        assert!(error.what.contains("more than"), "{error}");
    }

    #[test]
    fn shared_objects_are_stored_once() {
        // `x = {'n': 1}; pickle.dumps([x, x, x], protocol=4)`
        let bytes = b"\x80\x04\x95\x12\x00\x00\x00\x00\x00\x00\x00]\x94(}\x94\x8c\x01n\x94K\x01sh\x01h\x01e.";
        let (root, arena) = read_all(bytes).unwrap();
        let Value::Object(list) = root else { panic!("{root:?}") };
        let Object::List(items) = &arena[list as usize] else { panic!() };
        assert_eq!(items.len(), 3);
        assert!(items.iter().all(|item| *item == items[0]));
        assert_eq!(arena.iter().filter(|o| matches!(o, Object::Dict(_))).count(), 1);
    }
}
