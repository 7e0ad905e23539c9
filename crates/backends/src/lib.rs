//! Database backends of sojourn, and the choice among them.
//!
//! This crate owns the mapping from a backend URL (`null:`, `memory:`,
//! `sqlite:PATH`, ...) to a concrete [`Backend`]. Each backend is one line
//! of the table at the end of this file: its [`AnyBackend`] variant, its
//! type, for a real database its module and cargo feature, the URL schemes
//! and YCSB binding names it answers to, and the prefixes of the properties
//! it reads. The enum, [`open`]'s dispatch, the visitors, the error for a
//! backend left out of this build, [`accepted_forms`] and
//! [`property_prefixes`] are all made from that table; what only the
//! backend knows (its URL forms, how it reads its URL and properties) is its
//! [`Open`] implementation. The driver-free `null:` and `memory:` backends
//! live in `sojourn-core`; their URLs are read in [`builtin`].
//!
//! Adding a database: its module (declared here, behind its feature),
//! implementing [`Backend`] and [`Open`]; its line in the table; its cargo
//! feature; its test server in `sojourn-testkit`; its tests.
//!
//! The executor is generic over `B: Backend`, so the choice is an enum,
//! [`AnyBackend`], and a [`Visitor`] turns it back into a concrete type
//! at one place in the caller: every operation is then a direct,
//! monomorphised call, with no dynamic dispatch on the hot path.

use std::path::Path;
use std::sync::OnceLock;

pub use sojourn_core::backend::memory::{MemoryBackend, MemoryOptions};
pub use sojourn_core::backend::null::{NullBackend, NullConnection};
use sojourn_core::backend::Backend;
use sojourn_core::properties::{Properties, UnknownKey};
pub use sojourn_core::redact::redact_url;

// The backends' own modules (registered in the table at the end), then
// what several of them share.
#[cfg(feature = "bigtable")]
pub mod bigtable;
#[cfg(feature = "cassandra")]
pub mod cassandra;
#[cfg(feature = "memcached")]
pub mod memcached;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "redis")]
pub mod redis;
#[cfg(feature = "rocksdb")]
pub mod rocksdb;
#[cfg(feature = "sqlite")]
pub mod sqlite;

#[cfg(any(
    feature = "redis",
    feature = "memcached",
    feature = "postgres",
    feature = "mysql",
    feature = "bigtable"
))]
mod backoff;
pub mod builtin;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "mysql"))]
mod columns;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod liops_sql;
#[cfg(any(feature = "redis", feature = "memcached"))]
mod pipelined;
#[cfg(any(
    feature = "redis",
    feature = "memcached",
    feature = "postgres",
    feature = "mysql",
    feature = "bigtable",
    feature = "cassandra"
))]
pub mod pool;
#[cfg(all(feature = "postgres", target_os = "linux"))]
mod proc_cpu;
#[cfg(any(
    feature = "postgres",
    feature = "mysql",
    feature = "cassandra",
    feature = "bigtable"
))]
mod settle;
#[cfg(any(feature = "postgres", feature = "mysql", feature = "cassandra"))]
mod shapes;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod sql;
#[cfg(any(feature = "postgres", feature = "mysql", feature = "cassandra"))]
mod text;
#[cfg(any(feature = "redis", feature = "cassandra"))]
mod tls_props;
pub mod url;
mod visit;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod vote_cache;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod vote_sql;

pub use url::{accepted_forms, OpenError};
pub use visit::{AsyncVisitor, Visitor};

/// What opening a backend needs besides its URL.
#[derive(Copy, Clone, Debug)]
pub struct OpenOptions<'a> {
    /// The run's properties: backends read their settings from them
    /// (`redis.mode`, `db.url`, `timeout.ms`, `connections`, ...).
    pub props: &'a Properties,
    /// Where `sqlite` without a path points.
    pub default_sqlite: &'a Path,
    /// Connections the run opens (the plan's), so that sockets shared by
    /// several of them (`connections=K`) are sized to the run.
    pub workers: usize,
}

impl<'a> OpenOptions<'a> {
    /// Options for one connection, with `sqlite` in the current folder.
    pub fn new(props: &'a Properties) -> OpenOptions<'a> {
        OpenOptions {
            props,
            default_sqlite: Path::new("sojourn.sqlite"),
            workers: 1,
        }
    }
}

/// What a backend declares to be opened from a URL; its line in the table
/// of this crate registers it.
pub trait Open: Backend + Sized {
    /// The URL forms it accepts, for the list in error messages.
    const FORMS: &'static [&'static str];

    /// Configure from `url` (trimmed; its scheme, in any case, is one that
    /// its registration lists) and `options`, or say why not: [`Open::open`]
    /// adds the URL, without its password. Touches nothing: connecting
    /// happens in [`Backend::prepare`], [`Backend::is_empty`] and
    /// [`Backend::connect`].
    fn configure(url: &str, options: &OpenOptions<'_>) -> Result<Self, String>;

    /// [`Open::configure`], refusals naming the URL.
    fn open(url: &str, options: &OpenOptions<'_>) -> Result<Self, OpenError> {
        // The CQL driver's rustls brings a second crypto provider, after
        // which drivers that rely on rustls' default find none.
        #[cfg(feature = "cassandra")]
        sojourn_tls::install_default_provider();
        Self::configure(url, options).map_err(|message| url::invalid(url, message))
    }
}

/// Open the backend a URL names: one of [`accepted_forms`], or YCSB's JDBC
/// form (`jdbc`, or a bare database name, with the URL in the `db.url`
/// property). Errors never show a password.
pub fn open(url: &str, options: &OpenOptions<'_>) -> Result<AnyBackend, OpenError> {
    let (registration, url) = url::resolve(url, options.props)?;
    registration.kind.open(url, options)
}

/// Whether `db_url` names a database that lives on this machine only (an
/// engine in the client's process, or its files): agents on other
/// machines cannot reach it. A URL no backend answers to is not.
pub fn is_local(db_url: &str) -> bool {
    let scheme = db_url.split([':', '?']).next().unwrap_or("");
    url::Registration::by_scheme(&scheme.to_ascii_lowercase()).is_some_and(|r| r.local)
}

/// Property prefixes that belong to backends (YCSB binding settings), so
/// that the plan does not report them as unknown; those of every registered
/// backend, compiled into this build or not.
pub fn property_prefixes() -> &'static [&'static str] {
    static PREFIXES: OnceLock<Vec<&'static str>> = OnceLock::new();
    PREFIXES.get_or_init(|| {
        let mut all: Vec<&'static str> = Vec::new();
        for prefix in REGISTRY.iter().flat_map(|r| r.prefixes) {
            if !all.contains(prefix) {
                all.push(prefix);
            }
        }
        all
    })
}

/// The properties under a backend's prefix (`redis.*`, `db.*`, ...) that
/// no backend reads, as unknown-property warnings with the likeliest
/// meant name: a backend property mistyped, or one from a YCSB binding
/// that sojourn does not implement, must not pass in silence.
pub fn unknown_properties(props: &Properties) -> Vec<UnknownKey> {
    let prefixes = property_prefixes();
    let mut known: Vec<&str> = Vec::new();
    let mut known_prefixes: Vec<&str> = Vec::new();
    for p in REGISTRY.iter().flat_map(|r| r.properties) {
        // An entry ending in `.` lets every key under it be.
        if p.ends_with('.') {
            known_prefixes.push(p);
        } else {
            known.push(p);
        }
    }
    props
        .unknown_keys(&known, &known_prefixes)
        .into_iter()
        .filter(|u| prefixes.iter().any(|p| u.key.starts_with(p)))
        .collect()
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

/// Everything made from the table of backends (see the crate
/// documentation). A line reads `Variant: Type, schemes [...], prefixes
/// [...]`, with `in module if "feature"` after the type of a backend behind
/// a feature, `#[boxed]` before a type much larger than the others, and
/// `jdbc` instead of `schemes` for a database YCSB's JDBC binding reaches.
macro_rules! backends {
    (@feature) => { None };
    (@feature $feature:literal) => { Some($feature) };
    (@compiled) => { true };
    (@compiled $feature:literal) => { cfg!(feature = $feature) };
    (@jdbc schemes) => { false };
    (@jdbc jdbc) => { true };
    (@stored $ty:ident) => { $ty };
    (@stored boxed $ty:ident) => { Box<$ty> };
    (@local) => { false };
    (@local $local:literal) => { $local };
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident: $(#[$boxed:ident])? $ty:ident $(in $module:ident if $feature:literal)?,
        $names:ident [$($scheme:literal),+],
        $(local = $local:literal,)?
        prefixes [$($prefix:literal),*]
        $(, properties [$($property:literal),* $(,)?])?;
    )*) => {
        $($(
            #[cfg(feature = $feature)]
            pub use $module::$ty;
        )?)*

        /// Every registered backend, compiled in or not.
        #[derive(Copy, Clone, Debug, PartialEq, Eq)]
        pub(crate) enum Kind {
            $($variant,)*
        }

        /// The table, in the order [`accepted_forms`] lists the forms.
        pub(crate) static REGISTRY: &[url::Registration] = &[$(
            url::Registration {
                kind: Kind::$variant,
                feature: backends!(@feature $($feature)?),
                compiled: backends!(@compiled $($feature)?),
                schemes: &[$($scheme),+],
                jdbc: backends!(@jdbc $names),
                local: backends!(@local $($local)?),
                prefixes: &[$($prefix),*],
                properties: &[$($($property),*)?],
            },
        )*];

        /// One backend of any kind compiled into this build.
        #[derive(Debug)]
        pub enum AnyBackend {
            $(
                $(#[doc = $doc])*
                $(#[cfg(feature = $feature)])?
                $variant(backends!(@stored $($boxed)? $ty)),
            )*
        }

        impl Kind {
            /// [`Open::FORMS`] of a backend compiled in; none otherwise.
            pub(crate) fn forms(self) -> &'static [&'static str] {
                match self {
                    $($(#[cfg(feature = $feature)])? Kind::$variant => <$ty as Open>::FORMS,)*
                    #[allow(unreachable_patterns)]
                    _ => &[],
                }
            }

            fn open(self, url: &str, options: &OpenOptions<'_>) -> Result<AnyBackend, OpenError> {
                match self {
                    $($(#[cfg(feature = $feature)])? Kind::$variant => {
                        <$ty as Open>::open(url, options).map(|b| AnyBackend::$variant(b.into()))
                    })*
                    // `url::resolve` names only backends compiled in.
                    #[allow(unreachable_patterns)]
                    _ => Err(url::unknown(url)),
                }
            }
        }

        impl AnyBackend {
            pub fn visit<V: Visitor>(&self, v: V) -> V::Output {
                match self {
                    $($(#[cfg(feature = $feature)])? AnyBackend::$variant(b) => v.visit::<$ty>(b),)*
                }
            }

            pub async fn visit_async<V: AsyncVisitor>(&self, v: V) -> V::Output {
                match self {
                    $($(#[cfg(feature = $feature)])? AnyBackend::$variant(b) => {
                        v.visit::<$ty>(b).await
                    })*
                }
            }
        }
    };
}

backends! {
    /// `null:`: answers OK at once, to measure sojourn itself.
    Null: NullBackend, schemes ["null", "basic"], prefixes [];
    /// `memory:`: an ordered map in this process, with test hooks.
    Memory: MemoryBackend, schemes ["memory"], local = true, prefixes ["memory."];
    Sqlite: SqliteBackend in sqlite if "sqlite", schemes ["sqlite"], local = true,
        prefixes ["sqlite."];
    // Boxed: these hold their whole configuration.
    Redis: #[boxed] RedisBackend in redis if "redis",
        schemes ["redis", "rediss"], prefixes ["redis."],
        properties [
            "redis.host", "redis.port", "redis.password", "redis.db", "redis.timeout",
            "redis.cluster", "redis.mode", "redis.command_group", "redis.checked",
            "redis.tls", "redis.tls.ca", "redis.tls.cert", "redis.tls.key", "redis.tls.insecure",
        ];
    Memcached: #[boxed] MemcachedBackend in memcached if "memcached",
        schemes ["memcached"], prefixes ["memcached."],
        properties ["memcached.hosts", "memcached.opTimeoutMillis", "memcached.checked"];
    // YCSB's JDBC binding needs db.driver; sojourn knows the driver from
    // the URL, so it is read and not needed.
    Postgres: PostgresBackend in postgres if "postgres",
        jdbc ["postgres", "postgresql"], prefixes ["db.", "jdbc.", "postgres."],
        properties ["db.url", "db.user", "db.passwd", "db.driver"];
    Mysql: MysqlBackend in mysql if "mysql",
        jdbc ["mysql", "mariadb"], prefixes ["db.", "jdbc.", "mysql."],
        properties ["db.url", "db.user", "db.passwd", "db.driver"];
    Rocksdb: RocksBackend in rocksdb if "rocksdb", schemes ["rocksdb"], local = true,
        prefixes ["rocksdb."],
        properties ["rocksdb.dir", "rocksdb.optionsfile"];
    // YCSB's cassandra-cql binding reads its contact points from the bare
    // keys `hosts` and `port`.
    Cassandra: CassandraBackend in cassandra if "cassandra",
        schemes ["cassandra", "cassandra-cql"], prefixes ["cassandra.", "hosts", "port"],
        properties [
            "hosts", "port", "cassandra.keyspace", "cassandra.username", "cassandra.password",
            "cassandra.readconsistencylevel", "cassandra.writeconsistencylevel",
            "cassandra.readtimeoutmillis", "cassandra.connecttimeoutmillis",
            "cassandra.coreconnections", "cassandra.maxconnections", "cassandra.tracing",
            "cassandra.useSSL", "cassandra.tls.ca", "cassandra.tls.cert", "cassandra.tls.key",
            "cassandra.tls.insecure", "cassandra.replicationfactor",
        ];
    // YCSB's Bigtable binding names the column family with a bare key; its
    // HBase client settings (hbase.*) have no meaning here and are let be.
    Bigtable: BigtableBackend in bigtable if "bigtable",
        schemes ["bigtable", "googlebigtable"],
        prefixes ["bigtable.", "google.", "hbase.", "columnfamily"],
        properties [
            "columnfamily", "bigtable.presplit", "bigtable.checkexists",
            "google.bigtable.project.id", "google.bigtable.instance.id",
            "google.bigtable.auth.json.keyfile", "hbase.",
        ];
}
