//! The rows of MySQL's binary protocol as the workers' client reads them:
//! each cell decoded in place from the connection's read buffer by its
//! column's type, and the length-encoded integers the protocol counts
//! with.

use std::fmt;

use super::protocol::{lenenc, Error};

/// One value of a row, borrowed from the connection's buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Cell<'a> {
    Null,
    /// Strings, blobs, decimals and what MySQL sends as text in the
    /// binary protocol.
    Bytes(&'a [u8]),
    Int(i64),
    UInt(u64),
    Double(f64),
    /// A date, time or timestamp, as MySQL writes them in text.
    Temporal(Temporal),
}

/// A date, time or timestamp of the binary protocol.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Temporal {
    ty: u8,
    raw: [u8; 12],
    len: u8,
}

impl Cell<'_> {
    /// The value as MySQL's text protocol would send it; `None` for NULL.
    pub fn text(&self) -> Option<Vec<u8>> {
        Some(match self {
            Cell::Null => return None,
            Cell::Bytes(b) => b.to_vec(),
            Cell::Int(v) => v.to_string().into_bytes(),
            Cell::UInt(v) => v.to_string().into_bytes(),
            Cell::Double(v) => v.to_string().into_bytes(),
            Cell::Temporal(t) => t.to_string().into_bytes(),
        })
    }

    /// The value as an unsigned number, if it is one (a count, a sum).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Cell::UInt(v) => Some(v),
            Cell::Int(v) => u64::try_from(v).ok(),
            Cell::Bytes(b) => {
                // DECIMAL comes as text; a sum of integers has no fraction
                // but may carry ".0000".
                let s = std::str::from_utf8(b).ok()?;
                let whole = s.split('.').next()?;
                whole.parse().ok()
            }
            Cell::Double(v) if v >= 0.0 => Some(v as u64),
            _ => None,
        }
    }
}

impl fmt::Display for Temporal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.raw[..self.len as usize];
        let u16_at = |i: usize| u16::from_le_bytes([r[i], r[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
        if self.ty == TYPE_TIME {
            // negative, days, hours, minutes, seconds[, microseconds]
            if r.is_empty() {
                return f.write_str("00:00:00");
            }
            let sign = if r[0] == 1 { "-" } else { "" };
            let hours = u32_at(1) * 24 + r[5] as u32;
            write!(f, "{sign}{hours:02}:{:02}:{:02}", r[6], r[7])?;
            if r.len() >= 12 {
                write!(f, ".{:06}", u32_at(8))?;
            }
            return Ok(());
        }
        let (y, mo, d) = if r.len() >= 4 {
            (u16_at(0), r[2], r[3])
        } else {
            (0, 0, 0)
        };
        write!(f, "{y:04}-{mo:02}-{d:02}")?;
        if self.ty != TYPE_DATE {
            let (h, mi, s) = if r.len() >= 7 {
                (r[4], r[5], r[6])
            } else {
                (0, 0, 0)
            };
            write!(f, " {h:02}:{mi:02}:{s:02}")?;
            if r.len() >= 11 {
                write!(f, ".{:06}", u32_at(7))?;
            }
        }
        Ok(())
    }
}

const TYPE_TIMESTAMP: u8 = 7;
const TYPE_DATE: u8 = 10;
const TYPE_TIME: u8 = 11;
const TYPE_DATETIME: u8 = 12;
const TYPE_NEWDATE: u8 = 14;
const UNSIGNED_FLAG: u16 = 0x20;

/// A result column: its type and whether it is unsigned.
#[derive(Clone, Copy, Debug)]
pub(super) struct Column {
    ty: u8,
    unsigned: bool,
}

/// A row of a result, borrowed from the connection: its cells in order.
pub(super) struct Row<'a> {
    pub columns: &'a [Column],
    /// The NULL bitmap (a binary row's).
    pub nulls: &'a [u8],
    pub values: &'a [u8],
    /// A text query's row: each value length-encoded text, NULL as 0xfb.
    pub text: bool,
}

impl<'a> Row<'a> {
    /// The cells, in the statement's column order.
    pub fn cells(&self) -> Cells<'a> {
        Cells {
            columns: self.columns,
            nulls: self.nulls,
            values: self.values,
            text: self.text,
            i: 0,
        }
    }
}

pub(super) struct Cells<'a> {
    columns: &'a [Column],
    nulls: &'a [u8],
    values: &'a [u8],
    text: bool,
    i: usize,
}

impl<'a> Iterator for Cells<'a> {
    type Item = Result<Cell<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let col = *self.columns.get(self.i)?;
        if self.text {
            self.i += 1;
            return Some(self.text_cell());
        }
        // The binary row's NULL bitmap starts at bit 2.
        let bit = self.i + 2;
        self.i += 1;
        if self.nulls[bit / 8] & (1 << (bit % 8)) != 0 {
            return Some(Ok(Cell::Null));
        }
        Some(self.cell(col))
    }
}

impl<'a> Cells<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.values.len() < n {
            return Err(Error::protocol("a row ends inside a value"));
        }
        let (head, rest) = self.values.split_at(n);
        self.values = rest;
        Ok(head)
    }

    /// A text row's value: length-encoded text, or 0xfb for NULL.
    fn text_cell(&mut self) -> Result<Cell<'a>, Error> {
        if self.values.first() == Some(&0xfb) {
            self.take(1)?;
            return Ok(Cell::Null);
        }
        let (len, head) =
            lenenc(self.values).ok_or_else(|| Error::protocol("a row ends inside a length"))?;
        self.take(head)?;
        Ok(Cell::Bytes(self.take(len as usize)?))
    }

    fn cell(&mut self, col: Column) -> Result<Cell<'a>, Error> {
        let int = |b: &[u8], unsigned: bool| -> Cell<'a> {
            let mut le = [0u8; 8];
            le[..b.len()].copy_from_slice(b);
            let u = u64::from_le_bytes(le);
            if unsigned {
                Cell::UInt(u)
            } else {
                // Sign-extend from the value's width.
                let shift = 64 - 8 * b.len() as u32;
                Cell::Int(((u << shift) as i64) >> shift)
            }
        };
        Ok(match col.ty {
            1 => int(self.take(1)?, col.unsigned),
            2 | 13 => int(self.take(2)?, col.unsigned),
            3 | 9 => int(self.take(4)?, col.unsigned),
            8 => int(self.take(8)?, col.unsigned),
            4 => {
                let b = self.take(4)?;
                Cell::Double(f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64)
            }
            5 => Cell::Double(f64::from_le_bytes(
                self.take(8)?.try_into().expect("8 bytes"),
            )),
            6 => Cell::Null,
            TYPE_TIMESTAMP | TYPE_DATE | TYPE_TIME | TYPE_DATETIME | TYPE_NEWDATE => {
                let len = self.take(1)?[0] as usize;
                let b = self.take(len)?;
                let mut raw = [0u8; 12];
                let n = len.min(12);
                raw[..n].copy_from_slice(&b[..n]);
                Cell::Temporal(Temporal {
                    ty: col.ty,
                    raw,
                    len: n as u8,
                })
            }
            _ => {
                let (len, head) = lenenc(self.values)
                    .ok_or_else(|| Error::protocol("a row ends inside a length"))?;
                self.take(head)?;
                Cell::Bytes(self.take(len as usize)?)
            }
        })
    }
}

/// A column definition's name (what the result calls it: its alias where
/// it has one).
pub(super) fn column_name(p: &[u8]) -> Result<String, Error> {
    let mut at = 0;
    // catalog, schema, table, org_table, then the name.
    for field in 0..5 {
        let (len, head) = lenenc(p.get(at..).unwrap_or_default())
            .ok_or_else(|| Error::protocol("a truncated column definition"))?;
        let value = p
            .get(at + head..at + head + len as usize)
            .ok_or_else(|| Error::protocol("a truncated column definition"))?;
        if field == 4 {
            return Ok(String::from_utf8_lossy(value).into_owned());
        }
        at += head + len as usize;
    }
    unreachable!("the name is the fifth field")
}

/// A column definition's type and unsigned flag.
pub(super) fn column_definition(p: &[u8]) -> Result<Column, Error> {
    let mut at = 0;
    // catalog, schema, table, org_table, name, org_name
    for _ in 0..6 {
        let (len, head) =
            lenenc(&p[at..]).ok_or_else(|| Error::protocol("a truncated column definition"))?;
        at += head + len as usize;
    }
    // Length of the fixed fields (0x0c), character set (2), length (4),
    // then the type and the flags.
    let fixed = p
        .get(at + 1 + 2 + 4..at + 1 + 2 + 4 + 3)
        .ok_or_else(|| Error::protocol("a truncated column definition"))?;
    Ok(Column {
        ty: fixed[0],
        unsigned: u16::from_le_bytes([fixed[1], fixed[2]]) & UNSIGNED_FLAG != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::protocol::put_lenenc;

    #[test]
    fn length_encoded_integers_round_trip() {
        for v in [
            0,
            250,
            251,
            0xffff,
            0x1_0000,
            0xff_ffff,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, v);
            assert_eq!(lenenc(&b), Some((v, b.len())), "{v}");
        }
        assert_eq!(lenenc(&[0xfc, 1]), None);
    }

    #[test]
    fn binary_cells_decode_by_column_type() {
        let columns = [
            Column {
                ty: 8,
                unsigned: false,
            },
            Column {
                ty: 3,
                unsigned: true,
            },
            Column {
                ty: 253,
                unsigned: false,
            },
            Column {
                ty: 1,
                unsigned: false,
            },
            Column {
                ty: TYPE_DATETIME,
                unsigned: false,
            },
            Column {
                ty: 253,
                unsigned: false,
            },
        ];
        let mut values = Vec::new();
        values.extend_from_slice(&(-5i64).to_le_bytes());
        values.extend_from_slice(&7u32.to_le_bytes());
        values.extend_from_slice(&[3, b'a', b'b', b'c']);
        values.push(0xff);
        values.extend_from_slice(&[7, 0xe8, 0x07, 2, 29, 13, 5, 9]);
        // The last column is NULL: bit 2 + 5 = 7 of the first byte.
        let nulls = [0x80, 0];
        let row = Row {
            columns: &columns,
            nulls: &nulls,
            values: &values,
            text: false,
        };
        let cells: Vec<Cell<'_>> = row.cells().collect::<Result<_, _>>().unwrap();
        assert_eq!(cells[0], Cell::Int(-5));
        assert_eq!(cells[1], Cell::UInt(7));
        assert_eq!(cells[2], Cell::Bytes(b"abc"));
        assert_eq!(cells[3], Cell::Int(-1));
        assert_eq!(cells[4].text().unwrap(), b"2024-02-29 13:05:09");
        assert_eq!(cells[5], Cell::Null);
        assert_eq!(Cell::Bytes(b"42.0000").as_u64(), Some(42));
        // A row cut short is an error, not a panic.
        let short = Row {
            columns: &columns,
            nulls: &nulls,
            values: &values[..10],
            text: false,
        };
        assert!(short.cells().any(|c| c.is_err()));
        // A text row: length-encoded values, NULL as 0xfb, whatever the
        // column's type.
        let values = [2, b'4', b'2', 0xfb, 0, 3, b'a', b'b', b'c'];
        let row = Row {
            columns: &columns[..4],
            nulls: &[],
            values: &values,
            text: true,
        };
        let cells: Vec<Cell<'_>> = row.cells().collect::<Result<_, _>>().unwrap();
        assert_eq!(
            cells,
            [
                Cell::Bytes(b"42"),
                Cell::Null,
                Cell::Bytes(b""),
                Cell::Bytes(b"abc")
            ]
        );
        let mut definition = Vec::new();
        for field in ["def", "db", "t", "t", "doubled", "x"] {
            put_lenenc(&mut definition, field.len() as u64);
            definition.extend_from_slice(field.as_bytes());
        }
        assert_eq!(column_name(&definition).unwrap(), "doubled");
        assert!(column_name(&definition[..12]).is_err());
    }
}
