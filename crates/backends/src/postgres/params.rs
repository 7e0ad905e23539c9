//! The parameters both PostgreSQL clients bind: the key, field values
//! stored as `crate::sql` says, a scan's limit; and their order for each
//! operation.

use bytes::BytesMut;
use sojourn_core::backend::guard::Scan;
use sojourn_core::backend::FieldValue;
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};

use crate::text;

/// A parameter: the key, or a field value stored as [`crate::sql`] says
/// (as it is in a `bytea` column of a table made by another tool).
#[derive(Debug)]
pub(super) enum Param<'a> {
    Key(&'a str),
    Value(&'a [u8]),
    Limit(i64),
}

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match *self {
            Param::Key(key) => out.extend_from_slice(key.as_bytes()),
            Param::Value(v) if *ty == Type::BYTEA || text::is_plain(v) => out.extend_from_slice(v),
            Param::Value(v) => text::escape_into(v, out),
            Param::Limit(n) => return n.to_sql(ty, out),
        }
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        // The binary form of every text type is its bytes; a limit is int8.
        matches!(
            *ty,
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::BYTEA
        ) || <i64 as ToSql>::accepts(ty)
    }

    to_sql_checked!();
}

/// A scan's `LIMIT`.
pub(super) fn limit_of(scan: &Scan<'_>) -> i64 {
    i64::try_from(scan.count).unwrap_or(i64::MAX)
}

/// An update's parameters: the values set, then the key.
pub(super) fn update_params<'p>(
    key: &'p str,
    values: &'p [FieldValue],
) -> impl ExactSizeIterator<Item = Param<'p>> {
    (0..values.len() + 1).map(move |i| match values.get(i) {
        Some(v) => Param::Value(&v.value),
        None => Param::Key(key),
    })
}

/// An insert's parameters: the key, then the values.
pub(super) fn insert_params<'p>(
    key: &'p str,
    values: &'p [FieldValue],
) -> impl ExactSizeIterator<Item = Param<'p>> {
    (0..values.len() + 1).map(move |i| match i.checked_sub(1) {
        None => Param::Key(key),
        Some(v) => Param::Value(&values[v].value),
    })
}
