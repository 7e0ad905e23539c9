//! The Bigtable data API messages of the hot path, encoded and decoded by
//! hand from borrowed bytes: a request is written straight into the
//! connection's buffer (the table name and filter pre-encoded once), and a
//! `ReadRowsResponse` is walked in place, so that an operation allocates
//! only the values it returns. Field numbers are those of
//! `google/bigtable/v2/bigtable.proto` and `data.proto`; the tests check
//! the encodings against the generated (prost) types.

use bytes::BufMut;
use prost::encoding::{decode_key, decode_varint, encode_key, encode_varint, encoded_len_varint};
use prost::encoding::{key_len, WireType};

/// A length-delimited field: key, length, bytes.
pub fn put_bytes(tag: u32, bytes: &[u8], buf: &mut impl BufMut) {
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(bytes.len() as u64, buf);
    buf.put_slice(bytes);
}

/// The key and length of a length-delimited field whose body (of `len`
/// bytes) the caller writes next.
fn put_header(tag: u32, len: usize, buf: &mut impl BufMut) {
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(len as u64, buf);
}

fn put_varint(tag: u32, value: u64, buf: &mut impl BufMut) {
    encode_key(tag, WireType::Varint, buf);
    encode_varint(value, buf);
}

/// Encoded size of a length-delimited field with a body of `len` bytes.
pub fn field_len(tag: u32, len: usize) -> usize {
    key_len(tag) + encoded_len_varint(len as u64) + len
}

/// Which rows a `ReadRowsRequest` asks for.
#[derive(Copy, Clone, Debug)]
pub enum Rows<'a> {
    /// One row key.
    Key(&'a [u8]),
    /// Keys from this one (inclusive; empty for the first) to the end.
    From(&'a [u8]),
}

/// `ReadRowsRequest { table_name, rows, filter, rows_limit }`, with
/// `table` and `filter` already encoded as whole fields (tags 1 and 3).
pub fn read_rows(table: &[u8], rows: Rows<'_>, filter: &[u8], limit: i64, buf: &mut impl BufMut) {
    buf.put_slice(table);
    // RowSet (2): row_keys (1) or row_ranges (2) of RowRange with
    // start_key_closed (1).
    match rows {
        Rows::Key(key) => {
            put_header(2, field_len(1, key.len()), buf);
            put_bytes(1, key, buf);
        }
        Rows::From(start) => {
            let range_len = if start.is_empty() {
                0
            } else {
                field_len(1, start.len())
            };
            put_header(2, field_len(2, range_len), buf);
            put_header(2, range_len, buf);
            if !start.is_empty() {
                put_bytes(1, start, buf);
            }
        }
    }
    buf.put_slice(filter);
    if limit > 0 {
        put_varint(4, limit as u64, buf);
    }
}

/// One mutation of a row.
#[derive(Copy, Clone, Debug)]
pub enum Mutation<'a> {
    /// `SetCell` with the server's timestamp (-1).
    Set {
        family: &'a [u8],
        qualifier: &'a [u8],
        value: &'a [u8],
    },
    DeleteRow,
}

/// Encoded size of -1 as an int64 varint.
const MINUS_ONE_LEN: usize = 10;

impl Mutation<'_> {
    /// The size of the `Mutation` message's body.
    fn body_len(&self) -> usize {
        match self {
            Mutation::Set {
                family,
                qualifier,
                value,
            } => field_len(1, set_cell_len(family, qualifier, value)),
            Mutation::DeleteRow => field_len(4, 0),
        }
    }

    fn put(&self, tag: u32, buf: &mut impl BufMut) {
        put_header(tag, self.body_len(), buf);
        match self {
            Mutation::Set {
                family,
                qualifier,
                value,
            } => {
                // Mutation.set_cell (1): SetCell { family_name (1),
                // column_qualifier (2), timestamp_micros (3), value (4) }.
                put_header(1, set_cell_len(family, qualifier, value), buf);
                put_bytes(1, family, buf);
                put_bytes(2, qualifier, buf);
                put_varint(3, -1i64 as u64, buf);
                put_bytes(4, value, buf);
            }
            // Mutation.delete_from_row (4): an empty DeleteFromRow.
            Mutation::DeleteRow => put_header(4, 0, buf),
        }
    }
}

fn set_cell_len(family: &[u8], qualifier: &[u8], value: &[u8]) -> usize {
    field_len(1, family.len())
        + field_len(2, qualifier.len())
        + key_len(3)
        + MINUS_ONE_LEN
        + field_len(4, value.len())
}

/// `MutateRowRequest { table_name, row_key, mutations }` (tags 1, 2, 3),
/// or with `check`, `CheckAndMutateRowRequest { table_name, row_key,
/// true_mutations }` (tags 1, 2, 4) with no predicate (true when the row
/// has any cell).
pub fn mutate_row<'a>(
    table: &[u8],
    key: &[u8],
    check: bool,
    mutations: impl Iterator<Item = Mutation<'a>>,
    buf: &mut impl BufMut,
) {
    buf.put_slice(table);
    put_bytes(2, key, buf);
    let tag = if check { 4 } else { 3 };
    for m in mutations {
        m.put(tag, buf);
    }
}

/// One `ReadRowsResponse.CellChunk`, borrowed from the response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chunk<'a> {
    pub row_key: &'a [u8],
    pub family: Option<&'a [u8]>,
    pub qualifier: Option<&'a [u8]>,
    pub labels: Labels<'a>,
    pub value: &'a [u8],
    pub value_size: i32,
    pub reset_row: bool,
    pub commit_row: bool,
}

/// A chunk's labels (repeated string 5), still encoded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels<'a> {
    first: Option<&'a [u8]>,
    /// Further labels: rare (one label per cell is all Bigtable applies).
    more: Vec<&'a [u8]>,
}

impl<'a> Labels<'a> {
    pub fn contains(&self, label: &str) -> bool {
        self.first.is_some_and(|l| l == label.as_bytes()) || self.more.contains(&label.as_bytes())
    }

    fn push(&mut self, label: &'a [u8]) {
        if self.first.is_none() {
            self.first = Some(label);
        } else {
            self.more.push(label);
        }
    }
}

type Result<T> = std::result::Result<T, String>;

fn err(e: prost::DecodeError) -> String {
    e.to_string()
}

/// The body of a length-delimited field at the front of `buf`.
fn take_len<'a>(buf: &mut &'a [u8]) -> Result<&'a [u8]> {
    let len = decode_varint(buf).map_err(err)?;
    let len = usize::try_from(len).map_err(|_| "length overflow".to_string())?;
    if buf.len() < len {
        return Err("truncated field".into());
    }
    let (body, rest) = buf.split_at(len);
    *buf = rest;
    Ok(body)
}

fn skip(wire_type: WireType, buf: &mut &[u8]) -> Result<()> {
    let n = match wire_type {
        WireType::Varint => {
            decode_varint(buf).map_err(err)?;
            0
        }
        WireType::SixtyFourBit => 8,
        WireType::ThirtyTwoBit => 4,
        WireType::LengthDelimited => {
            take_len(buf)?;
            0
        }
        WireType::StartGroup | WireType::EndGroup => return Err("groups are not used".into()),
    };
    if buf.len() < n {
        return Err("truncated field".into());
    }
    *buf = &buf[n..];
    Ok(())
}

/// The `value` (1) of a `google.protobuf.StringValue` or `BytesValue`.
fn wrapped(mut body: &[u8]) -> Result<&[u8]> {
    let mut value: &[u8] = &[];
    while !body.is_empty() {
        let (tag, wire_type) = decode_key(&mut body).map_err(err)?;
        if tag == 1 && wire_type == WireType::LengthDelimited {
            value = take_len(&mut body)?;
        } else {
            skip(wire_type, &mut body)?;
        }
    }
    Ok(value)
}

fn chunk(mut body: &[u8]) -> Result<Chunk<'_>> {
    let mut c = Chunk::default();
    while !body.is_empty() {
        let (tag, wire_type) = decode_key(&mut body).map_err(err)?;
        match (tag, wire_type) {
            (1, WireType::LengthDelimited) => c.row_key = take_len(&mut body)?,
            (2, WireType::LengthDelimited) => c.family = Some(wrapped(take_len(&mut body)?)?),
            (3, WireType::LengthDelimited) => c.qualifier = Some(wrapped(take_len(&mut body)?)?),
            (5, WireType::LengthDelimited) => c.labels.push(take_len(&mut body)?),
            (6, WireType::LengthDelimited) => c.value = take_len(&mut body)?,
            (7, WireType::Varint) => c.value_size = decode_varint(&mut body).map_err(err)? as i32,
            (8, WireType::Varint) => c.reset_row = decode_varint(&mut body).map_err(err)? != 0,
            (9, WireType::Varint) => c.commit_row = decode_varint(&mut body).map_err(err)? != 0,
            _ => skip(wire_type, &mut body)?,
        }
    }
    Ok(c)
}

/// Call `f` with each chunk of a `ReadRowsResponse` (chunks are field 1).
pub fn for_each_chunk<'a>(mut msg: &'a [u8], mut f: impl FnMut(Chunk<'a>)) -> Result<()> {
    while !msg.is_empty() {
        let (tag, wire_type) = decode_key(&mut msg).map_err(err)?;
        if tag == 1 && wire_type == WireType::LengthDelimited {
            f(chunk(take_len(&mut msg)?)?);
        } else {
            skip(wire_type, &mut msg)?;
        }
    }
    Ok(())
}

/// `CheckAndMutateRowResponse.predicate_matched` (1).
pub fn predicate_matched(mut msg: &[u8]) -> Result<bool> {
    let mut matched = false;
    while !msg.is_empty() {
        let (tag, wire_type) = decode_key(&mut msg).map_err(err)?;
        if tag == 1 && wire_type == WireType::Varint {
            matched = decode_varint(&mut msg).map_err(err)? != 0;
        } else {
            skip(wire_type, &mut msg)?;
        }
    }
    Ok(matched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use googleapis_tonic_google_bigtable_v2::google::bigtable::v2 as pb;
    use pb::read_rows_response::cell_chunk::RowStatus;
    use prost::Message;

    fn table_field(name: &str) -> Vec<u8> {
        let mut v = Vec::new();
        put_bytes(1, name.as_bytes(), &mut v);
        v
    }

    fn filter_field(f: &pb::RowFilter) -> Vec<u8> {
        let mut v = Vec::new();
        prost::encoding::message::encode(3, f, &mut v);
        v
    }

    fn sample_filter() -> pb::RowFilter {
        pb::RowFilter {
            filter: Some(pb::row_filter::Filter::CellsPerColumnLimitFilter(1)),
        }
    }

    #[test]
    fn read_rows_requests_decode_as_prost_encodes_them() {
        let filter = sample_filter();
        for (rows, limit, expected_rows) in [
            (
                Rows::Key(b"user1"),
                1,
                pb::RowSet {
                    row_keys: vec![b"user1".to_vec()],
                    row_ranges: vec![],
                },
            ),
            (
                Rows::From(b"user5"),
                100,
                pb::RowSet {
                    row_keys: vec![],
                    row_ranges: vec![pb::RowRange {
                        start_key: Some(pb::row_range::StartKey::StartKeyClosed(b"user5".to_vec())),
                        end_key: None,
                    }],
                },
            ),
            (
                Rows::From(b""),
                0,
                pb::RowSet {
                    row_keys: vec![],
                    row_ranges: vec![pb::RowRange::default()],
                },
            ),
        ] {
            let mut buf = Vec::new();
            read_rows(
                &table_field("projects/p/instances/i/tables/t"),
                rows,
                &filter_field(&filter),
                limit,
                &mut buf,
            );
            let decoded = pb::ReadRowsRequest::decode(&buf[..]).unwrap();
            assert_eq!(
                decoded,
                pb::ReadRowsRequest {
                    table_name: "projects/p/instances/i/tables/t".into(),
                    rows: Some(expected_rows),
                    filter: Some(filter.clone()),
                    rows_limit: limit,
                    ..Default::default()
                }
            );
        }
    }

    fn set(q: &str, v: &[u8]) -> pb::Mutation {
        pb::Mutation {
            mutation: Some(pb::mutation::Mutation::SetCell(pb::mutation::SetCell {
                family_name: "cf".into(),
                column_qualifier: q.as_bytes().to_vec(),
                timestamp_micros: -1,
                value: v.to_vec(),
            })),
        }
    }

    #[test]
    fn mutations_decode_as_prost_encodes_them() {
        let muts = [
            Mutation::DeleteRow,
            Mutation::Set {
                family: b"cf",
                qualifier: b"field0",
                value: &[7; 300],
            },
            Mutation::Set {
                family: b"cf",
                qualifier: b"field1",
                value: b"",
            },
        ];
        let expected = vec![
            pb::Mutation {
                mutation: Some(pb::mutation::Mutation::DeleteFromRow(
                    pb::mutation::DeleteFromRow {},
                )),
            },
            set("field0", &[7; 300]),
            set("field1", b""),
        ];
        let table = table_field("t");
        let mut buf = Vec::new();
        mutate_row(&table, b"k", false, muts.iter().copied(), &mut buf);
        assert_eq!(
            pb::MutateRowRequest::decode(&buf[..]).unwrap(),
            pb::MutateRowRequest {
                table_name: "t".into(),
                row_key: b"k".to_vec(),
                mutations: expected.clone(),
                ..Default::default()
            }
        );
        let mut buf = Vec::new();
        mutate_row(&table, b"k", true, muts.iter().copied(), &mut buf);
        assert_eq!(
            pb::CheckAndMutateRowRequest::decode(&buf[..]).unwrap(),
            pb::CheckAndMutateRowRequest {
                table_name: "t".into(),
                row_key: b"k".to_vec(),
                true_mutations: expected,
                ..Default::default()
            }
        );
    }

    #[test]
    fn responses_decode_in_place() {
        let response = pb::ReadRowsResponse {
            chunks: vec![
                pb::read_rows_response::CellChunk {
                    row_key: b"user1".to_vec(),
                    family_name: Some("cf".into()),
                    qualifier: Some(b"field0".to_vec()),
                    timestamp_micros: 1234,
                    labels: vec!["a".into(), "b".into()],
                    value: b"xyz".to_vec(),
                    value_size: 10,
                    row_status: None,
                },
                pb::read_rows_response::CellChunk {
                    value: b"more".to_vec(),
                    row_status: Some(RowStatus::CommitRow(true)),
                    ..Default::default()
                },
                pb::read_rows_response::CellChunk {
                    row_status: Some(RowStatus::ResetRow(true)),
                    ..Default::default()
                },
            ],
            last_scanned_row_key: b"skip me".to_vec(),
            request_stats: None,
        };
        let bytes = response.encode_to_vec();
        let mut chunks = Vec::new();
        for_each_chunk(&bytes, |c| chunks.push(c)).unwrap();
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[0].row_key, b"user1");
        assert_eq!(chunks[0].family, Some(&b"cf"[..]));
        assert_eq!(chunks[0].qualifier, Some(&b"field0"[..]));
        assert!(chunks[0].labels.contains("b") && !chunks[0].labels.contains("c"));
        assert_eq!((chunks[0].value, chunks[0].value_size), (&b"xyz"[..], 10));
        assert_eq!(chunks[1].value, b"more");
        assert!(chunks[1].commit_row && !chunks[1].reset_row);
        assert!(chunks[2].reset_row);
        assert!(for_each_chunk(&bytes[..bytes.len() - 3], |_| {}).is_err());

        let m = pb::CheckAndMutateRowResponse {
            predicate_matched: true,
        };
        assert!(predicate_matched(&m.encode_to_vec()).unwrap());
        assert!(!predicate_matched(&[]).unwrap());
    }
}
