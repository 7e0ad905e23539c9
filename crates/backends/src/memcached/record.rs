//! sojourn's record encoding in a memcached item (see the parent module):
//! a version byte, then each field's index and length as LEB128 varints
//! and its bytes; and the merge of an old record with new values.

use sojourn_core::backend::FieldValue;

pub(super) const RECORD_VERSION: u8 = 1;

pub(super) fn push_leb128(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

pub(super) fn leb128_len(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

pub(super) fn read_leb128(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut n: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *buf.get(*pos)?;
        *pos += 1;
        n |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

/// The encoded size of a record of these (field, value) pairs.
pub(super) fn record_len<'a>(fields: impl Iterator<Item = (usize, &'a [u8])>) -> usize {
    1 + fields
        .map(|(f, v)| leb128_len(f as u64) + leb128_len(v.len() as u64) + v.len())
        .sum::<usize>()
}

/// Encode (field, value) pairs, which must be in ascending field order.
pub(super) fn encode_record<'a>(
    out: &mut Vec<u8>,
    fields: impl Iterator<Item = (usize, &'a [u8])>,
) {
    out.push(RECORD_VERSION);
    for (f, v) in fields {
        push_leb128(out, f as u64);
        push_leb128(out, v.len() as u64);
        out.extend_from_slice(v);
    }
}

/// The fields of an encoded record as (field, range of its value), in the
/// order stored; an error for anything that is not a whole record.
pub(super) fn decode_all(
    data: &[u8],
    fields: &mut Vec<(usize, std::ops::Range<usize>)>,
) -> Result<(), String> {
    fields.clear();
    if data.first() != Some(&RECORD_VERSION) {
        return Err("the item is not a sojourn record".into());
    }
    let mut pos = 1;
    while pos < data.len() {
        let bad = || "a truncated or corrupt sojourn record".to_string();
        let field = read_leb128(data, &mut pos).ok_or_else(bad)?;
        let len = read_leb128(data, &mut pos).ok_or_else(bad)?;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| pos.checked_add(l))
            .filter(|&e| e <= data.len())
            .ok_or_else(bad)?;
        fields.push((usize::try_from(field).map_err(|_| bad())?, pos..end));
        pos = end;
    }
    Ok(())
}

/// The fields of an old record merged with new values (which win), in
/// field order. Both inputs are in field order.
#[derive(Clone)]
pub(super) struct Merge<'a> {
    pub(super) old: &'a [u8],
    pub(super) decoded: &'a [(usize, std::ops::Range<usize>)],
    pub(super) values: &'a [FieldValue],
    pub(super) order: &'a [usize],
    pub(super) i: usize,
    pub(super) j: usize,
}

impl<'a> Iterator for Merge<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        let old = self.decoded.get(self.i);
        let new = self.order.get(self.j).map(|&k| &self.values[k]);
        match (old, new) {
            (Some((fa, ra)), Some(v)) if *fa < v.field => {
                self.i += 1;
                Some((*fa, &self.old[ra.clone()]))
            }
            (Some((fa, _)), Some(v)) => {
                if *fa == v.field {
                    self.i += 1;
                }
                self.j += 1;
                Some((v.field, &v.value[..]))
            }
            (Some((fa, ra)), None) => {
                self.i += 1;
                Some((*fa, &self.old[ra.clone()]))
            }
            (None, Some(v)) => {
                self.j += 1;
                Some((v.field, &v.value[..]))
            }
            (None, None) => None,
        }
    }
}
