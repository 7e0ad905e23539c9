//! The vote and LIOPS workloads' tables on MySQL (their operations are
//! [`crate::sql::SqlOps`], in the parent module).

use mysql_async::prelude::Queryable;
use sojourn_core::backend::{Backend, BackendError};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::liops::{Liops, LiopsConfig};
use sojourn_core::workload::vote::{Vote, VoteVariant};

use super::{MysqlBackend, ER_BAD_FIELD_ERROR, ER_NO_SUCH_TABLE};
use crate::sql::{self, Dialect};
use crate::{liops_sql, vote_cache, vote_sql};

impl Runs<Vote> for MysqlBackend {
    async fn prepare_tables(&self, variant: &VoteVariant, drop: bool) -> Result<(), BackendError> {
        self.setup_batch(&vote_sql::setup(Dialect::Mysql, *variant, drop))
            .await?;
        vote_cache::prepare(self.inner.cache.as_ref(), drop).await
    }
    async fn tables_empty(&self, variant: &VoteVariant) -> Result<Option<bool>, BackendError> {
        let variant = *variant;
        let empty = self.nothing_in(vote_sql::ANY_ARTICLE).await?;
        if variant == VoteVariant::Precomputed {
            let mut conn = self.setup_conn().await?;
            let probe: Result<Option<i64>, _> = conn.query_first(vote_sql::VOTES_COLUMN).await;
            let _ = conn.disconnect().await;
            match probe {
                Ok(_) => {}
                Err(mysql_async::Error::Server(e)) if e.code == ER_NO_SUCH_TABLE => {}
                Err(mysql_async::Error::Server(e)) if e.code == ER_BAD_FIELD_ERROR => {
                    return Err(self.setup_error(vote_sql::made_for_join()));
                }
                Err(e) => return Err(self.setup_error(e)),
            }
        }
        Ok(empty)
    }
}

impl Runs<Liops> for MysqlBackend {
    async fn prepare_tables(&self, cfg: &LiopsConfig, drop: bool) -> Result<(), BackendError> {
        // No stored-procedure loop here: refused before anything is made.
        cfg.refuse_server_loop(&self.describe())?;
        self.setup_batch(&liops_sql::setup(Dialect::Mysql, cfg, drop))
            .await
    }
    async fn tables_empty(&self, cfg: &LiopsConfig) -> Result<Option<bool>, BackendError> {
        cfg.refuse_server_loop(&self.describe())?;
        self.nothing_in(&sql::any_row(&cfg.table(1))).await
    }
    async fn finish_load(&self, cfg: &LiopsConfig) -> Result<(), BackendError> {
        let mut conn = self.setup_conn().await?;
        let mut statements = Vec::new();
        for table in cfg.tables() {
            // MySQL has no CREATE INDEX IF NOT EXISTS: look first.
            let present: Result<Option<i64>, _> = conn
                .exec_first(
                    "SELECT COUNT(*) FROM information_schema.statistics \
                     WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ?",
                    (table.as_str(), liops_sql::index_name(&table)),
                )
                .await;
            match present {
                Ok(Some(n)) if n > 0 => {}
                Ok(_) => statements.push(liops_sql::create_index(Dialect::Mysql, &table)),
                Err(e) => {
                    let _ = conn.disconnect().await;
                    return Err(self.setup_error(e));
                }
            }
            statements.push(liops_sql::analyze(Dialect::Mysql, &table));
        }
        let _ = conn.disconnect().await;
        self.setup_batch(&statements).await
    }
}
