//! A CQL table as a connection uses it: its key column and the column of
//! each workload field, found in `system_schema` (so that a table made by
//! YCSB, by yb-sample-apps or by hand is read as it is), the CQL of each
//! operation shape over it, and how values are bound and read back.
//!
//! Two layouts are made by sojourn and any other is read: YCSB's
//! (`y_id varchar PRIMARY KEY, field0 varchar, ...`) and yb-sample-apps'
//! key-value table (`k varchar PRIMARY KEY, v blob`). A text column
//! (`varchar`, `ascii`) keeps any bytes as [`crate::text`] says, so YCSB's
//! ASCII values stay plain; a `blob` column keeps them as they are.

use std::fmt::Write as _;

use scylla::client::session::Session;
use scylla::deserialize::row::ColumnIterator;
use scylla::serialize::row::{RowSerializationContext, SerializeRow};
use scylla::serialize::writers::RowWriter;
use scylla::serialize::SerializationError;
use sojourn_core::backend::{FieldValue, Schema};

use crate::shapes::Op;
use crate::text;

use super::options::check_name;

/// YCSB's key column.
pub const YCSB_KEY: &str = "y_id";

/// How a column keeps a value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `varchar` (`text`): UTF-8, else escaped.
    Text,
    /// `ascii`: ASCII, else escaped (hex is ASCII).
    Ascii,
    /// `blob`: any bytes.
    Blob,
}

impl Kind {
    fn of(cql_type: &str) -> Option<Kind> {
        match cql_type {
            "text" | "varchar" => Some(Kind::Text),
            "ascii" => Some(Kind::Ascii),
            "blob" => Some(Kind::Blob),
            _ => None,
        }
    }

    /// Append the stored form of `value` to `out`.
    fn store(self, value: &[u8], out: &mut Vec<u8>) {
        let plain = match self {
            Kind::Blob => true,
            Kind::Text => text::is_plain(value),
            Kind::Ascii => text::is_plain(value) && value.is_ascii(),
        };
        if plain {
            out.extend_from_slice(value);
        } else {
            text::escape_into(value, out);
        }
    }

    /// The value whose stored form is `stored`.
    fn load(self, stored: &[u8]) -> Vec<u8> {
        match self {
            Kind::Blob => stored.to_vec(),
            Kind::Text | Kind::Ascii => text::decode(stored),
        }
    }
}

/// Which layout `CREATE TABLE` makes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Made {
    /// YCSB's: `y_id` and a `varchar` column per field.
    Ycsb,
    /// yb-sample-apps' key-value table: `k` and a `blob` column per field
    /// (its one field, `v`).
    KeyValue,
}

/// `keyspace.table` as CQL names it (unquoted, so case-folded).
pub fn qualified(keyspace: &str, schema: &Schema) -> Result<String, String> {
    check_name("table", &schema.table)?;
    for f in &schema.field_names {
        check_name("field", f)?;
    }
    Ok(format!("{keyspace}.{}", schema.table.to_ascii_lowercase()))
}

/// The CQL that makes `schema`'s table in `made`'s layout, if absent.
pub fn create(keyspace: &str, schema: &Schema, made: Made) -> Result<String, String> {
    let name = qualified(keyspace, schema)?;
    let (key, kind) = match made {
        Made::Ycsb => (YCSB_KEY, "varchar"),
        Made::KeyValue => ("k", "blob"),
    };
    let mut cql = format!("CREATE TABLE IF NOT EXISTS {name} ({key} varchar PRIMARY KEY");
    for f in &schema.field_names {
        let _ = write!(cql, ", {} {kind}", f.to_ascii_lowercase());
    }
    cql.push(')');
    Ok(cql)
}

/// A table as found in `system_schema`, mapped onto a workload's fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// `keyspace.table`.
    pub name: String,
    /// Its one partition key column.
    pub key: String,
    /// Each field's column and how it keeps values, by field index.
    pub fields: Vec<(String, Kind)>,
}

impl Table {
    /// `schema`'s table in `keyspace` as the server has it; `Ok(None)` when
    /// there is no such table. An error when it cannot keep the
    /// workload's records (no single text key, fields missing or of a type
    /// that holds no bytes).
    pub async fn find(
        session: &Session,
        keyspace: &str,
        schema: &Schema,
    ) -> Result<Option<Table>, String> {
        let name = qualified(keyspace, schema)?;
        let table = schema.table.to_ascii_lowercase();
        let rows = session
            .query_unpaged(
                "SELECT column_name, kind, type FROM system_schema.columns \
                 WHERE keyspace_name = ? AND table_name = ?",
                (keyspace, table.as_str()),
            )
            .await
            .map_err(|e| format!("reading the columns of {name}: {e}"))?
            .into_rows_result()
            .map_err(|e| format!("reading the columns of {name}: {e}"))?;
        let columns: Vec<(String, String, String)> = rows
            .rows::<(String, String, String)>()
            .map_err(|e| e.to_string())
            .and_then(|r| r.collect::<Result<_, _>>().map_err(|e| e.to_string()))
            .map_err(|e| format!("reading the columns of {name}: {e}"))?;
        if columns.is_empty() {
            return Ok(None);
        }
        Table::from_columns(&name, schema, &columns).map(Some)
    }

    /// From `system_schema.columns` rows: name, kind, type.
    fn from_columns(
        name: &str,
        schema: &Schema,
        columns: &[(String, String, String)],
    ) -> Result<Table, String> {
        let keys: Vec<&(String, String, String)> = columns
            .iter()
            .filter(|(_, kind, _)| kind == "partition_key" || kind == "clustering")
            .collect();
        let key = match keys.as_slice() {
            [(column, kind, ty)]
                if kind == "partition_key" && Kind::of(ty).is_some_and(|k| k != Kind::Blob) =>
            {
                column.clone()
            }
            _ => {
                return Err(format!(
                    "{name} is not a key-value table: its primary key must be one text column \
                     (YCSB's y_id varchar PRIMARY KEY), not {}",
                    keys.iter()
                        .map(|(c, _, t)| format!("{c} {t}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
        };
        let mut fields = Vec::with_capacity(schema.field_count());
        let mut missing = Vec::new();
        for f in &schema.field_names {
            let f = f.to_ascii_lowercase();
            match columns
                .iter()
                .find(|(c, kind, _)| *c == f && kind == "regular")
            {
                None => missing.push(f),
                Some((c, _, ty)) => match Kind::of(ty) {
                    Some(kind) => fields.push((c.clone(), kind)),
                    None => {
                        return Err(format!(
                            "column {c} of {name} is {ty}; sojourn keeps values in varchar, \
                             text, ascii or blob columns"
                        ))
                    }
                },
            }
        }
        if !missing.is_empty() {
            // The fields the table holds, the first on without a gap: the
            // fieldcount that matches it, where it has the workload's
            // field names.
            let prefix = schema.field_names[0]
                .to_ascii_lowercase()
                .trim_end_matches(|c: char| c.is_ascii_digit())
                .to_string();
            let held = (0..)
                .take_while(|i| {
                    let c = format!("{prefix}{i}");
                    columns.iter().any(|(n, k, _)| *n == c && k == "regular")
                })
                .count();
            let matching = if held > 0 {
                format!("-p fieldcount={held} matches the table, or ")
            } else {
                String::new()
            };
            return Err(format!(
                "{name} has no column {} for the workload's fields (made for another \
                 fieldcount or fieldnameprefix?): {matching}load with --drop to make it again",
                missing.join(", ")
            ));
        }
        Ok(Table {
            name: name.to_string(),
            key,
            fields,
        })
    }

    /// The CQL of `op` over the fields `columns`; the key first and a
    /// limit last where the operation binds them (see [`Params`]).
    pub fn cql(&self, op: Op, columns: &[usize]) -> String {
        let Table { name, key, .. } = self;
        let list = |sql: &mut String, prefix: &str, each: &str| {
            for (i, &f) in columns.iter().enumerate() {
                let sep = if i == 0 { prefix } else { ", " };
                let _ = write!(sql, "{sep}{}{each}", self.fields[f].0);
            }
        };
        let mut cql = String::new();
        match op {
            Op::Read => {
                cql.push_str("SELECT ");
                if columns.is_empty() {
                    cql.push_str(key);
                }
                list(&mut cql, "", "");
                let _ = write!(cql, " FROM {name} WHERE {key} = ?");
            }
            // Token order from the start key's token, as YCSB's binding
            // scans: a table partitioned by hash has no key order.
            Op::Scan => {
                let _ = write!(cql, "SELECT {key}");
                list(&mut cql, ", ", "");
                let _ = write!(cql, " FROM {name} WHERE token({key}) >= token(?) LIMIT ?");
            }
            Op::Update => {
                let _ = write!(cql, "UPDATE {name}");
                list(&mut cql, " SET ", " = ?");
                let _ = write!(cql, " WHERE {key} = ?");
            }
            Op::Insert => {
                let _ = write!(cql, "INSERT INTO {name} ({key}");
                list(&mut cql, ", ", "");
                cql.push_str(") VALUES (?");
                cql.push_str(&", ?".repeat(columns.len()));
                cql.push(')');
            }
        }
        cql
    }

    /// The CQL of a delete.
    pub fn delete(&self) -> String {
        format!("DELETE FROM {} WHERE {} = ?", self.name, self.key)
    }

    /// The fields `columns` of one result row, after `skip` leading
    /// columns, into `out`; a null column is a field the record lacks.
    pub fn push_fields(
        &self,
        row: &mut ColumnIterator<'_, '_>,
        columns: &[usize],
        out: &mut Vec<FieldValue>,
    ) -> Result<(), String> {
        for &field in columns {
            let column = row
                .next()
                .ok_or("a row with fewer columns than asked for")?
                .map_err(|e| e.to_string())?;
            if let Some(stored) = column.slice {
                out.push(FieldValue {
                    field,
                    value: self.fields[field].1.load(stored.as_slice()),
                });
            }
        }
        Ok(())
    }
}

/// What one statement binds, in the order its CQL names the markers.
pub enum Params<'a> {
    /// A read or delete: the key.
    Key(&'a str),
    /// A scan: the start key, then the limit.
    Scan(&'a str, i32),
    /// An update: the values, then the key.
    Update(&'a str, &'a [FieldValue], &'a Table),
    /// An insert: the key, then the values.
    Insert(&'a str, &'a [FieldValue], &'a Table),
}

impl SerializeRow for Params<'_> {
    fn serialize(
        &self,
        ctx: &RowSerializationContext<'_>,
        writer: &mut RowWriter,
    ) -> Result<(), SerializationError> {
        // Values are written as the bytes of their column type: a key and
        // text are their UTF-8, a blob its bytes, an int its big-endian
        // four bytes. The markers' order is the CQL's, which `Table::cql`
        // wrote; their count is checked against the prepared statement's.
        let mut buf = Vec::new();
        let mut values = |writer: &mut RowWriter, values: &[FieldValue], table: &Table| {
            for v in values {
                buf.clear();
                table.fields[v.field].1.store(&v.value, &mut buf);
                cell(writer, &buf)?;
            }
            Ok::<(), SerializationError>(())
        };
        let expected = match self {
            Params::Key(key) => {
                cell(writer, key.as_bytes())?;
                1
            }
            Params::Scan(key, limit) => {
                cell(writer, key.as_bytes())?;
                cell(writer, &limit.to_be_bytes())?;
                2
            }
            Params::Update(key, vs, table) => {
                values(writer, vs, table)?;
                cell(writer, key.as_bytes())?;
                vs.len() + 1
            }
            Params::Insert(key, vs, table) => {
                cell(writer, key.as_bytes())?;
                values(writer, vs, table)?;
                vs.len() + 1
            }
        };
        if ctx.columns().len() != expected {
            return Err(SerializationError::new(MarkerCount {
                statement: ctx.columns().len(),
                bound: expected,
            }));
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        false
    }
}

/// One bound value, its bytes as they are.
fn cell(writer: &mut RowWriter, bytes: &[u8]) -> Result<(), SerializationError> {
    writer
        .make_cell_writer()
        .set_value(bytes)
        .map(|_| ())
        .map_err(SerializationError::new)
}

/// A statement with another number of markers than the values bound.
#[derive(Debug, thiserror::Error)]
#[error("the statement has {statement} markers, {bound} values were bound")]
struct MarkerCount {
    statement: usize,
    bound: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(rows: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
        rows.iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect()
    }

    #[test]
    fn statements_of_each_shape() {
        let schema = Schema::ycsb("usertable", "field", 3);
        assert_eq!(
            create("ycsb", &schema, Made::Ycsb).unwrap(),
            "CREATE TABLE IF NOT EXISTS ycsb.usertable (y_id varchar PRIMARY KEY, \
             field0 varchar, field1 varchar, field2 varchar)"
        );
        let columns = cols(&[
            ("y_id", "partition_key", "text"),
            ("field0", "regular", "text"),
            ("field1", "regular", "ascii"),
            ("field2", "regular", "blob"),
        ]);
        let t = Table::from_columns("ycsb.usertable", &schema, &columns).unwrap();
        assert_eq!(
            t.cql(Op::Read, &[2, 0]),
            "SELECT field2, field0 FROM ycsb.usertable WHERE y_id = ?"
        );
        assert_eq!(
            t.cql(Op::Read, &[]),
            "SELECT y_id FROM ycsb.usertable WHERE y_id = ?"
        );
        assert_eq!(
            t.cql(Op::Scan, &[1]),
            "SELECT y_id, field1 FROM ycsb.usertable WHERE token(y_id) >= token(?) LIMIT ?"
        );
        assert_eq!(
            t.cql(Op::Update, &[1, 2]),
            "UPDATE ycsb.usertable SET field1 = ?, field2 = ? WHERE y_id = ?"
        );
        assert_eq!(
            t.cql(Op::Insert, &[0, 2]),
            "INSERT INTO ycsb.usertable (y_id, field0, field2) VALUES (?, ?, ?)"
        );
        assert_eq!(t.delete(), "DELETE FROM ycsb.usertable WHERE y_id = ?");
    }

    #[test]
    fn key_value_layout_and_refusals() {
        let kv = Schema {
            table: "KeyValue".into(),
            field_names: vec!["v".into()],
            more_tables: vec![],
        };
        assert_eq!(
            create("ks", &kv, Made::KeyValue).unwrap(),
            "CREATE TABLE IF NOT EXISTS ks.keyvalue (k varchar PRIMARY KEY, v blob)"
        );
        let t = Table::from_columns(
            "ks.keyvalue",
            &kv,
            &cols(&[("k", "partition_key", "text"), ("v", "regular", "blob")]),
        )
        .unwrap();
        assert_eq!((t.key.as_str(), t.fields[0].1), ("k", Kind::Blob));
        let e = Table::from_columns(
            "ks.keyvalue",
            &kv,
            &cols(&[("k", "partition_key", "text"), ("w", "regular", "blob")]),
        )
        .unwrap_err();
        assert!(e.contains("no column v"), "{e}");
        assert!(
            !e.contains("fieldcount="),
            "no field of the workload's names: {e}"
        );
        let ycsb = Schema::ycsb("usertable", "field", 4);
        let e = Table::from_columns(
            "ks.usertable",
            &ycsb,
            &cols(&[
                ("y_id", "partition_key", "text"),
                ("field0", "regular", "text"),
                ("field1", "regular", "text"),
            ]),
        )
        .unwrap_err();
        assert!(e.contains("no column field2, field3"), "{e}");
        assert!(e.contains("-p fieldcount=2 matches the table"), "{e}");
        let e = Table::from_columns(
            "ks.keyvalue",
            &kv,
            &cols(&[
                ("k", "partition_key", "text"),
                ("c", "clustering", "int"),
                ("v", "regular", "blob"),
            ]),
        )
        .unwrap_err();
        assert!(e.contains("one text column"), "{e}");
        let e = Table::from_columns(
            "ks.keyvalue",
            &kv,
            &cols(&[("k", "partition_key", "text"), ("v", "regular", "int")]),
        )
        .unwrap_err();
        assert!(e.contains("column v of ks.keyvalue is int"), "{e}");
        let bad = Schema::ycsb("user-table", "field", 1);
        assert!(create("ks", &bad, Made::Ycsb).is_err());
    }

    #[test]
    fn values_keep_any_bytes() {
        for kind in [Kind::Text, Kind::Ascii, Kind::Blob] {
            for v in [
                &b"plain"[..],
                &[0xff, 0x00],
                "\u{e9}".as_bytes(),
                &[0x01, b'a'],
            ] {
                let mut stored = Vec::new();
                kind.store(v, &mut stored);
                match kind {
                    Kind::Text => assert!(std::str::from_utf8(&stored).is_ok()),
                    Kind::Ascii => assert!(stored.is_ascii()),
                    Kind::Blob => assert_eq!(stored, v),
                }
                assert_eq!(kind.load(&stored), v, "{kind:?}");
            }
        }
        let mut stored = Vec::new();
        Kind::Text.store(b"ycsb value", &mut stored);
        assert_eq!(stored, b"ycsb value");
    }
}
