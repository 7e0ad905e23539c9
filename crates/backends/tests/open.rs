//! Backend selection from URLs, its error messages, and password redaction.

use std::path::Path;

use sojourn_core::properties::Properties;

use sojourn_backends::{open, redact_url, AnyBackend, OpenError, OpenOptions};

const DEFAULT: &str = "/var/lib/sojourn/default.db";

fn open_ok(url: &str) -> AnyBackend {
    open(
        url,
        &OpenOptions {
            default_sqlite: Path::new(DEFAULT),
            ..OpenOptions::new(&Properties::new())
        },
    )
    .unwrap_or_else(|e| panic!("{url}: {e}"))
}

fn open_err(url: &str) -> OpenError {
    match open(
        url,
        &OpenOptions {
            default_sqlite: Path::new(DEFAULT),
            ..OpenOptions::new(&Properties::new())
        },
    ) {
        Ok(b) => panic!("{url} opened as {}", b.describe()),
        Err(e) => e,
    }
}

fn assert_lists_forms(message: &str) {
    for form in ["null:", "basic", "memory:", "stall_at"] {
        assert!(message.contains(form), "`{form}` missing from: {message}");
    }
    #[cfg(feature = "sqlite")]
    assert!(message.contains("sqlite:PATH"), "{message}");
}

#[test]
fn null_forms() {
    for url in ["null:", "null", "basic", "NULL:", " null: "] {
        let backend = open_ok(url);
        assert!(matches!(backend, AnyBackend::Null(_)), "{url}");
        assert_eq!(backend.describe(), "null:");
    }
}

#[test]
fn memory_forms() {
    for url in ["memory:", "memory", "memory:?"] {
        let backend = open_ok(url);
        assert!(matches!(backend, AnyBackend::Memory(_)), "{url}");
        assert_eq!(backend.describe(), "memory:");
    }
    let backend = open_ok("memory:?stall_at=5000&stall_ms=200");
    let AnyBackend::Memory(memory) = &backend else {
        panic!("not memory: {backend:?}");
    };
    assert_eq!(memory.options().stall_after_ops, Some(5000));
    assert_eq!(backend.describe(), "memory:?stall_at=5000&stall_ms=200");
    let backend = open_ok("memory:?max_ops_per_sec=250.5");
    assert_eq!(backend.describe(), "memory:?max_ops_per_sec=250.5");
}

#[cfg(feature = "sqlite")]
#[test]
fn sqlite_forms() {
    let cases = [
        ("sqlite:/tmp/x/bench.db", "/tmp/x/bench.db"),
        ("sqlite:rel/bench.db", "rel/bench.db"),
        ("SQLite:bench.db", "bench.db"),
        ("sqlite:", DEFAULT),
        ("sqlite", DEFAULT),
    ];
    for (url, path) in cases {
        let backend = open_ok(url);
        let AnyBackend::Sqlite(sqlite) = &backend else {
            panic!("{url} is not sqlite: {backend:?}");
        };
        assert_eq!(sqlite.path(), Path::new(path), "{url}");
        assert_eq!(backend.describe(), format!("sqlite:{path}"));
    }
}

#[cfg(not(feature = "sqlite"))]
#[test]
fn sqlite_not_compiled_names_the_feature() {
    let err = open_err("sqlite:x.db");
    assert!(matches!(err, OpenError::NotCompiled { .. }), "{err}");
    assert!(err.to_string().contains("--features sqlite"), "{err}");
}

#[test]
fn unknown_backends_list_the_accepted_forms() {
    for url in [
        "",
        "foo",
        "couchbase:host",
        "mongodb://u:s3cr3t@host/db",
        "./bench.db",
        "file.db",
    ] {
        let err = open_err(url);
        assert!(matches!(err, OpenError::Unknown { .. }), "{url}: {err}");
        let message = err.to_string();
        assert_lists_forms(&message);
        assert!(!message.contains("s3cr3t"), "{message}");
    }
}

#[test]
fn databases_spoken_to_through_another_protocol_say_which() {
    let err = open_err("yugabyte://bench:s3cr3t@db:5433/ycsb");
    assert!(matches!(err, OpenError::SpokenAs { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("postgres://user@host:5433/yugabyte"),
        "{message}"
    );
    assert!(
        message.contains("cassandra://host:9042/keyspace"),
        "{message}"
    );
    assert!(!message.contains("s3cr3t"), "{message}");
}

#[cfg(feature = "postgres")]
#[test]
fn sql_urls_open_without_contacting_anything() {
    let backend = open_ok("postgres://bench:s3cr3t@db:5432/ycsb");
    assert!(matches!(backend, AnyBackend::Postgres(_)));
    assert_eq!(backend.describe(), "postgres://bench:***@db:5432/ycsb");
    // YCSB's JDBC binding name takes the URL from db.url; so do the bare
    // database names.
    let mut props = Properties::new();
    props.set(
        "db.url",
        "jdbc:postgresql://db:5432/ycsb",
        sojourn_core::properties::Origin::CommandLine,
    );
    for name in ["jdbc", "postgres", "postgresql"] {
        let b = open(
            name,
            &OpenOptions {
                default_sqlite: Path::new(DEFAULT),
                ..OpenOptions::new(&props)
            },
        )
        .expect(name);
        assert_eq!(b.describe(), "jdbc:postgresql://db:5432/ycsb");
    }
    let err = open(
        "mysql",
        &OpenOptions {
            default_sqlite: Path::new(DEFAULT),
            ..OpenOptions::new(&props)
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("another database"), "{err}");
    let err = open_err("jdbc");
    assert!(err.to_string().contains("db.url"), "{err}");
}

#[test]
fn redis_and_memcached_forms() {
    #[cfg(feature = "redis")]
    {
        assert!(matches!(open_ok("redis"), AnyBackend::Redis(_)));
        let b = open_ok("redis://u:s3cr3t@127.0.0.1:7000/1");
        assert_eq!(b.describe(), "redis://u@127.0.0.1:7000/1");
        let err = open_err("redis://h:notaport").to_string();
        assert!(err.contains("notaport"), "{err}");
        assert!(open_err("redis://:s3cr3t@h?x=1")
            .to_string()
            .contains("***"));
    }
    #[cfg(feature = "memcached")]
    {
        assert!(matches!(open_ok("memcached"), AnyBackend::Memcached(_)));
        assert_eq!(
            open_ok("memcached://127.0.0.1:7001").describe(),
            "memcached://127.0.0.1:7001"
        );
        assert!(matches!(
            open_err("memcached://a:1/path"),
            OpenError::Invalid { .. }
        ));
    }
}

#[test]
fn bad_options_are_invalid() {
    for (url, needle) in [
        ("memory:?bogus=1", "bogus"),
        ("memory:?stall_at=5", "stall_ms"),
        ("memory:?max_ops_per_sec=0", "max_ops_per_sec"),
        ("memory:somewhere", "options"),
        ("null:extra", "null:"),
    ] {
        let err = open_err(url);
        assert!(matches!(err, OpenError::Invalid { .. }), "{url}: {err}");
        let message = err.to_string();
        assert!(message.contains(needle), "{url}: {message}");
    }
}

#[test]
fn redaction() {
    let cases = [
        (
            "postgres://alice:s3cr3t@db.example:5432/ycsb",
            "postgres://alice:***@db.example:5432/ycsb",
        ),
        ("redis://:s3cr3t@cache:6379/0", "redis://:***@cache:6379/0"),
        // Unencoded `/` and `@` in a password do not leak it.
        ("redis://:s3/cr@3t@cache:6379", "redis://:***@cache:6379"),
        ("mysql://bob@db/ycsb", "mysql://bob@db/ycsb"),
        ("mysql://db/ycsb", "mysql://db/ycsb"),
        (
            "postgres://db/ycsb?user=a&password=s3cr3t&sslmode=require",
            "postgres://db/ycsb?user=a&password=***&sslmode=require",
        ),
        (
            "postgres://a:s3cr3t@db/ycsb?PWD=s3cr3t#frag",
            "postgres://a:***@db/ycsb?PWD=***#frag",
        ),
        ("sqlite:/tmp/bench.db", "sqlite:/tmp/bench.db"),
        (
            "memory:?stall_at=5&stall_ms=2",
            "memory:?stall_at=5&stall_ms=2",
        ),
        ("", ""),
    ];
    for (url, expected) in cases {
        assert_eq!(redact_url(url), expected, "{url}");
    }
}
