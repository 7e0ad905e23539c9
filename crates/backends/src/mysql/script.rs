//! pgbench's scripts on MySQL and MariaDB, through the workers' own
//! client: `-M simple` sends a command's text as a text query, `extended`
//! prepares, executes and closes it each time, `prepared` prepares it once
//! per connection; parameters go as text (`?`, the server converting them
//! as it converts a quoted literal) and kept results come back as text.
//! MySQL prepares no transaction control and has no `END`, so `BEGIN`,
//! `START TRANSACTION`, `COMMIT`, `ROLLBACK` and `END` (sent as `COMMIT`)
//! go as text under every protocol. pgbench's tables are set up by the SQL
//! the workload gives in MySQL's dialect.

use sojourn_core::backend::guard::call;
use sojourn_core::backend::{BackendError, Status};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::script::{
    Dialect, Kept, KeptResult, Protocol, Query, Script, ScriptConnection, Tables,
};

use super::conn::{self, Answers, Param};
use super::row::Row;
use super::{prepared, MyResult, MysqlBackend, MysqlConnection, ER_NO_SUCH_TABLE};

/// What a command's answers leave for the script: per statement, its
/// columns, row count and (where kept) last row as text.
struct Keeper<'k> {
    keep: bool,
    /// Every row kept, not only the last.
    every: bool,
    all: Vec<Vec<Option<String>>>,
    kept: &'k mut Kept,
    rows: u64,
    last: Option<Vec<Option<String>>>,
}

impl Answers for Keeper<'_> {
    fn row(&mut self, row: Row<'_>) -> Result<(), conn::Error> {
        self.rows += 1;
        if self.keep {
            let values = row
                .cells()
                .map(|c| c.map(|c| c.text().map(|b| String::from_utf8_lossy(&b).into_owned())))
                .collect::<Result<Vec<_>, _>>()?;
            if self.every {
                self.all.push(values.clone());
            }
            self.last = Some(values);
        }
        Ok(())
    }

    fn end(&mut self, columns: &[String]) {
        let rows = std::mem::take(&mut self.rows);
        if self.keep {
            self.kept.results.push(KeptResult {
                columns: columns.to_vec(),
                last_row: self.last.take(),
                rows,
                all_rows: std::mem::take(&mut self.all),
            });
        }
    }
}

/// `text` as MySQL takes it: without the `;` that ends a script's command
/// (a prepared statement may not hold one), and pgbench's `END` as
/// `COMMIT`. Whether it is transaction control, which MySQL cannot
/// prepare.
fn for_mysql(text: &str) -> (&str, bool) {
    let text = text.trim_end().trim_end_matches(';').trim_end();
    let first = text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    match first.as_str() {
        // END [WORK | TRANSACTION]
        "end" => ("COMMIT", true),
        "begin" | "start" | "commit" | "rollback" => (text, true),
        _ => (text, false),
    }
}

impl MysqlConnection {
    async fn script_now(&mut self, q: &Query<'_>, kept: &mut Kept) -> MyResult {
        kept.results.clear();
        let (conn, texts, _) = self.session().await?;
        conn.name_columns();
        let keeper = Keeper {
            keep: q.keep.is_some(),
            every: q.keep.is_some_and(|k| k.every_row()),
            all: Vec::new(),
            kept,
            rows: 0,
            last: None,
        };
        let (text, control) = for_mysql(q.text);
        if q.protocol == Protocol::Simple || (control && q.params.is_empty()) {
            conn.query_answers(text, keeper).await?;
            return Ok(Status::Ok);
        }
        let params: Vec<Param<'_>> = q
            .params
            .iter()
            .map(|p| p.map_or(Param::Null, |t| Param::Bytes(t.as_bytes())))
            .collect();
        if q.protocol == Protocol::Extended {
            let stmt = conn.prepare(text).await?;
            let done = conn.execute_answers(&stmt, &params, keeper).await;
            conn.close_later(stmt);
            done?;
        } else {
            let stmt = prepared(&mut texts.by_text, conn, text).await?;
            conn.execute_answers(&stmt, &params, keeper).await?;
        }
        Ok(Status::Ok)
    }
}

impl ScriptConnection for MysqlConnection {
    async fn execute(&mut self, q: &Query<'_>, kept: &mut Kept) -> Status {
        call(self, async |c| c.script_now(q, kept).await).await
    }

    async fn abandon_transaction(&mut self) {
        if let Some(conn) = self.conn.as_mut() {
            // Nothing open is no error: either way the next transaction
            // starts clean.
            let _ = conn.query("ROLLBACK").await;
        }
    }

    /// MySQL's deadlock (1213) and a transaction it could not serialize
    /// (SQLSTATE 40001); a lock wait that timed out (1205) is not retried,
    /// as pgbench does not retry it.
    fn conflicted(&mut self) -> bool {
        self.last_error
            .as_deref()
            .is_some_and(|w| w.starts_with("ERROR 1213 ") || w.contains(" (40001): "))
    }

    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }
}

impl Runs<Script> for MysqlBackend {
    async fn prepare_tables(&self, t: &Tables, _drop: bool) -> Result<(), BackendError> {
        let t = t.sql(Dialect::Mysql);
        let statements: Vec<String> = t.drop.iter().chain(&t.create).cloned().collect();
        self.setup_batch(&statements).await
    }

    async fn tables_empty(&self, t: &Tables) -> Result<Option<bool>, BackendError> {
        self.nothing_in(&t.sql(Dialect::Mysql).any_row).await
    }

    async fn finish_load(&self, t: &Tables) -> Result<(), BackendError> {
        self.setup_batch(&t.sql(Dialect::Mysql).finish).await
    }

    async fn before_run(&self, t: &Tables) -> Result<(), BackendError> {
        self.setup_batch(&t.sql(Dialect::Mysql).vacuum).await
    }

    async fn records(&self, t: &Tables) -> Result<Option<u64>, BackendError> {
        use mysql_async::prelude::Queryable;
        let mut conn = self.setup_conn().await?;
        let sql = t.sql(Dialect::Mysql);
        let n: Result<Option<i64>, _> = conn.query_first(&sql.scale).await;
        let _ = conn.disconnect().await;
        match n {
            Ok(n) => Ok(Some(n.unwrap_or(0).max(0) as u64)),
            Err(mysql_async::Error::Server(e)) if e.code == ER_NO_SUCH_TABLE => {
                Err(self.setup_error(format!("{}: {}", e.message, sql.not_loaded)))
            }
            Err(e) => Err(self.setup_error(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::for_mysql;

    #[test]
    fn transaction_control_goes_as_text_and_end_commits() {
        assert_eq!(for_mysql("END;"), ("COMMIT", true));
        assert_eq!(for_mysql("end"), ("COMMIT", true));
        assert_eq!(for_mysql("END TRANSACTION;"), ("COMMIT", true));
        assert_eq!(for_mysql("BEGIN;"), ("BEGIN", true));
        assert_eq!(
            for_mysql("START TRANSACTION;\n"),
            ("START TRANSACTION", true)
        );
        assert_eq!(
            for_mysql("SELECT abalance FROM pgbench_accounts WHERE aid = ?;"),
            ("SELECT abalance FROM pgbench_accounts WHERE aid = ?", false)
        );
        // Not pgbench's END: an identifier that starts so.
        assert_eq!(for_mysql("endpoint_check()"), ("endpoint_check()", false));
    }
}
