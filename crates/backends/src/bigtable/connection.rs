//! A connection of the Bigtable backend: YCSB's operations as `ReadRows`,
//! `MutateRow` and `CheckAndMutateRow` calls on its own HTTP/2 connection.

use std::sync::Arc;

use http::Uri;
use sojourn_core::backend::guard::{self, Guard, Operations, Read, Scan, Settle, Timer};
use sojourn_core::backend::{FieldValue, Fields, Row, Schema, Status};

use super::channel::{Channel, Failure};
use super::filters::Filters;
use super::proto::{self, Rows};
use super::rows::Assembler;

pub(super) struct Uris {
    pub(super) read_rows: Uri,
    pub(super) mutate_row: Uri,
    pub(super) check_and_mutate_row: Uri,
}

/// A connection of [`BigtableBackend`]: one HTTP/2 connection.
pub struct BigtableConnection {
    pub(super) link: Channel,
    pub(super) uris: Uris,
    /// `table_name` (field 1 of every data request), encoded.
    pub(super) table: Vec<u8>,
    pub(super) filters: Filters,
    pub(super) family: String,
    pub(super) schema: Arc<Schema>,
    pub(super) check_exists: bool,
    pub(super) guard: Guard,
    pub(super) timer: Timer,
    pub(super) assembler: Assembler,
    pub(super) last_error: Option<String>,
}

impl BigtableConnection {
    /// The most recent error on this connection, for diagnosing `ERROR`
    /// statuses.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// `ReadRows`, calling `row` with each committed row.
    pub(super) async fn read_rows(
        &mut self,
        rows: Rows<'_>,
        limit: i64,
        fields: Option<Fields<'_>>,
        mut row: impl FnMut(&mut Assembler),
    ) -> Result<(), Failure> {
        let BigtableConnection {
            link,
            uris,
            table,
            filters,
            family,
            schema,
            assembler,
            ..
        } = self;
        let filter = match fields {
            Some(fields) => filters.get(fields, family, schema),
            None => &filters.exists,
        };
        let result = link
            .call(
                &uris.read_rows,
                |buf| proto::read_rows(table, rows, filter, limit, buf),
                |msg| {
                    proto::for_each_chunk(msg, |chunk| {
                        if assembler.feed(chunk, family, schema) {
                            row(assembler);
                        }
                    })
                },
            )
            .await;
        assembler.reset_row();
        result
    }

    /// `MutateRow`, or `CheckAndMutateRow` (applied only if the row exists)
    /// with `check`: an optional `DeleteFromRow`, then a `SetCell` per value.
    pub(super) async fn mutate(
        &mut self,
        key: &str,
        check: bool,
        delete_row: bool,
        values: &[FieldValue],
    ) -> Result<Status, Failure> {
        let BigtableConnection {
            link,
            uris,
            table,
            family,
            schema,
            ..
        } = self;
        let uri = if check {
            &uris.check_and_mutate_row
        } else {
            &uris.mutate_row
        };
        let mutations = delete_row
            .then_some(proto::Mutation::DeleteRow)
            .into_iter()
            .chain(values.iter().map(|v| proto::Mutation::Set {
                family: family.as_bytes(),
                qualifier: schema.field_names[v.field].as_bytes(),
                value: &v.value,
            }));
        let mut applied = !check;
        link.call(
            uri,
            |buf| proto::mutate_row(table, key.as_bytes(), check, mutations, buf),
            |msg| {
                if check {
                    applied = proto::predicate_matched(msg)?;
                }
                Ok(())
            },
        )
        .await?;
        Ok(Status::found(applied))
    }
}

impl Operations for BigtableConnection {
    async fn insert_op(&mut self, key: &str, values: &[FieldValue]) -> Result<Status, Failure> {
        self.mutate(key, false, true, values).await
    }

    async fn delete_op(&mut self, key: &str) -> Result<Status, Failure> {
        self.mutate(key, self.check_exists, true, &[]).await
    }

    async fn read_op(&mut self, read: Read<'_>) -> Result<Status, Failure> {
        let Read { key, fields, out } = read;
        let mut found = false;
        self.read_rows(Rows::Key(key.as_bytes()), 1, Some(fields), |a| {
            found = true;
            a.take_fields(fields, out);
        })
        .await?;
        Ok(Status::found(found))
    }

    async fn scan_op(&mut self, scan: Scan<'_>) -> Result<Status, Failure> {
        // rows_limit 0 would mean no limit.
        if scan.count == 0 {
            return Ok(Status::Ok);
        }
        let field_count = self.schema.field_count();
        let limit = i64::try_from(scan.count).unwrap_or(i64::MAX);
        self.read_rows(
            Rows::From(scan.start_key.as_bytes()),
            limit,
            Some(scan.fields),
            |a| {
                let mut row = Row {
                    key: String::from_utf8_lossy(&a.key).into_owned(),
                    fields: Vec::with_capacity(field_count),
                };
                a.take_fields(scan.fields, &mut row.fields);
                scan.out.push(row);
            },
        )
        .await?;
        Ok(Status::Ok)
    }

    async fn update_op(&mut self, key: &str, values: &[FieldValue]) -> Result<Status, Failure> {
        if !values.is_empty() {
            return self.mutate(key, self.check_exists, false, values).await;
        }
        if !self.check_exists {
            return Ok(Status::Ok);
        }
        // Bigtable refuses a mutation with nothing in it: ask whether the
        // row exists instead.
        let mut found = false;
        self.read_rows(Rows::Key(key.as_bytes()), 1, None, |_| found = true)
            .await?;
        Ok(Status::found(found))
    }
}

impl Settle for BigtableConnection {
    type Error = Failure;

    crate::settle::settle_by_fields!();

    fn settle(&mut self, failure: guard::Failure<Failure>) -> Status {
        let failure = match failure {
            guard::Failure::Failed(f) => f,
            guard::Failure::TimedOut(limit) => {
                // Out of time while connecting: the next attempts wait, as
                // after any failed attempt. A stalled call leaves the
                // connection, which a stalled server may bring back.
                if self.link.conn.is_none() {
                    self.link.backoff.failed();
                }
                Failure::Timeout(limit)
            }
        };
        self.last_error = Some(failure.to_string());
        Status::Error
    }
}
