//! Database backends of sojourn, and the choice among them.
//!
//! This crate owns the mapping from a backend URL (`null:`, `memory:`,
//! `sqlite:PATH`, ...) to a concrete [`Backend`]. Each real database lives in
//! its own module behind a cargo feature; the driver-free `null:` and
//! `memory:` backends live in `sojourn-core` and are re-exported here.
//!
//! The executor is generic over `B: Backend`, so the choice is an enum,
//! [`AnyBackend`], and a [`Visitor`] turns it back into a concrete type
//! at one place in the caller: every operation is then a direct,
//! monomorphised call, with no dynamic dispatch on the hot path.

use std::future::Future;
use std::path::Path;

pub use sojourn_core::backend::memory::{MemoryBackend, MemoryOptions};
pub use sojourn_core::backend::null::{NullBackend, NullConnection};
use sojourn_core::backend::Backend;
use sojourn_core::properties::Properties;

#[cfg(feature = "bigtable")]
pub mod bigtable;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod liops_sql;
#[cfg(feature = "memcached")]
pub mod memcached;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(all(feature = "postgres", target_os = "linux"))]
mod proc_cpu;
#[cfg(feature = "redis")]
pub mod redis;
#[cfg(feature = "rocksdb")]
pub mod rocksdb;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod sql;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod url;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod vote_sql;
#[cfg(any(feature = "redis", feature = "memcached"))]
mod wire;

#[cfg(feature = "bigtable")]
pub use bigtable::BigtableBackend;
#[cfg(feature = "memcached")]
pub use memcached::MemcachedBackend;
#[cfg(feature = "mysql")]
pub use mysql::MysqlBackend;
#[cfg(feature = "postgres")]
pub use postgres::PostgresBackend;
#[cfg(feature = "redis")]
pub use redis::RedisBackend;
#[cfg(feature = "rocksdb")]
pub use rocksdb::RocksBackend;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteBackend;
pub use url::{accepted_forms, redact_url, OpenError};

/// One backend of any kind compiled into this build.
#[derive(Debug)]
pub enum AnyBackend {
    Null(NullBackend),
    Memory(MemoryBackend),
    #[cfg(feature = "sqlite")]
    Sqlite(SqliteBackend),
    // Boxed: these hold their whole configuration, much larger than the
    // other variants.
    #[cfg(feature = "redis")]
    Redis(Box<RedisBackend>),
    #[cfg(feature = "memcached")]
    Memcached(Box<MemcachedBackend>),
    #[cfg(feature = "postgres")]
    Postgres(PostgresBackend),
    #[cfg(feature = "mysql")]
    Mysql(MysqlBackend),
    #[cfg(feature = "rocksdb")]
    Rocksdb(RocksBackend),
    #[cfg(feature = "bigtable")]
    Bigtable(BigtableBackend),
}

impl AnyBackend {
    /// What the backend points at; never contains a password.
    pub fn describe(&self) -> String {
        struct Describe;
        impl Visitor for Describe {
            type Output = String;
            fn visit<B: Backend>(self, b: &B) -> String {
                b.describe()
            }
        }
        self.visit(Describe)
    }
}

/// Open the backend a URL names.
///
/// Accepted forms: `null:` (also the YCSB binding names `null` and `basic`),
/// `memory:` with an optional query of test hooks
/// (`memory:?stall_at=5000&stall_ms=200`, `memory:?max_ops_per_sec=1000`),
/// `sqlite:PATH` (relative or absolute), and `sqlite:` or `sqlite` for
/// `default_sqlite_path`; `redis://...` or `redis` with YCSB's `redis.*`
/// properties; `memcached://host:port` or `memcached` with
/// `memcached.hosts`; `postgres://...` and `mysql://...` (see their
/// modules), `rocksdb:PATH` and
/// `bigtable://PROJECT/INSTANCE/TABLE` when compiled in, and YCSB's JDBC form: `jdbc` (or `postgres`, `mysql`) with the
/// URL in the `db.url` property. Opening does not touch the database: that happens
/// in [`Backend::prepare`], [`Backend::is_empty`] and [`Backend::connect`].
pub fn open(
    url: &str,
    props: &Properties,
    default_sqlite_path: &Path,
) -> Result<AnyBackend, OpenError> {
    // Backend settings given as YCSB properties (redis.host, db.url, ...)
    // are read by each backend's `open`.
    let target = match url::parse(url)? {
        url::Target::DbUrlProperty { family } => db_url_target(url, family, props)?,
        target => target,
    };
    match target {
        url::Target::Null => Ok(AnyBackend::Null(NullBackend)),
        url::Target::Memory { query } => MemoryBackend::from_query(query)
            .map(AnyBackend::Memory)
            .map_err(|e| OpenError::Invalid {
                url: redact_url(url.trim()),
                message: e.to_string(),
            }),
        #[cfg(feature = "sqlite")]
        url::Target::Sqlite { path } => Ok(AnyBackend::Sqlite(SqliteBackend::new(
            path.map_or(default_sqlite_path, Path::new),
        ))),
        // `url::parse` reports a backend that is not compiled in, so this
        // arm is unreachable; it only keeps the match exhaustive.
        #[cfg(not(feature = "sqlite"))]
        url::Target::Sqlite { .. } => {
            let _ = default_sqlite_path;
            Err(OpenError::NotCompiled {
                scheme: "sqlite".to_string(),
                feature: "sqlite",
                accepted: accepted_forms(),
            })
        }
        #[cfg(feature = "redis")]
        url::Target::Redis { url } => {
            RedisBackend::open(url, props).map(|b| AnyBackend::Redis(Box::new(b)))
        }
        #[cfg(not(feature = "redis"))]
        url::Target::Redis { .. } => Err(OpenError::NotCompiled {
            scheme: "redis".to_string(),
            feature: "redis",
            accepted: accepted_forms(),
        }),
        #[cfg(feature = "memcached")]
        url::Target::Memcached { url } => {
            MemcachedBackend::open(url, props).map(|b| AnyBackend::Memcached(Box::new(b)))
        }
        #[cfg(not(feature = "memcached"))]
        url::Target::Memcached { .. } => Err(OpenError::NotCompiled {
            scheme: "memcached".to_string(),
            feature: "memcached",
            accepted: accepted_forms(),
        }),
        #[cfg(feature = "postgres")]
        url::Target::Postgres { url } => PostgresBackend::open(url, props)
            .map(AnyBackend::Postgres)
            .map_err(|e| OpenError::Invalid {
                url: redact_url(url.trim()),
                message: e.to_string(),
            }),
        #[cfg(feature = "mysql")]
        url::Target::Mysql { url } => MysqlBackend::open(url, props)
            .map(AnyBackend::Mysql)
            .map_err(|e| OpenError::Invalid {
                url: redact_url(url.trim()),
                message: e.to_string(),
            }),
        #[cfg(feature = "rocksdb")]
        url::Target::Rocksdb { path } => RocksBackend::from_url(path, props)
            .map(AnyBackend::Rocksdb)
            .map_err(|message| invalid(url, message)),
        #[cfg(not(feature = "rocksdb"))]
        url::Target::Rocksdb { .. } => Err(not_compiled("rocksdb")),
        #[cfg(feature = "bigtable")]
        url::Target::Bigtable {
            project,
            instance,
            table,
        } => BigtableBackend::from_url(project, instance, table, props)
            .map(AnyBackend::Bigtable)
            .map_err(|message| invalid(url, message)),
        #[cfg(not(feature = "bigtable"))]
        url::Target::Bigtable { .. } => Err(not_compiled("bigtable")),
        // `url::parse` reports SQL backends that are not compiled in, and
        // `db_url_target` resolves the property form.
        #[allow(unreachable_patterns)]
        _ => Err(OpenError::Unknown {
            given: redact_url(url.trim()),
            accepted: accepted_forms(),
        }),
    }
}

/// The backend named by YCSB's `db.url` property, for `jdbc` (YCSB's JDBC
/// binding name) and the bare names `postgres`, `mysql`, ...
fn db_url_target<'p>(
    name: &str,
    family: Option<url::SqlFamily>,
    props: &'p Properties,
) -> Result<url::Target<'p>, OpenError> {
    let Some(db_url) = props.get("db.url") else {
        return Err(OpenError::Invalid {
            url: name.to_string(),
            message: format!(
                "`{name}` needs a database URL: give one instead (e.g. \
                 postgres://user@127.0.0.1:5432/db) or set -p db.url=jdbc:postgresql://..."
            ),
        });
    };
    let target = url::parse(db_url)?;
    let found = match target {
        url::Target::Postgres { .. } => Some(url::SqlFamily::Postgres),
        url::Target::Mysql { .. } => Some(url::SqlFamily::Mysql),
        _ => None,
    };
    match (found, family) {
        (Some(f), Some(want)) if f != want => Err(OpenError::Invalid {
            url: redact_url(db_url),
            message: format!("db.url names another database than `{name}`"),
        }),
        (Some(_), _) => Ok(target),
        (None, _) => Err(OpenError::Invalid {
            url: redact_url(db_url),
            message: "db.url must be a PostgreSQL or MySQL URL \
                      (jdbc:postgresql://..., postgres://..., jdbc:mysql://..., mysql://...)"
                .to_string(),
        }),
    }
}

#[allow(dead_code)] // unused when no backend with options is compiled in
fn invalid(url: &str, message: String) -> OpenError {
    OpenError::Invalid {
        url: redact_url(url.trim()),
        message,
    }
}

// `url::parse` reports a backend that is not compiled in, so the arms using
// this are unreachable; they only keep the match exhaustive.
#[allow(dead_code)]
fn not_compiled(feature: &'static str) -> OpenError {
    OpenError::NotCompiled {
        scheme: feature.to_string(),
        feature,
        accepted: accepted_forms(),
    }
}

/// Code generic over the backend type, run by [`AnyBackend::visit`] with
/// the concrete backend inside: every operation is then a direct,
/// monomorphised call. (A visitor rather than a macro because the `#[cfg]`
/// of each optional backend must be evaluated in this crate, against this
/// crate's features.)
pub trait Visitor {
    type Output;
    fn visit<B: Backend>(self, backend: &B) -> Self::Output;
}

/// [`Visitor`] for async code.
pub trait AsyncVisitor {
    type Output;
    fn visit<B: Backend>(self, backend: &B) -> impl Future<Output = Self::Output>;
}

impl AnyBackend {
    pub fn visit<V: Visitor>(&self, v: V) -> V::Output {
        match self {
            AnyBackend::Null(b) => v.visit(b),
            AnyBackend::Memory(b) => v.visit(b),
            #[cfg(feature = "sqlite")]
            AnyBackend::Sqlite(b) => v.visit(b),
            #[cfg(feature = "redis")]
            AnyBackend::Redis(b) => v.visit(b.as_ref()),
            #[cfg(feature = "memcached")]
            AnyBackend::Memcached(b) => v.visit(b.as_ref()),
            #[cfg(feature = "postgres")]
            AnyBackend::Postgres(b) => v.visit(b),
            #[cfg(feature = "mysql")]
            AnyBackend::Mysql(b) => v.visit(b),
            #[cfg(feature = "rocksdb")]
            AnyBackend::Rocksdb(b) => v.visit(b),
            #[cfg(feature = "bigtable")]
            AnyBackend::Bigtable(b) => v.visit(b),
        }
    }

    pub async fn visit_async<V: AsyncVisitor>(&self, v: V) -> V::Output {
        match self {
            AnyBackend::Null(b) => v.visit(b).await,
            AnyBackend::Memory(b) => v.visit(b).await,
            #[cfg(feature = "sqlite")]
            AnyBackend::Sqlite(b) => v.visit(b).await,
            #[cfg(feature = "redis")]
            AnyBackend::Redis(b) => v.visit(b.as_ref()).await,
            #[cfg(feature = "memcached")]
            AnyBackend::Memcached(b) => v.visit(b.as_ref()).await,
            #[cfg(feature = "postgres")]
            AnyBackend::Postgres(b) => v.visit(b).await,
            #[cfg(feature = "mysql")]
            AnyBackend::Mysql(b) => v.visit(b).await,
            #[cfg(feature = "rocksdb")]
            AnyBackend::Rocksdb(b) => v.visit(b).await,
            #[cfg(feature = "bigtable")]
            AnyBackend::Bigtable(b) => v.visit(b).await,
        }
    }
}
