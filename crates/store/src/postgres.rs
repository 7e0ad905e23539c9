//! The PostgreSQL store, for many client machines writing to one place.
//! The store's API is synchronous, so the connection lives on a private
//! single-threaded tokio runtime that each call blocks on (never call it
//! from inside another runtime). Statements arrive with `?` placeholders
//! and become `$1, $2, ...`; values are bound to whatever type the server
//! infers for each parameter, so one [`Value`] fits BIGINT, INTEGER and
//! DOUBLE PRECISION columns alike. TLS is libpq's `?sslmode=` (with
//! `sslrootcert=PATH` for `verify-ca` and `verify-full`), as the PostgreSQL
//! backend reads it. The password comes from the URL, else
//! `$SOJOURN_RESULTS_PASSWORD`, else `$PGPASSWORD`: the store's own
//! variable lets an agent hold one password for the database it measures
//! and another for the store. Every call gives up after the store's wait:
//! a stalled server or a network that drops packets would otherwise hold a
//! run's records (and its process) forever.
//!
//! A store whose database does not exist yet is created, as go-tpc creates
//! its database: through the server's `postgres` maintenance database, with
//! the same credentials, so that a new results server needs no step of its
//! own before its first agent. Where the user may not create databases,
//! the error says the one statement a superuser runs instead.

use std::error::Error;
use std::future::Future;
use std::time::Duration;

use bytes::BytesMut;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type};
use tokio_postgres::{Client, NoTls, Row};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::db::{Db, DbError};
use crate::model::{QueryResult, Value};

/// The advisory lock key that serialises schema creation and migration
/// ("sojourn" in ASCII).
const SCHEMA_LOCK: i64 = 0x0073_6f6a_6f75_726e;

pub(crate) struct Postgres {
    rt: tokio::runtime::Runtime,
    /// `None` after a call timed out or the connection closed: the next
    /// statement outside a transaction connects again.
    client: Option<Client>,
    config: tokio_postgres::Config,
    tls: Option<MakeRustlsConnect>,
    read_only: bool,
    /// How long one call may take.
    wait: Duration,
    /// A transaction is open on the connection (it cannot move to another).
    in_transaction: bool,
}

/// Block on `fut`, giving up after `wait`.
fn within<T>(
    rt: &tokio::runtime::Runtime,
    wait: Duration,
    fut: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, DbError> {
    match rt.block_on(async { tokio::time::timeout(wait, fut).await }) {
        Ok(r) => Ok(r?),
        Err(_) => Err(DbError::TimedOut(wait)),
    }
}

impl Postgres {
    pub fn connect(url: &str, read_only: bool, wait: Duration) -> Result<Postgres, DbError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime builds");
        let (url, ssl_mode, root_cert) = split_tls(url);
        let mut config: tokio_postgres::Config = url.parse()?;
        // A password kept out of the URL (and so out of `ps`) comes from
        // the store's own variable, else $PGPASSWORD as libpq's.
        if config.get_password().is_none() {
            if let Some(password) = [PASSWORD_ENV, "PGPASSWORD"]
                .iter()
                .find_map(|v| std::env::var(v).ok())
            {
                config.password(password);
            }
        }
        let tls = sojourn_tls::postgres::connector(
            ssl_mode.as_deref(),
            root_cert.as_deref(),
            &mut config,
        )
        .map_err(DbError::Config)?;
        let mut pg = Postgres {
            rt,
            client: None,
            config,
            tls,
            read_only,
            wait,
            in_transaction: false,
        };
        match pg.ensure_connected() {
            // Reading never creates anything (`results query` on a store
            // that is not there is an error, not an empty store).
            Err(DbError::Postgres(e))
                if !read_only && e.code() == Some(&SqlState::INVALID_CATALOG_NAME) =>
            {
                pg.create_database(&e)?;
                pg.ensure_connected()?;
            }
            r => r?,
        }
        Ok(pg)
    }

    /// Create the store's database, which the server said does not exist
    /// (`missing`): connected to [`MAINTENANCE_DB`] as the store's user,
    /// with the name quoted by the server (`quote_ident`). Several
    /// processes may race to create it (agents started together): whoever
    /// loses finds it there, which is all it wanted.
    fn create_database(&mut self, missing: &tokio_postgres::Error) -> Result<(), DbError> {
        let user = self.config.get_user().unwrap_or_default().to_string();
        // libpq's rule, which the server applies: no database named, the
        // user's name. (No user named either: the driver took the
        // process's, which the server's `current_user` tells.)
        let name = self
            .config
            .get_dbname()
            .map_or_else(|| user.clone(), str::to_string);
        let mut admin = self.config.clone();
        admin.dbname(MAINTENANCE_DB);
        let tls = self.tls.clone();
        let create = |client: Client, name: String| async move {
            let row = client
                .query_one(
                    "SELECT quote_ident(COALESCE(NULLIF($1::text, ''), current_user::text)), \
                     quote_ident(current_user::text)",
                    &[&name],
                )
                .await?;
            let (db, owner): (String, String) = (row.try_get(0)?, row.try_get(1)?);
            let created = client.batch_execute(&format!("CREATE DATABASE {db}")).await;
            Ok::<_, tokio_postgres::Error>((created, db, owner))
        };
        let statement = |db: &str, owner: &str| format!("CREATE DATABASE {db} OWNER {owner};");
        // Creating copies a template database and may take a checkpoint:
        // seconds on a busy server, longer than a store opened to answer
        // quickly (an agent's control connection) waits for one call.
        let wait = self.wait.max(CREATE_WAIT);
        let client = match within(&self.rt, wait, open(&admin, tls)) {
            Ok(client) => client,
            Err(e) if e.is_busy() || matches!(e, DbError::TimedOut(_)) => return Err(e),
            Err(DbError::Postgres(e)) => {
                return Err(DbError::Config(format!(
                    "{}; creating it needs a session in the server's {MAINTENANCE_DB:?} \
                     database, which failed ({}): as a superuser, run {}",
                    server_said(missing),
                    server_said(&e),
                    statement(&quoted_or_user(&name), &quoted_or_user(&user))
                )))
            }
            Err(e) => return Err(e),
        };
        let (created, db, owner) = within(&self.rt, wait, create(client, name))?;
        match created {
            Ok(()) => Ok(()),
            Err(e)
                if e.code().is_some_and(|c| {
                    // The loser of a race: the name check (42P04), or, when
                    // both passed it at once, the catalog's unique index.
                    *c == SqlState::DUPLICATE_DATABASE || *c == SqlState::UNIQUE_VIOLATION
                }) =>
            {
                Ok(())
            }
            Err(e) => {
                let why = if e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
                    // The URL's user, else the one the driver took (the
                    // process's), as the server names it.
                    let who = if user.is_empty() {
                        owner.clone()
                    } else {
                        format!("{user:?}")
                    };
                    format!("user {who} may not create it")
                } else {
                    "creating it failed".to_string()
                };
                Err(DbError::Config(format!(
                    "{}, and {why} ({}): as a superuser, run {}",
                    server_said(missing),
                    server_said(&e),
                    statement(&db, &owner)
                )))
            }
        }
    }

    /// The connection, connecting again first when the last one closed or
    /// timed out (a store that was unreachable for a while): between
    /// transactions only, since an open one cannot move to another.
    fn ensure_connected(&mut self) -> Result<(), DbError> {
        if self.client.as_ref().is_some_and(Client::is_closed) {
            self.client = None;
        }
        if self.client.is_none() {
            if self.in_transaction {
                return Err(DbError::Config(
                    "the connection to the store broke inside a transaction".into(),
                ));
            }
            let (config, tls) = (&self.config, self.tls.clone());
            let client = within(&self.rt, self.wait, async {
                let client = open(config, tls).await?;
                if self.read_only {
                    client
                        .batch_execute("SET default_transaction_read_only = on")
                        .await?;
                }
                Ok::<_, tokio_postgres::Error>(client)
            })?;
            self.client = Some(client);
        }
        Ok(())
    }

    /// A call's result; a call that timed out leaves the connection in an
    /// unknown state (a request may still be in flight), so it is dropped.
    fn settle<T>(&mut self, r: Result<T, DbError>) -> Result<T, DbError> {
        if matches!(r, Err(DbError::TimedOut(_))) {
            self.client = None;
        }
        r
    }
}

/// A session on `config`'s server, its connection driven on the calling
/// runtime whenever a call blocks on it.
async fn open(
    config: &tokio_postgres::Config,
    tls: Option<MakeRustlsConnect>,
) -> Result<Client, tokio_postgres::Error> {
    Ok(match tls {
        Some(tls) => {
            let (client, connection) = config.connect(tls).await?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            client
        }
        None => {
            let (client, connection) = config.connect(NoTls).await?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            client
        }
    })
}

/// How long creating the store's database may take.
const CREATE_WAIT: Duration = Duration::from_secs(60);

/// The database every PostgreSQL server has for sessions that create
/// databases (`createdb` and go-tpc connect there too).
const MAINTENANCE_DB: &str = "postgres";

/// The server's own message (the driver's Display of a server error says
/// only "db error").
fn server_said(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => {
            let mut parts = vec![e.to_string()];
            let mut cause = e.source();
            while let Some(c) = cause {
                parts.push(c.to_string());
                cause = c.source();
            }
            parts.join(": ")
        }
    }
}

/// `name` as a PostgreSQL identifier, always quoted: for a statement shown
/// when the server could not quote it (no session to ask). No name (no
/// user in the URL, whose name only the driver knows): a placeholder.
fn quoted_or_user(name: &str) -> String {
    if name.is_empty() {
        "USER".to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// The variable the store's password may come from.
pub const PASSWORD_ENV: &str = "SOJOURN_RESULTS_PASSWORD";

/// `url` without its `sslmode` and `sslrootcert` parameters (which
/// tokio-postgres reads only in part), and their values.
fn split_tls(url: &str) -> (String, Option<String>, Option<String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), None, None);
    };
    let (mut mode, mut root) = (None, None);
    let kept: Vec<&str> = query
        .split('&')
        .filter(|kv| match kv.split_once('=') {
            Some(("sslmode", v)) => {
                mode = Some(v.to_string());
                false
            }
            Some(("sslrootcert", v)) => {
                root = Some(v.to_string());
                false
            }
            _ => !kv.is_empty(),
        })
        .collect();
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (url, mode, root)
}

/// `?` placeholders to PostgreSQL's `$n` (the store's own SQL never has a
/// `?` inside a string literal).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// A [`Value`] bound as the type the server expects for its parameter.
#[derive(Debug)]
struct Param<'a>(&'a Value);

type BoxError = Box<dyn Error + Sync + Send>;

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        let mismatch = || -> BoxError { format!("cannot store {:?} as {ty}", self.0).into() };
        match self.0 {
            Value::Null => Ok(IsNull::Yes),
            Value::Integer(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::FLOAT4 => (*i as f32).to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => i.to_string().to_sql(ty, out),
                _ => Err(mismatch()),
            },
            Value::Real(r) => match *ty {
                Type::FLOAT8 => r.to_sql(ty, out),
                Type::FLOAT4 => (*r as f32).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => r.to_string().to_sql(ty, out),
                _ => Err(mismatch()),
            },
            Value::Text(t) => t.as_str().to_sql(ty, out),
            Value::Blob(b) => b.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

/// PostgreSQL's binary NUMERIC (what SUM and AVG of integers return), as
/// a float: digits in base 10,000 with a weight and a sign.
struct Numeric(f64);

impl<'a> FromSql<'a> for Numeric {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let word = |i: usize| -> Result<i16, BoxError> {
            raw.get(i..i + 2)
                .map(|b| i16::from_be_bytes([b[0], b[1]]))
                .ok_or_else(|| "short NUMERIC".into())
        };
        let ndigits = word(0)? as usize;
        let weight = word(2)? as i32;
        let sign = word(4)? as u16;
        if sign == 0xC000 {
            return Ok(Numeric(f64::NAN));
        }
        let mut v = 0.0;
        for d in 0..ndigits {
            let digit = word(8 + 2 * d)? as f64;
            v += digit * 10_000f64.powi(weight - d as i32);
        }
        Ok(Numeric(if sign == 0x4000 { -v } else { v }))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
}

fn value(row: &Row, i: usize) -> Result<Value, DbError> {
    let ty = row.columns()[i].type_().clone();
    Ok(match ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map(Value::Integer),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)?
            .map(|v| Value::Integer(v.into())),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)?
            .map(|v| Value::Integer(v.into())),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?.map(Value::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)?
            .map(|v| Value::Real(v.into())),
        Type::NUMERIC => row
            .try_get::<_, Option<Numeric>>(i)?
            .map(|n| Value::Real(n.0)),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)?
            .map(|b| Value::Integer(b.into())),
        Type::BYTEA => row.try_get::<_, Option<Vec<u8>>>(i)?.map(Value::Blob),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => {
            row.try_get::<_, Option<String>>(i)?.map(Value::Text)
        }
        other => Some(Value::Text(format!("<{other}>"))),
    }
    .unwrap_or(Value::Null))
}

/// `params` as the driver binds them.
fn bind<'a>(params: &'a [Param<'_>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Postgres {
    fn run(&mut self, sql: &str, params: &[Value]) -> Result<QueryResult, DbError> {
        let sql = numbered(sql);
        let params: Vec<Param<'_>> = params.iter().map(Param).collect();
        let refs = bind(&params);
        self.ensure_connected()?;
        let client = self.client.as_ref().expect("connected");
        let r = within(&self.rt, self.wait, async {
            let stmt = client.prepare(&sql).await?;
            let columns: Vec<String> = stmt
                .columns()
                .iter()
                .map(|c| c.name().to_string())
                .collect();
            let rows = client.query(&stmt, &refs).await?;
            Ok::<_, tokio_postgres::Error>((columns, rows))
        });
        let (columns, rows) = self.settle(r)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            out.push(
                (0..row.len())
                    .map(|i| value(row, i))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        Ok(QueryResult { columns, rows: out })
    }
}

impl Db for Postgres {
    fn blob_type(&self) -> &'static str {
        "BYTEA"
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        let word = sql
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        let ends = matches!(word.as_str(), "COMMIT" | "ROLLBACK");
        if ends && self.client.is_none() {
            // The connection went while the transaction was open: the
            // server rolled it back already.
            self.in_transaction = false;
            return if word == "ROLLBACK" {
                Ok(())
            } else {
                Err(DbError::Config(
                    "the connection to the store broke before the commit".into(),
                ))
            };
        }
        self.ensure_connected()?;
        let client = self.client.as_ref().expect("connected");
        let r = within(&self.rt, self.wait, client.batch_execute(sql));
        let r = self.settle(r);
        match word.as_str() {
            "BEGIN" => self.in_transaction = r.is_ok(),
            "COMMIT" | "ROLLBACK" => self.in_transaction = false,
            _ => {}
        }
        r
    }

    fn exec(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let sql = numbered(sql);
        let params: Vec<Param<'_>> = params.iter().map(Param).collect();
        let refs = bind(&params);
        self.ensure_connected()?;
        let client = self.client.as_ref().expect("connected");
        let r = within(&self.rt, self.wait, client.execute(sql.as_str(), &refs));
        self.settle(r)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<QueryResult, DbError> {
        self.run(sql, params)
    }

    fn begin_write(&mut self) -> Result<(), DbError> {
        self.batch("BEGIN")
    }

    fn has_table(&mut self, name: &str) -> Result<bool, DbError> {
        let r = self.run(
            "SELECT COUNT(*) FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_name = ?",
            &[Value::Text(name.to_string())],
        )?;
        Ok(matches!(r.rows.first().and_then(|r| r.first()), Some(Value::Integer(n)) if *n > 0))
    }

    fn lock_schema(&mut self) -> Result<(), DbError> {
        // An advisory lock, taken before the schema_version table exists
        // (two sessions creating one table at once fail on the catalog's
        // unique index, IF NOT EXISTS or not) and held to the end of the
        // migration's transaction.
        self.batch(&format!("SELECT pg_advisory_xact_lock({SCHEMA_LOCK})"))
    }

    fn is_read_only(&mut self, _sql: &str) -> Option<Result<bool, DbError>> {
        // PostgreSQL cannot tell before running; the read-only transaction
        // below refuses any write instead.
        None
    }

    fn query_read_only(&mut self, sql: &str) -> Result<QueryResult, DbError> {
        self.batch("BEGIN TRANSACTION READ ONLY")?;
        let r = self.run(sql, &[]);
        let end = self.batch("ROLLBACK");
        let r = r?;
        end?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered() {
        assert_eq!(
            numbered("INSERT INTO t (a, b) VALUES (?, ?)"),
            "INSERT INTO t (a, b) VALUES ($1, $2)"
        );
        assert_eq!(numbered("SELECT 1"), "SELECT 1");
    }

    #[test]
    fn names_shown_without_the_server_are_quoted_identifiers() {
        assert_eq!(quoted_or_user("results"), "\"results\"");
        assert_eq!(quoted_or_user("a\"b"), "\"a\"\"b\"");
        assert_eq!(quoted_or_user(""), "USER");
    }
}
