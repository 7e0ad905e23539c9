//! `results query`: read-only SQL over the store's tables and views, with
//! every statement that could change the store, or reach the server's
//! files and sessions, refused before it runs.

use super::*;

impl Store {
    /// Read-only SQL over the store's tables and views (see
    /// docs/results.md). Statements that would change the store are
    /// refused before they run.
    pub fn query(&self, sql: &str) -> Result<QueryResult, StoreError> {
        // Only query statements: a PRAGMA or SET could lift the database's
        // own read-only guard for the next statement.
        let first = first_keyword(sql).to_ascii_uppercase();
        if !matches!(first.as_str(), "SELECT" | "WITH" | "VALUES" | "EXPLAIN") {
            return Err(StoreError::ReadOnly(format!(
                "{sql:?} is not a query; only SELECT, WITH ... SELECT, VALUES and EXPLAIN are \
                 accepted"
            )));
        }
        if let Some(f) = server_function(sql) {
            return Err(StoreError::ReadOnly(format!(
                "{f}() is a server function (files, sessions, settings), not a query of the \
                 results; query the store's tables and views"
            )));
        }
        let mut db = self.db.lock();
        if let Some(ro) = db.is_read_only(sql) {
            match ro {
                Ok(true) => {}
                Ok(false) => {
                    return Err(StoreError::ReadOnly(format!(
                        "{sql:?} would change the store; only queries (SELECT, WITH ... SELECT) \
                         are accepted"
                    )))
                }
                Err(e) => return Err(self.err("preparing the query", e)),
            }
        }
        db.query_read_only(sql)
            .map_err(|e| self.err("running the query", e))
    }
}

/// The first call in `sql` of a server's administrative function: a read-
/// only transaction does not stop PostgreSQL's `pg_read_file`,
/// `pg_terminate_backend`, `lo_export` or `dblink`, so `results query`
/// refuses every `pg_*`, `lo_*`, `dblink*` and `set_config` call.
fn server_function(sql: &str) -> Option<String> {
    let lower = sql.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    let mut i = 0;
    while i < bytes.len() {
        if !ident(bytes[i]) || (i > 0 && ident(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && ident(bytes[i]) {
            i += 1;
        }
        let name = &lower[start..i];
        let mut j = i;
        if bytes.get(j) == Some(&b'"') {
            j += 1;
        }
        while bytes.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        let called = bytes.get(j) == Some(&b'(');
        let administrative =
            ["pg_", "lo_", "dblink"].iter().any(|p| name.starts_with(p)) || name == "set_config";
        if called && administrative {
            return Some(name.to_string());
        }
    }
    None
}

/// The first word of a statement, after whitespace and SQL comments.
fn first_keyword(sql: &str) -> &str {
    let mut rest = sql;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, after)| after);
        } else {
            break;
        }
    }
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    &rest[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_functions_are_found() {
        for sql in [
            "SELECT pg_read_file('/etc/passwd')",
            "select x from (select PG_TERMINATE_BACKEND (1) as x) t",
            "SELECT \"pg_catalog\".\"pg_read_file\"('x')",
            "SELECT lo_export(1, '/tmp/x')",
            "SELECT set_config('x', 'y', false)",
        ] {
            assert!(server_function(sql).is_some(), "{sql}");
        }
        for sql in [
            "SELECT * FROM runs",
            "SELECT my_pg_stats FROM t",
            "SELECT count(*) FROM run_labels WHERE key = 'pg_x'",
        ] {
            assert_eq!(server_function(sql), None, "{sql}");
        }
    }

    #[test]
    fn first_keywords_skip_comments() {
        assert_eq!(first_keyword("  -- note\n /* x */ select 1"), "select");
        assert_eq!(
            first_keyword("WITH a AS (SELECT 1) SELECT * FROM a"),
            "WITH"
        );
        assert_eq!(first_keyword("PRAGMA query_only = 0"), "PRAGMA");
        assert_eq!(first_keyword(""), "");
    }
}
