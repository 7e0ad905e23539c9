//! What the client-server SQL backends (PostgreSQL, MySQL/MariaDB) share:
//! YCSB's JDBC table layout, the SQL text of each operation shape, how any
//! bytes are kept in a `TEXT` column, and the reconnection backoff.
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
//! Values: a `TEXT` column holds valid UTF-8 without NUL bytes (PostgreSQL
//! refuses both; MySQL refuses invalid UTF-8 in a utf8mb4 column), while a
//! backend must round-trip any bytes. A value that is valid UTF-8, has no
//! NUL and does not start with byte 0x01 is stored as it is: every value
//! YCSB or sojourn generates is ASCII, so the tables stay readable by YCSB
//! and by people. Any other value is stored as 0x01 followed by its bytes in
//! lower-case hex; reading reverses that. A stored text that starts with
//! 0x01 but is not valid hex (written by another tool) is returned as it is.

use std::fmt::Write as _;
use std::time::Duration;

/// Per-operation timeout when `timeout.ms` is not given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(2000);

/// `timeout.ms`: a positive number of milliseconds.
pub(crate) fn timeout_from(
    props: &sojourn_core::properties::Properties,
) -> Result<Duration, String> {
    match props.get("timeout.ms") {
        None => Ok(DEFAULT_TIMEOUT),
        Some(v) => match v.trim().parse::<u64>() {
            Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
            _ => Err(format!(
                "timeout.ms must be a positive number of milliseconds, not `{v}`"
            )),
        },
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

pub(crate) fn table_name_error(name: &str) -> String {
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

/// The `key=value` pairs of a URL query, percent-decoded (`+` stays `+`).
pub(crate) fn query_pairs(query: &str) -> Vec<(String, String)> {
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
pub(crate) fn percent_decode(s: &str) -> String {
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
pub(crate) fn percent_encode(s: &str) -> String {
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

/// The first byte of a value stored in escaped form.
const ESCAPE: u8 = 0x01;

/// Whether `value` is stored in a TEXT column as it is.
pub(crate) fn is_plain(value: &[u8]) -> bool {
    value.first() != Some(&ESCAPE) && !value.contains(&0) && std::str::from_utf8(value).is_ok()
}

/// Append the stored form of a value that is not [`is_plain`].
pub(crate) fn escape_into(value: &[u8], out: &mut impl Extend<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend(std::iter::once(ESCAPE));
    out.extend(
        value
            .iter()
            .flat_map(|&b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]),
    );
}

/// The stored form of `value`.
pub(crate) fn encode(value: &[u8]) -> Vec<u8> {
    if is_plain(value) {
        value.to_vec()
    } else {
        let mut out = Vec::with_capacity(1 + 2 * value.len());
        escape_into(value, &mut out);
        out
    }
}

/// The value whose stored form is `stored`.
pub(crate) fn decode(stored: &[u8]) -> Vec<u8> {
    match stored.split_first() {
        Some((&ESCAPE, hex)) if hex.len() % 2 == 0 => {
            let digit = |c: u8| match c {
                b'0'..=b'9' => Some(c - b'0'),
                b'a'..=b'f' => Some(c - b'a' + 10),
                _ => None,
            };
            hex.chunks_exact(2)
                .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
                .collect::<Option<Vec<u8>>>()
                .unwrap_or_else(|| stored.to_vec())
        }
        _ => stored.to_vec(),
    }
}

/// Move a decoded value out of a driver-owned buffer without copying when
/// it is plain.
pub(crate) fn decode_owned(stored: Vec<u8>) -> Vec<u8> {
    if stored.first() == Some(&ESCAPE) {
        decode(&stored)
    } else {
        stored
    }
}

/// Field indices as written: `fields` itself, or where it is exactly
/// `0..field_count` in order, the "all fields" shape.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shape<'a> {
    All,
    One(usize),
    List(&'a [usize]),
}

impl<'a> Shape<'a> {
    pub(crate) fn of(fields: &'a [usize], field_count: usize) -> Shape<'a> {
        match fields {
            [one] if field_count != 1 => Shape::One(*one),
            _ if fields.len() == field_count && fields.iter().enumerate().all(|(i, &f)| i == f) => {
                Shape::All
            }
            _ => Shape::List(fields),
        }
    }
}

/// Shapes beyond which a cache of statements by field list is emptied: a
/// workload picking arbitrary field subsets would otherwise prepare
/// statements without bound on the server.
pub(crate) const LIST_CACHE_LIMIT: usize = 64;

/// Statements (or anything else) kept per operation shape, with the common
/// shapes (all fields, one field) found without hashing.
pub(crate) struct ShapeCache<T> {
    all: Option<T>,
    one: Vec<Option<T>>,
    list: std::collections::HashMap<Box<[usize]>, T>,
}

impl<T> Default for ShapeCache<T> {
    fn default() -> Self {
        ShapeCache {
            all: None,
            one: Vec::new(),
            list: std::collections::HashMap::new(),
        }
    }
}

impl<T> ShapeCache<T> {
    pub(crate) fn get(&self, shape: Shape<'_>) -> Option<&T> {
        match shape {
            Shape::All => self.all.as_ref(),
            Shape::One(f) => self.one.get(f).and_then(Option::as_ref),
            Shape::List(list) => self.list.get(list),
        }
    }

    pub(crate) fn insert(&mut self, shape: Shape<'_>, value: T) -> &T {
        match shape {
            Shape::All => self.all.insert(value),
            Shape::One(f) => {
                if self.one.len() <= f {
                    self.one.resize_with(f + 1, || None);
                }
                self.one[f].insert(value)
            }
            Shape::List(list) => {
                if self.list.len() >= LIST_CACHE_LIMIT {
                    self.list.clear();
                }
                self.list.entry(list.into()).or_insert(value)
            }
        }
    }
}

/// Delays between attempts to re-establish a lost connection: doubling
/// from [`Backoff::FIRST`] up to [`Backoff::MAX`], back to the first after
/// a success.
#[derive(Debug)]
pub(crate) struct Backoff {
    next_attempt: tokio::time::Instant,
    delay: Duration,
}

impl Backoff {
    pub(crate) const FIRST: Duration = Duration::from_millis(50);
    pub(crate) const MAX: Duration = Duration::from_secs(1);

    pub(crate) fn new() -> Backoff {
        Backoff {
            next_attempt: tokio::time::Instant::now(),
            delay: Self::FIRST,
        }
    }

    /// Wait until an attempt is due, and book the one after it.
    pub(crate) async fn wait_turn(&mut self) {
        tokio::time::sleep_until(self.next_attempt).await;
        self.next_attempt = tokio::time::Instant::now() + self.delay;
        self.delay = (self.delay * 2).min(Self::MAX);
    }

    pub(crate) fn succeeded(&mut self) {
        self.delay = Self::FIRST;
    }
}

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

    #[test]
    fn values_round_trip() {
        for v in [
            &b"plain ascii"[..],
            b"",
            "h\u{e9}llo".as_bytes(),
            &[0x00, 0xff],
            b"nul\0inside",
            &[0x01, b'a', b'b'],
            &[0xc3, 0x28],
        ] {
            let stored = encode(v);
            assert!(std::str::from_utf8(&stored).is_ok() && !stored.contains(&0));
            assert_eq!(decode(&stored), v);
            assert_eq!(decode_owned(stored), v);
        }
        assert_eq!(encode(b"abc"), b"abc");
        assert_eq!(encode(&[0xff]), b"\x01ff");
        // Foreign text starting with 0x01 that is not our escape.
        assert_eq!(decode(b"\x01zz"), b"\x01zz");
        assert_eq!(decode(b"\x01a"), b"\x01a");
    }

    #[test]
    fn shapes_and_cache() {
        assert_eq!(Shape::of(&[0, 1, 2], 3), Shape::All);
        assert_eq!(Shape::of(&[0], 1), Shape::All);
        assert_eq!(Shape::of(&[2], 3), Shape::One(2));
        assert_eq!(Shape::of(&[1, 0, 2], 3), Shape::List(&[1, 0, 2]));
        assert_eq!(Shape::of(&[], 3), Shape::List(&[]));
        let mut c = ShapeCache::default();
        assert_eq!(c.get(Shape::One(5)), None);
        c.insert(Shape::One(5), "five");
        c.insert(Shape::List(&[1, 2]), "list");
        c.insert(Shape::All, "all");
        assert_eq!(c.get(Shape::One(5)), Some(&"five"));
        assert_eq!(c.get(Shape::One(4)), None);
        assert_eq!(c.get(Shape::List(&[1, 2])), Some(&"list"));
        assert_eq!(c.get(Shape::All), Some(&"all"));
    }
}
