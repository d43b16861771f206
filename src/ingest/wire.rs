//! A minimal protobuf wire-format walker. It lets ingest skip whole planes,
//! lines and events by their length prefix without decoding them, and it knows
//! the byte offset of every field so errors can point at it.

/// A decoding failure at a byte offset within the walked buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    pub offset: u64,
    pub what: String,
    /// Where the field that failed starts (its key), which `offset` may be past.
    pub field_start: u64,
}

#[derive(Debug)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    /// A length-delimited payload: a string, bytes, a packed array or a sub-message.
    Bytes(&'a [u8]),
}

/// One field of a message: its number, its value and where it starts.
#[derive(Debug)]
pub struct Field<'a> {
    pub number: u32,
    pub value: Value<'a>,
    pub offset: u64,
}

impl<'a> Field<'a> {
    pub fn as_u64(&self) -> Option<u64> {
        match self.value {
            Value::Varint(v) | Value::Fixed64(v) => Some(v),
            Value::Fixed32(v) => Some(u64::from(v)),
            _ => None,
        }
    }

    /// A `double`: protobuf stores it as fixed64.
    pub fn as_f64(&self) -> Option<f64> {
        match self.value {
            Value::Fixed64(v) => Some(f64::from_bits(v)),
            _ => None,
        }
    }

    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        match self.value {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// Iterates over the fields of one message held in `buf`.
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Where the field being read starts.
    field_start: usize,
    /// Offset of `buf[0]` in the file, for error messages.
    base: u64,
}

impl<'a> Fields<'a> {
    pub fn new(buf: &'a [u8], base: u64) -> Self {
        Fields { buf, pos: 0, field_start: 0, base }
    }

    /// How many bytes of the buffer the fields read so far take.
    pub fn consumed(&self) -> usize {
        self.pos
    }

    /// The next field's key alone, for bytes that may be damaged (where the
    /// field as a whole may not decode); `None` at the end or on a bad varint.
    pub fn next_key(&mut self) -> Option<u64> {
        (self.pos < self.buf.len()).then(|| self.varint().ok()).flatten()
    }

    pub fn skip_varint(&mut self) -> Option<()> {
        self.varint().ok().map(|_| ())
    }

    /// Reads a length and returns the bytes after it, as many as it says or
    /// as there are, whichever is fewer: in damaged bytes a length may be wrong.
    pub fn rest_after_length(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.varint().ok()?).ok()?;
        let rest = self.buf.get(self.pos..)?;
        let taken = rest.get(..len.min(rest.len()))?;
        self.pos += taken.len();
        Some(taken)
    }

    fn error(&self, at: usize, what: impl Into<String>) -> WireError {
        WireError { offset: self.base + at as u64, what: what.into(), field_start: self.base + self.field_start as u64 }
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let start = self.pos;
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(self.error(start, "truncated varint"));
            };
            self.pos += 1;
            if shift == 63 && byte > 1 {
                return Err(self.error(start, "varint longer than 64 bits"));
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.error(start, "varint longer than 10 bytes"))
    }

    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8], WireError> {
        let end = self.pos.checked_add(len).filter(|&end| end <= self.buf.len());
        match end.and_then(|end| self.buf.get(self.pos..end).map(|slice| (end, slice))) {
            Some((end, slice)) => {
                self.pos = end;
                Ok(slice)
            }
            None => Err(self.error(
                self.pos,
                format!("{what} of {len} bytes runs past the end ({} bytes left)", self.buf.len() - self.pos),
            )),
        }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let start = self.pos;
        self.field_start = start;
        let field = (|| {
            let key = self.varint()?;
            let number = u32::try_from(key >> 3).ok().filter(|&n| n != 0);
            let Some(number) = number else {
                return Err(self.error(start, format!("invalid field key {key}")));
            };
            let value = match key & 7 {
                0 => Value::Varint(self.varint()?),
                1 => {
                    let raw = self.take(8, "fixed64 field")?;
                    let mut le = [0u8; 8];
                    le.copy_from_slice(raw);
                    Value::Fixed64(u64::from_le_bytes(le))
                }
                2 => {
                    let len = self.varint()?;
                    let len = usize::try_from(len).map_err(|_| self.error(start, "length does not fit in memory"))?;
                    Value::Bytes(self.take(len, "length-delimited field")?)
                }
                5 => {
                    let raw = self.take(4, "fixed32 field")?;
                    let mut le = [0u8; 4];
                    le.copy_from_slice(raw);
                    Value::Fixed32(u32::from_le_bytes(le))
                }
                wire => return Err(self.error(start, format!("unsupported wire type {wire} in field {number}"))),
            };
            Ok(Field { number, value, offset: self.base + start as u64 })
        })();
        if field.is_err() {
            // Stop after the first error: nothing after it can be trusted.
            self.pos = self.buf.len();
        }
        Some(field)
    }
}

/// The length-delimited field starting at `at` in `buf` whose length runs
/// past the end of `buf` (a file cut short): its number and the bytes of it
/// that are there, so what is complete inside it can still be read.
pub fn cut_short_field(buf: &[u8], at: usize) -> Option<(u32, &[u8])> {
    let mut fields = Fields::new(buf.get(at..)?, 0);
    let key = fields.varint().ok()?;
    let len = usize::try_from(fields.varint().ok()?).ok()?;
    let rest = fields.buf.get(fields.pos..)?;
    (key & 7 == 2 && len > rest.len()).then_some((u32::try_from(key >> 3).ok()?, rest))
}

/// Where `part` (a slice of `whole`) starts within `whole`, for error offsets.
pub fn offset_within(whole: &[u8], part: &[u8]) -> u64 {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize) as u64
}

/// Walks sub-messages of one buffer (a file, or a proto embedded at `base`
/// in one) so every error offset counts from the start of the file.
#[derive(Clone, Copy)]
pub struct Walker<'w> {
    whole: &'w [u8],
    base: u64,
}

impl<'w> Walker<'w> {
    pub fn new(whole: &'w [u8], base: u64) -> Self {
        Walker { whole, base }
    }

    /// The fields of `part`, which must be a slice of the walked buffer.
    pub fn fields<'a>(&self, part: &'a [u8]) -> Fields<'a> {
        Fields::new(part, self.offset(part))
    }

    /// Where `part` starts in the file.
    pub fn offset(&self, part: &[u8]) -> u64 {
        self.base + offset_within(self.whole, part)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_fields_and_reports_truncation_offsets() {
        // field 1 varint 150, field 2 bytes "hi", then a field 3 claiming 10 bytes with 1 left.
        let data = [0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i', 0x1a, 0x0a, 0x00];
        let mut fields = Fields::new(&data, 100);
        let first = fields.next().unwrap().unwrap();
        assert_eq!((first.number, first.as_u64()), (1, Some(150)));
        let second = fields.next().unwrap().unwrap();
        assert_eq!(second.as_bytes().unwrap(), b"hi");
        assert_eq!(second.offset, 103);
        let third = fields.next().unwrap().unwrap_err();
        assert_eq!(third.offset, 109);
        assert!(third.what.contains("runs past the end"), "{}", third.what);
        assert!(fields.next().is_none());
    }

    #[test]
    fn rejects_overlong_varints_and_bad_wire_types() {
        let overlong = [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert!(Fields::new(&overlong, 0).next().unwrap().is_err());
        let group = [0x0b];
        let err = Fields::new(&group, 0).next().unwrap().unwrap_err();
        assert!(err.what.contains("wire type 3"));
    }
}
