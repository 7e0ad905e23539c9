//! The vote and LIOPS workloads on PostgreSQL: their statements, their
//! operations (through tokio-postgres, which serves everything but YCSB's
//! five on the default topology) and the tables they set up.

use std::fmt::Write as _;
use std::time::Duration;

use futures_util::SinkExt;
use sojourn_core::backend::{BackendError, Status};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::liops::{
    Liops, LiopsConfig, LiopsRow, LoopIn, ServerLoop, ServerLoopOutcome,
};
use sojourn_core::workload::vote::{ArticleRow, Vote, VoteVariant};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};

use super::error::PgResult;
use super::sqlstate::error_text;
use super::statements::Statements;
use super::{PostgresBackend, PostgresConnection};
use crate::sql::{self, sql_connection, Dialect, SqlOps, SETUP_TIMEOUT};
use crate::{liops_sql, vote_cache, vote_sql};

/// The vote workload's statements.
#[derive(Copy, Clone)]
enum VoteStatement {
    InsertArticle = 0,
    Vote = 1,
    Read = 2,
}

impl VoteStatement {
    fn sql(self, variant: VoteVariant) -> String {
        let d = Dialect::Postgres;
        match (self, variant) {
            (VoteStatement::InsertArticle, _) => vote_sql::insert_article(d),
            (VoteStatement::Vote, VoteVariant::Join) => vote_sql::insert_vote(d),
            (VoteStatement::Vote, VoteVariant::Precomputed) => {
                vote_sql::PG_VOTE_AND_COUNT.to_string()
            }
            (VoteStatement::Read, v) => vote_sql::read_article(d, v),
        }
    }
}

/// A vote statement prepared on `client` on first use.
async fn vote_statement<'s>(
    client: &Client,
    statements: &'s mut Statements,
    which: VoteStatement,
    variant: VoteVariant,
) -> Result<&'s Statement, tokio_postgres::Error> {
    let slot = &mut statements.vote[which as usize];
    if !matches!(slot, Some((v, _)) if *v == variant) {
        let stmt = client.prepare(&which.sql(variant)).await?;
        *slot = Some((variant, stmt));
    }
    Ok(&slot.as_ref().expect("prepared above").1)
}

impl PostgresConnection {
    async fn run_vote(
        &mut self,
        which: VoteStatement,
        variant: VoteVariant,
        params: &[&(dyn ToSql + Sync)],
    ) -> PgResult {
        let (client, statements, _) = self.session().await?;
        let stmt = vote_statement(client, statements, which, variant).await?;
        let changed = client.execute(stmt, params).await?;
        // A precomputed vote for a missing article updates no count.
        Ok(Status::found(changed > 0))
    }
}

impl SqlOps for PostgresConnection {
    fn load_timeout(&self) -> Duration {
        self.inner.target.timeout.max(liops_sql::LOAD_BATCH_TIMEOUT)
    }

    fn vote_cache(&mut self) -> Option<&mut vote_cache::Cached> {
        self.cache.as_mut()
    }

    async fn insert_article_now(&mut self, variant: VoteVariant, id: u64, title: &str) -> PgResult {
        let id = id as i64;
        self.run_vote(VoteStatement::InsertArticle, variant, &[&id, &title])
            .await
    }

    async fn vote_now(&mut self, variant: VoteVariant, article: u64, user: u64) -> PgResult {
        let (article, user) = (article as i64, user as i64);
        self.run_vote(VoteStatement::Vote, variant, &[&article, &user])
            .await
    }

    async fn article_now(
        &mut self,
        variant: VoteVariant,
        id: u64,
        out: &mut ArticleRow,
    ) -> PgResult {
        let id = id as i64;
        let (client, statements, _) = self.session().await?;
        let stmt = vote_statement(client, statements, VoteStatement::Read, variant).await?;
        let Some(row) = client.query_opt(stmt, &[&id]).await? else {
            return Ok(Status::NotFound);
        };
        let (got, title, votes): (i64, &str, i64) =
            (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        out.id = got as u64;
        out.title.clear();
        out.title.push_str(title);
        out.votes = votes as u64;
        Ok(Status::Ok)
    }

    async fn liops_load_now(&mut self, table: &str, rows: &[LiopsRow]) -> PgResult {
        let (client, _, _) = self.session().await?;
        // Text COPY; `filler` is char(1024), which the server pads.
        let mut data = String::with_capacity(rows.len() * 32);
        for r in rows {
            let _ = writeln!(data, "{}\t{}\tx", r.key, r.scratch);
        }
        let sink = client
            .copy_in::<_, bytes::Bytes>(&format!(
                "COPY {table} (mykey, scratch, filler) FROM STDIN"
            ))
            .await?;
        let mut sink = std::pin::pin!(sink);
        sink.send(bytes::Bytes::from(data)).await?;
        let copied = sink.as_mut().finish().await?;
        Ok(if copied == rows.len() as u64 {
            Status::Ok
        } else {
            Status::UnexpectedState
        })
    }

    async fn liops_now(
        &mut self,
        table: &str,
        update: bool,
        (lo, hi): (u64, u64),
        rows: &mut u64,
    ) -> PgResult {
        let (client, statements, _) = self.session().await?;
        if !matches!(&statements.liops, Some((t, _, _)) if t == table) {
            let d = Dialect::Postgres;
            let select = client.prepare(&liops_sql::select(d, table)).await?;
            let change = client.prepare(&liops_sql::update(d, table)).await?;
            statements.liops = Some((table.to_string(), select, change));
        }
        let (_, select, change) = statements.liops.as_ref().expect("prepared above");
        let (lo, hi) = (lo as i64, hi as i64);
        *rows = if update {
            client.execute(change, &[&lo, &hi]).await?
        } else {
            // The sum (numeric) is computed by the server, never decoded.
            let n: i64 = client.query_one(select, &[&lo, &hi]).await?.try_get(0)?;
            n as u64
        };
        Ok(Status::Ok)
    }

    async fn liops_server_loop_now(
        &mut self,
        table: &str,
        spec: &ServerLoop,
        out: &mut ServerLoopOutcome,
    ) -> PgResult {
        let (client, _, _) = self.session().await?;
        // A loop whose client has gone (Ctrl+C) ends within a second
        // rather than at RUN_TIME: PostgreSQL 14+ checks the socket while
        // a statement runs. Older servers lack the setting and run on.
        let _ = client
            .batch_execute("SET client_connection_check_interval = 1000")
            .await;
        let max = spec.max_statements.map(|n| n.min(i64::MAX as u64) as i64);
        let row = client
            .query_one(
                &liops_sql::call_loop(table),
                &[
                    &spec.duration.map(|d| d.as_secs_f64()),
                    &spec.warmup.as_secs_f64(),
                    &max,
                    &(spec.update_pct as i32),
                    &(spec.work_unit as i64),
                    &(spec.update_work_unit as i64),
                    &(spec.scale as i64),
                    &spec.seed,
                ],
            )
            .await?;
        let count = |name: &str| row.try_get::<_, i64>(name).map(|n| n.max(0) as u64);
        out.loop_iterations = count("loop_iterations")?;
        out.sql_selects = count("sql_selects")?;
        out.sql_updates = count("sql_updates")?;
        out.times.clear();
        for (column, update) in [("select_times", false), ("update_times", true)] {
            let times: Vec<i64> = row.try_get(column)?;
            if let Err(why) = liops_sql::decode_times(&times, update, &mut out.times) {
                self.last_error = Some(format!("the LIOPS loop's {column}: {why}"));
                return Ok(Status::UnexpectedState);
            }
        }
        Ok(Status::Ok)
    }
}

sql_connection!(PostgresConnection);

impl Runs<Vote> for PostgresBackend {
    async fn prepare_tables(&self, variant: &VoteVariant, drop: bool) -> Result<(), BackendError> {
        self.setup_batch(&vote_sql::setup(Dialect::Postgres, *variant, drop))
            .await?;
        vote_cache::prepare(self.inner.cache.as_ref(), drop).await
    }
    async fn tables_empty(&self, variant: &VoteVariant) -> Result<Option<bool>, BackendError> {
        let variant = *variant;
        let live = self.setup_client().await?;
        let mut empty = self.nothing_in(&live, vote_sql::ANY_ARTICLE).await;
        if empty.is_ok() && variant == VoteVariant::Precomputed {
            // Tables there (or none at all): can they serve this variant?
            match live.client.execute(vote_sql::VOTES_COLUMN, &[]).await {
                Err(e) if e.code() == Some(&SqlState::UNDEFINED_COLUMN) => {
                    empty = Err(self.setup_error(vote_sql::made_for_join()));
                }
                Err(e) if e.code() != Some(&SqlState::UNDEFINED_TABLE) => {
                    empty = Err(self.setup_error(error_text(&e)));
                }
                _ => {}
            }
        }
        live.publish_stats(SETUP_TIMEOUT).await;
        empty
    }
}

impl Runs<Liops> for PostgresBackend {
    async fn prepare_tables(&self, cfg: &LiopsConfig, drop: bool) -> Result<(), BackendError> {
        let mut statements = liops_sql::setup(Dialect::Postgres, cfg, drop);
        // The in-server loop (`liops.loop=server`) of each table, made by
        // every load whichever loop it is for, and replaced by the next.
        for table in cfg.tables() {
            if drop {
                statements.push(liops_sql::drop_loop(&table));
            }
            statements.push(liops_sql::create_loop(&table));
        }
        self.setup_batch(&statements).await
    }
    async fn tables_empty(&self, cfg: &LiopsConfig) -> Result<Option<bool>, BackendError> {
        let live = self.setup_client().await?;
        let mut empty = self.nothing_in(&live, &sql::any_row(&cfg.table(1))).await;
        if matches!(empty, Ok(Some(false))) && cfg.loop_in == LoopIn::Server {
            // Tables loaded before the loop's procedure existed get it now
            // rather than fail every session's call.
            for table in cfg.tables() {
                let made = async {
                    let row = live
                        .client
                        .query_one(&liops_sql::loop_exists(&table), &[])
                        .await?;
                    if !row.try_get::<_, bool>(0)? {
                        live.client
                            .batch_execute(&liops_sql::create_loop(&table))
                            .await?;
                    }
                    Ok::<_, tokio_postgres::Error>(())
                };
                if let Err(e) = made.await {
                    empty = Err(self.setup_error(error_text(&e)));
                    break;
                }
            }
        }
        live.publish_stats(SETUP_TIMEOUT).await;
        empty
    }
    async fn finish_load(&self, cfg: &LiopsConfig) -> Result<(), BackendError> {
        let mut statements = Vec::new();
        for table in cfg.tables() {
            statements.push(liops_sql::create_index(Dialect::Postgres, &table));
            statements.push(liops_sql::analyze(Dialect::Postgres, &table));
        }
        self.setup_batch(&statements).await
    }
}
