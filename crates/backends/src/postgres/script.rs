//! pgbench's scripts on PostgreSQL: each SQL command as pgbench sends it
//! (`-M simple`: one query of text; `extended`: parse, bind and execute of
//! an unnamed statement in one round trip; `prepared`: each statement
//! prepared once per connection), its parameters and kept results as
//! text, as libpq passes them; and pgbench's tables set up by the SQL the
//! workload gives (this module knows nothing of pgbench).

use bytes::BytesMut;
use futures_util::{pin_mut, TryStreamExt};
use sojourn_core::backend::guard::Settle;
use sojourn_core::backend::{BackendError, Status};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::script::{
    Dialect, Keep, Kept, KeptResult, Protocol, Query, Script, ScriptConnection, Tables, TablesSql,
};
use tokio_postgres::types::{to_sql_checked, Format, IsNull, Kind, ToSql, Type};
use tokio_postgres::{Client, Row, SimpleQueryMessage};

use super::error::PgResult;
use super::link::Link;
use super::sqlstate::error_text;
use super::{PostgresBackend, PostgresConnection};
use crate::sql::SETUP_TIMEOUT;

/// A parameter as libpq's text parameters are: no type (the server infers
/// it), the value's text, or NULL.
#[derive(Debug)]
struct Text<'a>(Option<&'a str>);

impl ToSql for Text<'_> {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Some(t) => {
                out.extend_from_slice(t.as_bytes());
                Ok(IsNull::No)
            }
            None => Ok(IsNull::Yes),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, _: &Type) -> Format {
        Format::Text
    }

    to_sql_checked!();
}

/// No type given: the server infers each parameter's, as it does for
/// libpq's `PQsendQueryParams` with no types.
fn unspecified() -> Type {
    Type::new("unspecified".into(), 0, Kind::Pseudo, "pg_catalog".into())
}

impl PostgresConnection {
    async fn script_now(&mut self, q: &Query<'_>, kept: &mut Kept) -> PgResult {
        if let Some((lean, _)) = self.lean().await? {
            lean.script(q, kept).await?;
            return Ok(Status::Ok);
        }
        // Boxed: the other client's state would size every call's future.
        Box::pin(self.script_by_driver(q, kept)).await
    }

    /// [`Self::script_now`] through tokio-postgres (TLS, several hosts,
    /// shared sockets).
    async fn script_by_driver(&mut self, q: &Query<'_>, kept: &mut Kept) -> PgResult {
        kept.results.clear();
        let (client, statements, _) = self.session().await?;
        let params: Vec<Text<'_>> = q.params.iter().map(Text).collect();
        match q.protocol {
            Protocol::Simple => {
                let messages = client.simple_query(q.text).await?;
                if let Some(keep) = q.keep {
                    keep_simple(&messages, kept, keep.every_row());
                }
            }
            Protocol::Extended => {
                let typed = params
                    .iter()
                    .map(|p| (p as &(dyn ToSql + Sync), unspecified()));
                let rows = client.query_typed_raw(q.text, typed).await?;
                collect(rows, q.keep, kept).await?;
            }
            Protocol::Prepared => {
                let stmt = match statements.script.get(q.id).and_then(Option::as_ref) {
                    Some(s) => s.clone(),
                    None => {
                        let s = client.prepare(q.text).await?;
                        if statements.script.len() <= q.id {
                            statements.script.resize(q.id + 1, None);
                        }
                        statements.script[q.id] = Some(s.clone());
                        s
                    }
                };
                let refs = params.iter().map(|p| p as &(dyn ToSql + Sync));
                if q.keep.is_some() {
                    let rows = client.query_raw(&stmt, refs).await?;
                    collect(rows, q.keep, kept).await?;
                } else {
                    client.execute_raw(&stmt, refs).await?;
                }
            }
        }
        Ok(Status::Ok)
    }

    /// [`ScriptConnection::queue`] on the lean client (the only one that
    /// pipelines, see `pipelines`).
    async fn queue_now(&mut self, q: &Query<'_>) -> PgResult {
        match self.lean().await? {
            Some((lean, _)) => lean.queue(q).await?,
            None => return Ok(Status::NotImplemented),
        }
        Ok(Status::Ok)
    }

    async fn end_pipeline_now(&mut self, done: &mut usize) -> PgResult {
        match self.lean().await? {
            Some((lean, _)) => lean.end_pipeline(done).await?,
            None => return Ok(Status::NotImplemented),
        }
        Ok(Status::Ok)
    }

    async fn rollback(&mut self) {
        if let Ok(Some((lean, _))) = self.lean().await {
            lean.discard_pipeline();
            let _ = lean.simple("ROLLBACK").await;
            return;
        }
        if let Ok((client, _, _)) = self.session().await {
            // Nothing open is a warning, not an error: either way the
            // next transaction starts clean.
            let _ = client.batch_execute("ROLLBACK").await;
        }
    }
}

/// Keep the last row (with `every`, all rows) of each result of a simple
/// query.
fn keep_simple(messages: &[SimpleQueryMessage], kept: &mut Kept, every: bool) {
    let mut current: Option<KeptResult> = None;
    for m in messages {
        match m {
            SimpleQueryMessage::RowDescription(cols) => {
                current = Some(KeptResult {
                    columns: cols.iter().map(|c| c.name().to_string()).collect(),
                    ..KeptResult::default()
                });
            }
            SimpleQueryMessage::Row(row) => {
                let r = current.get_or_insert_with(|| KeptResult {
                    columns: row.columns().iter().map(|c| c.name().to_string()).collect(),
                    ..KeptResult::default()
                });
                let values = (0..row.len())
                    .map(|i| row.get(i).map(str::to_string))
                    .collect();
                r.add_row(values, every);
            }
            SimpleQueryMessage::CommandComplete(_) => {
                kept.results.push(current.take().unwrap_or_default());
            }
            _ => {}
        }
    }
}

/// Read every row of an extended query; where results are kept, the last
/// row's values as text (every row's, where all are kept).
async fn collect(
    rows: tokio_postgres::RowStream,
    keep: Option<&Keep>,
    kept: &mut Kept,
) -> Result<(), tokio_postgres::Error> {
    pin_mut!(rows);
    let mut result = KeptResult::default();
    let mut last: Option<Row> = None;
    let every = keep.is_some_and(Keep::every_row);
    while let Some(row) = rows.try_next().await? {
        result.rows += 1;
        if every {
            result
                .all_rows
                .push((0..row.len()).map(|i| text_of(&row, i)).collect());
        }
        last = Some(row);
    }
    if keep.is_some() {
        if let Some(row) = last {
            result.columns = row.columns().iter().map(|c| c.name().to_string()).collect();
            result.last_row = Some((0..row.len()).map(|i| text_of(&row, i)).collect());
        }
        kept.results.push(result);
    }
    Ok(())
}

/// A column of `row` as the text the server would have sent: the types a
/// script keeps in variables (integers, floats, numbers as text,
/// booleans, text); any other type is read as text if the driver allows
/// it, else kept as NULL.
fn text_of(row: &Row, i: usize) -> Option<String> {
    let ty = row.columns()[i].type_();
    macro_rules! as_text {
        ($t:ty) => {
            row.try_get::<_, Option<$t>>(i)
                .ok()
                .flatten()
                .map(|v| v.to_string())
        };
    }
    match *ty {
        Type::INT2 => as_text!(i16),
        Type::INT4 => as_text!(i32),
        Type::INT8 => as_text!(i64),
        Type::FLOAT4 => as_text!(f32),
        Type::FLOAT8 => as_text!(f64),
        Type::OID => as_text!(u32),
        Type::BOOL => row.try_get::<_, Option<bool>>(i).ok().flatten().map(|b| {
            if b {
                "t".into()
            } else {
                "f".into()
            }
        }),
        _ => row.try_get::<_, Option<String>>(i).ok().flatten(),
    }
}

impl ScriptConnection for PostgresConnection {
    async fn execute(&mut self, q: &Query<'_>, kept: &mut Kept) -> Status {
        sojourn_core::backend::guard::call(self, async |c| c.script_now(q, kept).await).await
    }

    async fn abandon_transaction(&mut self) {
        self.rollback().await
    }

    /// The words end with the SQLSTATE (see `sqlstate`): 40001 is a
    /// serialization failure, 40P01 a deadlock.
    fn conflicted(&mut self) -> bool {
        self.failure_text()
            .as_deref()
            .and_then(super::sqlstate::sqlstate)
            .is_some_and(|code| code == "40001" || code == "40P01")
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    /// The lean client pipelines as libpq does; tokio-postgres (TLS,
    /// several hosts, shared sockets) runs each command on its own.
    fn pipelines(&self) -> bool {
        matches!(self.link, Link::Lean { .. })
    }

    async fn queue(&mut self, q: &Query<'_>) -> Status {
        sojourn_core::backend::guard::call(self, async |c| c.queue_now(q).await).await
    }

    async fn end_pipeline(&mut self) -> (usize, Status) {
        let mut done = 0;
        let status =
            sojourn_core::backend::guard::call(self, async |c| c.end_pipeline_now(&mut done).await)
                .await;
        (done, status)
    }
}

impl Runs<Script> for PostgresBackend {
    /// pgbench's `-i` drops the tables first, always: a load refuses
    /// tables that hold data, so only empty ones (a load that failed)
    /// go here.
    async fn prepare_tables(&self, t: &Tables, _drop: bool) -> Result<(), BackendError> {
        let t = t.sql(Dialect::Postgres);
        let statements: Vec<String> = t.drop.iter().chain(&t.create).cloned().collect();
        self.setup_batch(&statements).await
    }

    async fn tables_empty(&self, t: &Tables) -> Result<Option<bool>, BackendError> {
        let live = self.setup_client().await?;
        let empty = self
            .nothing_in(&live, &t.sql(Dialect::Postgres).any_row)
            .await;
        live.publish_stats(SETUP_TIMEOUT).await;
        empty
    }

    async fn finish_load(&self, t: &Tables) -> Result<(), BackendError> {
        self.setup_batch(&t.sql(Dialect::Postgres).finish).await
    }

    async fn before_run(&self, t: &Tables) -> Result<(), BackendError> {
        self.setup_batch(&t.sql(Dialect::Postgres).vacuum).await
    }

    async fn records(&self, t: &Tables) -> Result<Option<u64>, BackendError> {
        let live = self.setup_client().await?;
        let n = scale_of(&live.client, &t.sql(Dialect::Postgres)).await;
        live.publish_stats(SETUP_TIMEOUT).await;
        n.map_err(|e| self.setup_error(e))
    }
}

async fn scale_of(client: &Client, sql: &TablesSql) -> Result<Option<u64>, String> {
    match client.query_one(&sql.scale, &[]).await {
        Ok(row) => {
            let n: i64 = row.try_get(0).map_err(|e| e.to_string())?;
            Ok(Some(n.max(0) as u64))
        }
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
            Err(format!("{}: {}", error_text(&e), sql.not_loaded))
        }
        Err(e) => Err(error_text(&e)),
    }
}
