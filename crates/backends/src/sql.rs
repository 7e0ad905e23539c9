//! What the client-server SQL backends (PostgreSQL, MySQL/MariaDB) share:
//! YCSB's JDBC table layout, the SQL text of each operation shape, the
//! reconnection backoff, and the vote and LIOPS operations of a connection around their bodies
//! ([`SqlOps`], [`sql_connection!`]).
//!
//! Layout (YCSB's JDBC binding): `usertable(YCSB_KEY VARCHAR(255) PRIMARY
//! KEY, FIELD0 TEXT, ..., FIELDn TEXT)`. Identifiers are written unquoted, as
//! YCSB's DDL writes them, so that a table created by either tool is the same
//! table for the other (PostgreSQL folds unquoted names to lower case).
//! Field index `i` is column `FIELDi` whatever the workload's
//! `fieldnameprefix`, as in the JDBC binding.
//!
//! Parameters are always bound in the same order in both dialects: an
//! update binds its values then the key (`SET FIELD1 = $1 WHERE YCSB_KEY =
//! $2`); an insert binds the key then its values; a scan binds the start
//! key then the limit.
//!
//! Values: any bytes, kept in `TEXT` columns as [`crate::text`] says.

use std::fmt::Write as _;
use std::future::Future;
use std::time::Duration;

pub(crate) use sojourn_core::backend::guard::call;
use sojourn_core::backend::guard::Operations;
use sojourn_core::backend::Extensions;
use sojourn_core::backend::{Schema, Status};
use sojourn_core::workload::capability::Runs;
use sojourn_core::workload::liops::{Liops, LiopsRow, LiopsSupport, ServerLoop, ServerLoopOutcome};
use sojourn_core::workload::vote::{ArticleRow, Vote, VoteSupport, VoteVariant};

pub(crate) use crate::pool::{Target, SETUP_TIMEOUT};
pub(crate) use crate::shapes::{ByShape, Layout, Op};

/// The bodies of a connection's vote and LIOPS operations (YCSB's five are
/// its [`Operations`]), each without the guard, which [`sql_connection!`] puts
/// around them.
pub(crate) trait SqlOps: Operations {
    /// The limit of one batch of a LIOPS load: longer than an operation's.
    fn load_timeout(&self) -> Duration;

    /// The connection's link to the vote run's cache (`vote.cache`), if
    /// it has one: Noria's hybrid deployment, see [`crate::vote_cache`].
    fn vote_cache(&mut self) -> Option<&mut crate::vote_cache::Cached>;

    fn insert_article_now(
        &mut self,
        variant: VoteVariant,
        id: u64,
        title: &str,
    ) -> impl Future<Output = Result<Status, Self::Error>> + Send;

    fn vote_now(
        &mut self,
        variant: VoteVariant,
        article: u64,
        user: u64,
    ) -> impl Future<Output = Result<Status, Self::Error>> + Send;

    fn article_now(
        &mut self,
        variant: VoteVariant,
        id: u64,
        out: &mut ArticleRow,
    ) -> impl Future<Output = Result<Status, Self::Error>> + Send;

    fn liops_load_now(
        &mut self,
        table: &str,
        rows: &[LiopsRow],
    ) -> impl Future<Output = Result<Status, Self::Error>> + Send;

    /// LIOPS' select (or with `update`, its update) over `mykey` in
    /// `range`, setting `rows` to the rows it touched.
    fn liops_now(
        &mut self,
        table: &str,
        update: bool,
        range: (u64, u64),
        rows: &mut u64,
    ) -> impl Future<Output = Result<Status, Self::Error>> + Send;

    /// LIOPS' in-server loop on `table`, where the server has one.
    fn liops_server_loop_now(
        &mut self,
        table: &str,
        spec: &ServerLoop,
        out: &mut ServerLoopOutcome,
    ) -> impl Future<Output = Result<Status, Self::Error>> + Send {
        let _ = (table, spec, out);
        async { Ok(Status::NotImplemented) }
    }
}

/// The vote and LIOPS operations of a connection type that implements
/// [`SqlOps`]: each body under the guard, a LIOPS load within its own
/// limit. (A macro because both traits belong to `sojourn-core`.) The
/// invoking module imports `SqlOps`, `Status`, `VoteVariant`, `ArticleRow`
/// and `LiopsRow`.
macro_rules! sql_connection {
    ($conn:ty) => {
        impl sojourn_core::workload::vote::VoteConnection for $conn {
            async fn insert_article(&mut self, v: VoteVariant, id: u64, title: &str) -> Status {
                let status =
                    $crate::sql::call(self, async |c| c.insert_article_now(v, id, title).await)
                        .await;
                match self.vote_cache() {
                    Some(cache) => cache.inserted(id, title, status).await,
                    None => status,
                }
            }

            async fn vote(&mut self, v: VoteVariant, article: u64, user: u64) -> Status {
                let status =
                    $crate::sql::call(self, async |c| c.vote_now(v, article, user).await).await;
                match self.vote_cache() {
                    Some(cache) => cache.voted(article, status).await,
                    None => status,
                }
            }

            async fn article(&mut self, v: VoteVariant, id: u64, out: &mut ArticleRow) -> Status {
                if let Some(cache) = self.vote_cache() {
                    match cache.lookup(id, out).await {
                        Ok(true) => return Status::Ok,
                        Ok(false) => {}
                        Err(failed) => return failed,
                    }
                }
                let status =
                    $crate::sql::call(self, async |c| c.article_now(v, id, out).await).await;
                match self.vote_cache() {
                    Some(cache) => cache.fetched(out, status).await,
                    None => status,
                }
            }
        }

        impl sojourn_core::workload::liops::LiopsConnection for $conn {
            async fn liops_load(&mut self, table: &str, rows: &[LiopsRow]) -> Status {
                let limit = self.load_timeout();
                let load = async |c: &mut Self| c.liops_load_now(table, rows).await;
                sojourn_core::backend::guard::call_within(self, limit, load).await
            }

            async fn liops_select(&mut self, table: &str, lo: u64, hi: u64, n: &mut u64) -> Status {
                $crate::sql::call(self, async |c| c.liops_now(table, false, (lo, hi), n).await)
                    .await
            }

            async fn liops_update(&mut self, table: &str, lo: u64, hi: u64, n: &mut u64) -> Status {
                let range = (lo, hi);
                $crate::sql::call(self, async |c| c.liops_now(table, true, range, n).await).await
            }

            async fn liops_server_loop(
                &mut self,
                table: &str,
                spec: &sojourn_core::workload::liops::ServerLoop,
                out: &mut sojourn_core::workload::liops::ServerLoopOutcome,
            ) -> Status {
                // The whole run in one call: its limit is the run's, and
                // an operation's beyond it for the answer to come back. A
                // loop bounded by a count alone takes what it takes.
                let limit = match spec.duration {
                    Some(d) => d + self.load_timeout(),
                    None => std::time::Duration::from_secs(365 * 86_400),
                };
                let run = async |c: &mut Self| c.liops_server_loop_now(table, spec, out).await;
                sojourn_core::backend::guard::call_within(self, limit, run).await
            }
        }
    };
}
pub(crate) use sql_connection;

/// What the SQL backends offer beyond YCSB's operations: the vote and
/// LIOPS workloads.
pub(crate) fn extensions<B>() -> Extensions<B>
where
    B: Runs<Vote> + Runs<Liops>,
    B::Conn: sojourn_core::workload::vote::VoteConnection
        + sojourn_core::workload::liops::LiopsConnection,
{
    Extensions::new()
        .with(VoteSupport::<B>::new())
        .with(LiopsSupport::<B>::new())
}

/// The workload's table name, if it can be written into SQL unquoted (see
/// [`valid_table_name`]).
pub(crate) fn checked_table(schema: &Schema) -> Result<&str, String> {
    if valid_table_name(&schema.table) {
        Ok(&schema.table)
    } else {
        Err(table_name_error(&schema.table))
    }
}

/// A driver's settings, which hold the password: `Debug` shows none of
/// them.
#[cfg(feature = "mysql")]
pub(crate) struct Hidden<T>(pub(crate) T);

#[cfg(feature = "mysql")]
impl<T> std::fmt::Debug for Hidden<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(hidden)")
    }
}

#[cfg(feature = "mysql")]
impl<T> std::ops::Deref for Hidden<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// The SQL dialects spoken.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Postgres,
    Mysql,
}

impl Dialect {
    /// Placeholder for the `n`-th parameter (1-based).
    fn param(self, sql: &mut String, n: usize) {
        match self {
            Dialect::Postgres => {
                let _ = write!(sql, "${n}");
            }
            Dialect::Mysql => sql.push('?'),
        }
    }

    /// The same placeholder on its own, for `format!`.
    pub(crate) fn placeholder(self, n: usize) -> String {
        let mut p = String::new();
        self.param(&mut p, n);
        p
    }
}

/// Whether `table` holds any row: `SELECT EXISTS`, true or false (1 or 0
/// on MySQL).
pub(crate) fn any_row(table: &str) -> String {
    format!("SELECT EXISTS (SELECT 1 FROM {table})")
}

pub(crate) fn drop_table(table: &str) -> String {
    format!("DROP TABLE IF EXISTS {table}")
}

/// Whether `name` can be used as an unquoted table name: YCSB writes the
/// table name into its SQL unquoted, and so does sojourn, so that both
/// tools name the same table. Anything else is refused rather than quoted.
pub(crate) fn valid_table_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 63
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn table_name_error(name: &str) -> String {
    format!(
        "table name `{name}` is not a plain SQL identifier (letters, digits and `_`, \
         starting with a letter or `_`, at most 63 characters)"
    )
}

fn column_list(sql: &mut String, fields: &[usize]) {
    for (i, &field) in fields.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        let _ = write!(sql, "FIELD{field}");
    }
}

/// YCSB's JDBC DDL, with `IF NOT EXISTS`. MySQL gets a utf8mb4 character
/// set (the server default may be latin1, which would mangle UTF-8 values)
/// and a binary collation for the key, so that keys compare byte by byte as
/// in every other backend rather than case-insensitively.
pub(crate) fn create_table(dialect: Dialect, table: &str, field_count: usize) -> String {
    let key_type = match dialect {
        Dialect::Postgres => "VARCHAR(255)",
        Dialect::Mysql => "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
    };
    let mut sql = format!("CREATE TABLE IF NOT EXISTS {table} (YCSB_KEY {key_type} PRIMARY KEY");
    for field in 0..field_count {
        let _ = write!(sql, ", FIELD{field} TEXT");
    }
    sql.push(')');
    if dialect == Dialect::Mysql {
        sql.push_str(" DEFAULT CHARACTER SET utf8mb4");
    }
    sql
}

/// Read `fields` of one record (no fields: whether it exists).
pub(crate) fn read(dialect: Dialect, table: &str, fields: &[usize]) -> String {
    let mut sql = "SELECT ".to_string();
    if fields.is_empty() {
        sql.push('1');
    } else {
        column_list(&mut sql, fields);
    }
    let _ = write!(sql, " FROM {table} WHERE YCSB_KEY = ");
    dialect.param(&mut sql, 1);
    sql
}

/// The key then `fields` of up to `limit` records from a start key.
pub(crate) fn scan(dialect: Dialect, table: &str, fields: &[usize]) -> String {
    let mut sql = "SELECT YCSB_KEY".to_string();
    if !fields.is_empty() {
        sql.push_str(", ");
        column_list(&mut sql, fields);
    }
    let _ = write!(sql, " FROM {table} WHERE YCSB_KEY >= ");
    dialect.param(&mut sql, 1);
    sql.push_str(" ORDER BY YCSB_KEY LIMIT ");
    dialect.param(&mut sql, 2);
    sql
}

/// Set `fields` (parameters 1..=n) of the record whose key is parameter n+1.
pub(crate) fn update(dialect: Dialect, table: &str, fields: &[usize]) -> String {
    let mut sql = format!("UPDATE {table} SET ");
    for (i, &field) in fields.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        let _ = write!(sql, "FIELD{field} = ");
        dialect.param(&mut sql, i + 1);
    }
    sql.push_str(" WHERE YCSB_KEY = ");
    dialect.param(&mut sql, fields.len() + 1);
    sql
}

/// Insert the key (parameter 1) with `fields` (parameters 2..). Inserting
/// an existing key replaces the whole record, fields not given becoming
/// NULL, as the other backends do (it also makes a retried load
/// idempotent): PostgreSQL with `ON CONFLICT ... DO UPDATE` over every
/// field, MySQL with `REPLACE`.
pub(crate) fn insert(
    dialect: Dialect,
    table: &str,
    fields: &[usize],
    field_count: usize,
) -> String {
    let mut sql = match dialect {
        Dialect::Postgres => format!("INSERT INTO {table} (YCSB_KEY"),
        Dialect::Mysql => format!("REPLACE INTO {table} (YCSB_KEY"),
    };
    for &field in fields {
        let _ = write!(sql, ", FIELD{field}");
    }
    sql.push_str(") VALUES (");
    dialect.param(&mut sql, 1);
    for i in 0..fields.len() {
        sql.push_str(", ");
        dialect.param(&mut sql, i + 2);
    }
    sql.push(')');
    if dialect == Dialect::Postgres {
        sql.push_str(" ON CONFLICT (YCSB_KEY) DO ");
        if field_count == 0 {
            sql.push_str("NOTHING");
        } else {
            sql.push_str("UPDATE SET ");
            for field in 0..field_count {
                if field > 0 {
                    sql.push_str(", ");
                }
                let _ = write!(sql, "FIELD{field} = EXCLUDED.FIELD{field}");
            }
        }
    }
    sql
}

pub(crate) fn delete(dialect: Dialect, table: &str) -> String {
    let mut sql = format!("DELETE FROM {table} WHERE YCSB_KEY = ");
    dialect.param(&mut sql, 1);
    sql
}

/// How one database's URLs are read: its schemes, and the query keys
/// sojourn reads itself rather than pass to the driver (in any case).
pub(crate) struct UrlRules {
    pub(crate) schemes: &'static [&'static str],
    /// The database's name and an example URL, for messages.
    pub(crate) database: &'static str,
    pub(crate) example: &'static str,
    /// The scheme the driver's own parser reads.
    pub(crate) native: &'static str,
    /// Keys of the TLS mode, and of the CA certificates' file.
    pub(crate) ssl_mode: &'static [&'static str],
    pub(crate) ssl_ca: &'static [&'static str],
    /// The JDBC driver's switch for TLS, and the mode it means.
    pub(crate) jdbc_ssl: (&'static str, &'static str),
}

/// A SQL URL, `[jdbc:]SCHEME://BASE[?QUERY]`, read by its database's rules.
pub(crate) struct SqlUrl {
    /// What the driver parses: the native scheme, the base, and the query
    /// pairs sojourn does not read; a JDBC URL's are the JDBC driver's
    /// settings, and dropped.
    pub(crate) native: String,
    passed: Vec<String>,
    pub(crate) user: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) ssl_mode: Option<String>,
    pub(crate) ssl_ca: Option<String>,
}

impl SqlUrl {
    pub(crate) fn parse(url: &str, rules: &UrlRules) -> Result<SqlUrl, String> {
        let url = url.trim();
        let (jdbc, rest) = match url.strip_prefix("jdbc:") {
            Some(rest) => (true, rest),
            None => (false, url),
        };
        let Some((scheme, after)) = rest.split_once("://") else {
            return Err(format!("expected {}", rules.example));
        };
        if !rules
            .schemes
            .contains(&scheme.to_ascii_lowercase().as_str())
        {
            return Err(format!("`{scheme}://` is not a {} URL", rules.database));
        }
        let (base, query) = after.split_once('?').unwrap_or((after, ""));
        let mut parsed = SqlUrl {
            native: format!("{}://{base}", rules.native),
            passed: Vec::new(),
            user: None,
            password: None,
            ssl_mode: None,
            ssl_ca: None,
        };
        for (key, value) in query_pairs(query) {
            let lower = key.to_ascii_lowercase();
            match lower.as_str() {
                k if rules.ssl_mode.contains(&k) => parsed.ssl_mode = Some(value),
                k if rules.ssl_ca.contains(&k) => parsed.ssl_ca = Some(value),
                k if jdbc && k == rules.jdbc_ssl.0 => {
                    if value.eq_ignore_ascii_case("true") && parsed.ssl_mode.is_none() {
                        parsed.ssl_mode = Some(rules.jdbc_ssl.1.to_string());
                    }
                }
                "user" => parsed.user = Some(value),
                "password" => parsed.password = Some(value),
                _ if jdbc => {}
                _ => {
                    let sep = if parsed.passed.is_empty() { '?' } else { '&' };
                    let _ = write!(
                        parsed.native,
                        "{sep}{}={}",
                        percent_encode(&key),
                        percent_encode(&value)
                    );
                    parsed.passed.push(lower);
                }
            }
        }
        Ok(parsed)
    }
}

/// The `key=value` pairs of a URL query, percent-decoded (`+` stays `+`).
fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

/// `%XX` escapes decoded; anything malformed is kept as written.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every byte but unreserved ones (RFC 3986) as `%XX`.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

impl Layout {
    /// The SQL of `op` over `columns`, in `dialect`.
    pub(crate) fn sql(&self, dialect: Dialect, op: Op, columns: &[usize]) -> String {
        let table = self.table();
        match op {
            Op::Read => read(dialect, table, columns),
            Op::Scan => scan(dialect, table, columns),
            Op::Update => update(dialect, table, columns),
            Op::Insert => insert(dialect, table, columns, self.field_count()),
        }
    }
}

pub(crate) use crate::backoff::Backoff;

/// The first wait after a failed attempt to re-establish a lost
/// connection.
pub(crate) const RECONNECT_FIRST: Duration = Duration::from_millis(50);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_of_sql() {
        let pg = Dialect::Postgres;
        let my = Dialect::Mysql;
        assert_eq!(
            create_table(pg, "usertable", 2),
            "CREATE TABLE IF NOT EXISTS usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY, \
             FIELD0 TEXT, FIELD1 TEXT)"
        );
        assert_eq!(
            read(pg, "t", &[2, 0]),
            "SELECT FIELD2, FIELD0 FROM t WHERE YCSB_KEY = $1"
        );
        assert_eq!(read(my, "t", &[]), "SELECT 1 FROM t WHERE YCSB_KEY = ?");
        assert_eq!(
            scan(pg, "t", &[1]),
            "SELECT YCSB_KEY, FIELD1 FROM t WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"
        );
        assert_eq!(
            update(pg, "t", &[3, 1]),
            "UPDATE t SET FIELD3 = $1, FIELD1 = $2 WHERE YCSB_KEY = $3"
        );
        assert_eq!(
            update(my, "t", &[0]),
            "UPDATE t SET FIELD0 = ? WHERE YCSB_KEY = ?"
        );
        assert_eq!(
            insert(pg, "t", &[1], 2),
            "INSERT INTO t (YCSB_KEY, FIELD1) VALUES ($1, $2) ON CONFLICT (YCSB_KEY) DO \
             UPDATE SET FIELD0 = EXCLUDED.FIELD0, FIELD1 = EXCLUDED.FIELD1"
        );
        assert_eq!(
            insert(my, "t", &[0, 1], 2),
            "REPLACE INTO t (YCSB_KEY, FIELD0, FIELD1) VALUES (?, ?, ?)"
        );
        assert_eq!(delete(pg, "t"), "DELETE FROM t WHERE YCSB_KEY = $1");
    }

    #[test]
    fn queries() {
        assert_eq!(
            query_pairs("a=1&b=x%40y&&c&d=%zz"),
            [
                ("a".to_string(), "1".to_string()),
                ("b".to_string(), "x@y".to_string()),
                ("c".to_string(), String::new()),
                ("d".to_string(), "%zz".to_string()),
            ]
        );
        assert_eq!(percent_encode("a b/@~"), "a%20b%2F%40~");
        assert_eq!(
            percent_decode(&percent_encode("p@ss w:rd/\u{e9}")),
            "p@ss w:rd/\u{e9}"
        );
    }

    #[test]
    fn table_names() {
        assert!(valid_table_name("usertable"));
        assert!(valid_table_name("_t2"));
        assert!(!valid_table_name("2t"));
        assert!(!valid_table_name("t; DROP TABLE x"));
        assert!(!valid_table_name(""));
        assert!(!valid_table_name(&"a".repeat(64)));
    }
}
