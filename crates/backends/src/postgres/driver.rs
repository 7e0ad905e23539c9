//! YCSB's five operations through tokio-postgres, for the connections the
//! lean client does not serve (TLS, several hosts, shared sockets), and
//! the parameters both clients bind. The bodies in `postgres.rs` reach
//! these through a box (see its `Operations` impl for why).

use futures_util::TryStreamExt;
use sojourn_core::backend::guard::{Read, Scan};
use sojourn_core::backend::{FieldValue, Row, Status};
use tokio_postgres::types::{FromSql, Type};

use super::error::PgResult;
use super::params::{insert_params, limit_of, update_params, Param};
use super::PostgresConnection;
use crate::shapes::Op;
use crate::sql::{self, Dialect};
use crate::text;

/// A column's raw bytes, whatever its type (`text` in binary format is its
/// UTF-8 bytes).
struct Raw<'a>(&'a [u8]);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(
        _ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw))
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }
}

fn push_fields(
    row: &tokio_postgres::Row,
    first_column: usize,
    fields: &[usize],
    out: &mut Vec<FieldValue>,
) -> Result<(), tokio_postgres::Error> {
    for (i, &field) in fields.iter().enumerate() {
        if let Some(Raw(stored)) = row.try_get::<_, Option<Raw<'_>>>(first_column + i)? {
            out.push(text::decoded_field(field, stored));
        }
    }
    Ok(())
}

impl PostgresConnection {
    pub(super) async fn driver_read(&mut self, read: Read<'_>) -> PgResult {
        let (client, statements, layout) = self.session().await?;
        let columns = layout.columns(read.fields);
        let stmt = statements.shaped(client, layout, Op::Read, columns).await?;
        match client.query_opt(stmt, &[&Param::Key(read.key)]).await? {
            None => Ok(Status::NotFound),
            Some(row) => {
                push_fields(&row, 0, columns, read.out)?;
                Ok(Status::Ok)
            }
        }
    }

    pub(super) async fn driver_scan(&mut self, scan: Scan<'_>) -> PgResult {
        let (client, statements, layout) = self.session().await?;
        let columns = layout.columns(scan.fields);
        let stmt = statements.shaped(client, layout, Op::Scan, columns).await?;
        let rows = client
            .query_raw(
                stmt,
                [Param::Key(scan.start_key), Param::Limit(limit_of(&scan))],
            )
            .await?;
        let mut rows = std::pin::pin!(rows);
        while let Some(row) = rows.try_next().await? {
            let key = match row.try_get::<_, Option<Raw<'_>>>(0)? {
                Some(Raw(k)) => String::from_utf8_lossy(k).into_owned(),
                None => String::new(),
            };
            let mut fields = Vec::with_capacity(columns.len());
            push_fields(&row, 1, columns, &mut fields)?;
            scan.out.push(Row { key, fields });
        }
        Ok(Status::Ok)
    }

    pub(super) async fn driver_update(&mut self, key: &str, values: &[FieldValue]) -> PgResult {
        let (client, statements, layout) = self.session().await?;
        if values.is_empty() {
            // Nothing to set: the answer is only whether the record exists.
            let stmt = statements.shaped(client, layout, Op::Read, &[]).await?;
            let found = client.query_opt(stmt, &[&Param::Key(key)]).await?;
            return Ok(Status::found(found.is_some()));
        }
        layout.write(values);
        let stmt = statements
            .shaped(client, layout, Op::Update, layout.written())
            .await?;
        let changed = client.execute_raw(stmt, update_params(key, values)).await?;
        Ok(Status::found(changed > 0))
    }

    pub(super) async fn driver_insert(&mut self, key: &str, values: &[FieldValue]) -> PgResult {
        let (client, statements, layout) = self.session().await?;
        layout.write(values);
        let stmt = statements
            .shaped(client, layout, Op::Insert, layout.written())
            .await?;
        client.execute_raw(stmt, insert_params(key, values)).await?;
        Ok(Status::Ok)
    }

    pub(super) async fn driver_delete(&mut self, key: &str) -> PgResult {
        let (client, statements, layout) = self.session().await?;
        if statements.delete.is_none() {
            let sql = sql::delete(Dialect::Postgres, layout.table());
            statements.delete = Some(client.prepare(&sql).await?);
        }
        let Some(stmt) = &statements.delete else {
            return Ok(Status::Error);
        };
        let changed = client.execute(stmt, &[&Param::Key(key)]).await?;
        Ok(Status::found(changed > 0))
    }
}
