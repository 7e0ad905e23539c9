//! pgbench's scripts on SQLite: each command run on the connection's own
//! thread as the YCSB operations are, its parameters bound by position as
//! text (SQLite's column affinity makes `aid = '5'` the integer compare
//! it is on PostgreSQL), a simple query's text run as the statements it
//! holds; pgbench's tables in SQLite's dialect.

use sojourn_core::backend::guard::call;
use sojourn_core::backend::{BackendError, Status};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::script::{
    Dialect, Kept, Protocol, Query, Script, ScriptConnection, Tables,
};

use super::command::Command;
use super::{open, SqliteBackend, SqliteConnection};

impl SqliteConnection {
    async fn script_now(&mut self, q: &Query<'_>, kept: &mut Kept) -> rusqlite::Result<Status> {
        let (status, request) = self
            .call(|r| {
                let c = r.script.get_or_insert_with(|| {
                    Box::new(Command {
                        text: String::new(),
                        params: Vec::new(),
                        simple: false,
                        keep: false,
                        every: false,
                        kept: Kept::default(),
                    })
                });
                c.text.clear();
                c.text.push_str(q.text);
                c.params.clear();
                c.params
                    .extend(q.params.iter().map(|p| p.map(str::to_string)));
                c.simple = q.protocol == Protocol::Simple;
                c.keep = q.keep.is_some();
                c.every = q.keep.is_some_and(|k| k.every_row());
                r.scripted = true;
            })
            .await?;
        if let Some(c) = request.script.as_mut() {
            std::mem::swap(kept, &mut c.kept);
        }
        Ok(status)
    }
}

impl ScriptConnection for SqliteConnection {
    async fn execute(&mut self, q: &Query<'_>, kept: &mut Kept) -> Status {
        call(self, async |c| c.script_now(q, kept).await).await
    }

    async fn abandon_transaction(&mut self) {
        let q = Query {
            text: "ROLLBACK",
            params: sojourn_core::workload::script::Params::NONE,
            protocol: Protocol::Simple,
            id: usize::MAX,
            keep: None,
        };
        // Nothing open is an error here, and harmless.
        let _ = self.script_now(&q, &mut Kept::default()).await;
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
}

impl SqliteBackend {
    /// Each statement in order, on a connection of its own.
    fn setup_batch(&self, statements: &[String]) -> Result<(), BackendError> {
        let conn = open(self.path(), false).map_err(|e| self.setup_error(e))?;
        for sql in statements {
            conn.execute_batch(sql).map_err(|e| self.setup_error(e))?;
        }
        Ok(())
    }
}

impl Runs<Script> for SqliteBackend {
    async fn prepare_tables(&self, t: &Tables, _drop: bool) -> Result<(), BackendError> {
        let conn = open(self.path(), true).map_err(|e| self.setup_error(e))?;
        let t = t.sql(Dialect::Sqlite);
        for sql in t.drop.iter().chain(&t.create) {
            conn.execute_batch(sql).map_err(|e| self.setup_error(e))?;
        }
        Ok(())
    }

    async fn tables_empty(&self, t: &Tables) -> Result<Option<bool>, BackendError> {
        if !self.path().exists() {
            return Ok(Some(true));
        }
        let conn = open(self.path(), false).map_err(|e| self.connect_error(e))?;
        match conn.query_row(&t.sql(Dialect::Sqlite).any_row, [], |r| r.get::<_, i64>(0)) {
            Ok(any) => Ok(Some(any == 0)),
            Err(e) if e.to_string().contains("no such table") => Ok(Some(true)),
            Err(e) => Err(self.setup_error(e)),
        }
    }

    async fn finish_load(&self, t: &Tables) -> Result<(), BackendError> {
        self.setup_batch(&t.sql(Dialect::Sqlite).finish)
    }

    async fn before_run(&self, t: &Tables) -> Result<(), BackendError> {
        self.setup_batch(&t.sql(Dialect::Sqlite).vacuum)
    }

    async fn records(&self, t: &Tables) -> Result<Option<u64>, BackendError> {
        let conn = open(self.path(), false).map_err(|e| self.connect_error(e))?;
        let sql = t.sql(Dialect::Sqlite);
        conn.query_row(&sql.scale, [], |r| r.get::<_, i64>(0))
            .map(|n| Some(n.max(0) as u64))
            .map_err(|e| match e.to_string() {
                t if t.contains("no such table") => {
                    self.setup_error(format!("{t}: {}", sql.not_loaded))
                }
                t => self.setup_error(t),
            })
    }
}
