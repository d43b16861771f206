//! A structure-aware mutator for protobuf inputs (profiles, HLO protos,
//! pprof). libFuzzer's byte flips rarely keep a nested message decodable,
//! so most of its inputs die at the first length prefix; these mutations
//! work on fields and re-encode every enclosing length, reaching the shapes
//! that hurt a decoder: extreme varints, a length past its message's end,
//! a repeated field multiplied (with distinct ids or colours in each copy),
//! a field grafted elsewhere, and a varint copied from another field (ids
//! that point at each other: parent chains, cycles, SHARE_WITH chains).
//! A quarter of the time, and on inputs that are not a message, libFuzzer
//! mutates the bytes itself.

/// One decoded field; a length-delimited payload is kept as a message when
/// it decodes as one.
#[derive(Clone)]
enum Value {
    Varint(u64),
    Fixed64([u8; 8]),
    Fixed32([u8; 4]),
    Bytes(Vec<u8>),
    Message(Vec<Field>),
    /// A payload whose length prefix claims `extra` bytes more than it has.
    Overlong(Vec<u8>, u64),
}

#[derive(Clone)]
struct Field {
    number: u64,
    value: Value,
}

const MAX_DEPTH: usize = 12;
const MAX_NODES: usize = 100_000;

fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

/// The fields of `bytes`, or `None` when it is not a whole message.
fn parse(bytes: &[u8], depth: usize) -> Option<Vec<Field>> {
    let mut fields = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let key = varint(bytes, &mut at)?;
        let number = key >> 3;
        if number == 0 {
            return None;
        }
        let value = match key & 7 {
            0 => Value::Varint(varint(bytes, &mut at)?),
            1 => {
                let raw = bytes.get(at..at + 8)?;
                at += 8;
                Value::Fixed64(raw.try_into().ok()?)
            }
            5 => {
                let raw = bytes.get(at..at + 4)?;
                at += 4;
                Value::Fixed32(raw.try_into().ok()?)
            }
            2 => {
                let len = usize::try_from(varint(bytes, &mut at)?).ok()?;
                let payload = bytes.get(at..at.checked_add(len)?)?;
                at += len;
                match (depth < MAX_DEPTH && !payload.is_empty()).then(|| parse(payload, depth + 1)).flatten() {
                    Some(message) => Value::Message(message),
                    None => Value::Bytes(payload.to_vec()),
                }
            }
            _ => return None,
        };
        fields.push(Field { number, value });
    }
    Some(fields)
}

fn put_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn encode(fields: &[Field], out: &mut Vec<u8>) {
    for field in fields {
        let wire = match field.value {
            Value::Varint(_) => 0,
            Value::Fixed64(_) => 1,
            Value::Fixed32(_) => 5,
            _ => 2,
        };
        put_varint(field.number << 3 | wire, out);
        match &field.value {
            Value::Varint(v) => put_varint(*v, out),
            Value::Fixed64(raw) => out.extend_from_slice(raw),
            Value::Fixed32(raw) => out.extend_from_slice(raw),
            Value::Bytes(payload) => {
                put_varint(payload.len() as u64, out);
                out.extend_from_slice(payload);
            }
            Value::Message(message) => {
                let mut payload = Vec::new();
                encode(message, &mut payload);
                put_varint(payload.len() as u64, out);
                out.extend_from_slice(&payload);
            }
            Value::Overlong(payload, extra) => {
                put_varint((payload.len() as u64).saturating_add(*extra), out);
                out.extend_from_slice(payload);
            }
        }
    }
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }

    fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[self.below(choices.len())]
    }
}

/// Where every field is: the indices from the top message down.
fn paths(fields: &[Field], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    for (i, field) in fields.iter().enumerate() {
        if out.len() >= MAX_NODES {
            return;
        }
        prefix.push(i);
        out.push(prefix.clone());
        if let Value::Message(children) = &field.value {
            paths(children, prefix, out);
        }
        prefix.pop();
    }
}

fn field_at<'a>(fields: &'a mut Vec<Field>, path: &[usize]) -> &'a mut Field {
    let (last, parents) = path.split_last().expect("paths are never empty");
    let mut list = fields;
    for &i in parents {
        match &mut list[i].value {
            Value::Message(children) => list = children,
            _ => unreachable!("a path goes through messages"),
        }
    }
    &mut list[*last]
}

/// The message holding the field at `path`.
fn siblings<'a>(fields: &'a mut Vec<Field>, path: &[usize]) -> &'a mut Vec<Field> {
    let mut list = fields;
    for &i in &path[..path.len() - 1] {
        match &mut list[i].value {
            Value::Message(children) => list = children,
            _ => unreachable!("a path goes through messages"),
        }
    }
    list
}

const EXTREME: &[u64] = &[0, 1, 0x7f, 0x80, i32::MAX as u64, u32::MAX as u64, i64::MAX as u64, 1 << 63, u64::MAX];

/// One field-level mutation of `fields`; false when none applied.
fn mutate_fields(fields: &mut Vec<Field>, rng: &mut Rng) -> bool {
    let mut all = Vec::new();
    paths(fields, &mut Vec::new(), &mut all);
    if all.is_empty() {
        return false;
    }
    let varints: Vec<&Vec<usize>> =
        all.iter().filter(|p| matches!(field_at(fields, p).value, Value::Varint(_))).collect();
    match rng.below(5) {
        // An extreme varint.
        0 if !varints.is_empty() => {
            let path = varints[rng.below(varints.len())].clone();
            field_at(fields, &path).value = Value::Varint(rng.pick(EXTREME));
        }
        // A varint copied from another: ids that point at each other.
        1 if varints.len() >= 2 => {
            let from = varints[rng.below(varints.len())].clone();
            let to = varints[rng.below(varints.len())].clone();
            let value = field_at(fields, &from).value.clone();
            field_at(fields, &to).value = value;
        }
        // A length past the end of its message.
        2 => {
            let path = all[rng.below(all.len())].clone();
            let field = field_at(fields, &path);
            let mut payload = Vec::new();
            match &field.value {
                Value::Bytes(bytes) => payload.clone_from(bytes),
                Value::Message(message) => encode(message, &mut payload),
                _ => return false,
            }
            field.value = Value::Overlong(payload, rng.pick(&[1, 1000, 1 << 31, 1 << 62]));
        }
        // A field repeated many times, each copy with its own value of one
        // of its varints (distinct ids, colours, frames).
        3 => {
            let path = all[rng.below(all.len())].clone();
            let copies = rng.pick(&[2, 16, 256, 4096]);
            let original = field_at(fields, &path).clone();
            let numbered = match &original.value {
                Value::Message(children) => children
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| matches!(c.value, Value::Varint(_)))
                    .map(|(i, _)| i)
                    .collect::<Vec<_>>(),
                _ => Vec::new(),
            };
            let vary = (!numbered.is_empty()).then(|| numbered[rng.below(numbered.len())]);
            let list = siblings(fields, &path);
            let at = path[path.len() - 1] + 1;
            let copies: Vec<Field> = (1..=copies as u64)
                .map(|k| {
                    let mut copy = original.clone();
                    if let (Some(i), Value::Message(children)) = (vary, &mut copy.value) {
                        if let Value::Varint(v) = &mut children[i].value {
                            *v = v.wrapping_add(k);
                        }
                    }
                    copy
                })
                .collect();
            list.splice(at..at, copies);
        }
        // A field grafted into another message.
        _ => {
            let from = all[rng.below(all.len())].clone();
            let messages: Vec<&Vec<usize>> =
                all.iter().filter(|p| matches!(field_at(fields, p).value, Value::Message(_))).collect();
            let graft = field_at(fields, &from).clone();
            match messages.is_empty() {
                true => fields.push(graft),
                false => {
                    let into = messages[rng.below(messages.len())].clone();
                    if let Value::Message(children) = &mut field_at(fields, &into).value {
                        let at = rng.below(children.len() + 1);
                        children.insert(at, graft);
                    }
                }
            }
        }
    }
    true
}

/// The mutator the targets install with `fuzz_mutator!`.
pub fn mutate(data: &mut [u8], size: usize, max_size: usize, seed: u32) -> usize {
    let mut rng = Rng(u64::from(seed) | 1 << 40);
    if rng.below(4) != 0 {
        if let Some(mut fields) = parse(&data[..size], 0) {
            if mutate_fields(&mut fields, &mut rng) {
                let mut out = Vec::new();
                encode(&fields, &mut out);
                if out.len() <= max_size {
                    data[..out.len()].copy_from_slice(&out);
                    return out.len();
                }
            }
        }
    }
    libfuzzer_sys::fuzzer_mutate(data, size, max_size)
}
