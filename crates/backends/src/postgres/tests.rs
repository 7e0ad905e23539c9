//! Unit tests of the PostgreSQL backend: URLs, properties, SQLSTATEs.

use sojourn_core::properties::Properties;
use tokio_postgres::config::SslMode;

use super::*;
use crate::OpenError;

/// The backend of `url` and `props`, for a run of `workers` connections.
fn open_for(
    url: &str,
    props: &[(&str, &str)],
    workers: usize,
) -> Result<PostgresBackend, OpenError> {
    let mut p = Properties::new();
    for (k, v) in props {
        p.set(k, v, sojourn_core::properties::Origin::CommandLine);
    }
    PostgresBackend::open(
        url,
        &OpenOptions {
            workers,
            ..OpenOptions::new(&p)
        },
    )
}

fn open(url: &str, props: &[(&str, &str)]) -> Result<PostgresBackend, OpenError> {
    open_for(url, props, 1)
}

#[test]
fn the_sqlstate_is_read_from_the_failure_s_words() {
    let words = "ERROR: could not serialize access (SQLSTATE 40001)";
    assert_eq!(super::sqlstate::sqlstate(words), Some("40001"));
    assert_eq!(super::sqlstate::sqlstate("timed out after 100 ms"), None);
    assert!(super::statements_stand(words));
    assert!(super::statements_stand(
        "ERROR: duplicate key (SQLSTATE 23505)"
    ));
    assert!(!super::statements_stand(
        "ERROR: relation \"t\" does not exist (SQLSTATE 42P01)"
    ));
    assert!(!super::statements_stand("the server closed the connection"));
}
#[test]
fn urls() {
    let b = open("postgres://u:secret@127.0.0.1:5439/db", &[]).unwrap();
    assert_eq!(b.inner.config.get_user(), Some("u"));
    assert_eq!(b.inner.config.get_password(), Some(&b"secret"[..]));
    assert_eq!(b.inner.config.get_ports(), &[5439]);
    assert_eq!(b.inner.config.get_dbname(), Some("db"));
    assert!(b.inner.tls.is_none());
    assert!(!b.describe().contains("secret"));
    assert!(!format!("{b:?}").contains("secret"));
    assert_eq!(b.timeout(), crate::pool::DEFAULT_TIMEOUT);

    let b = open(
        "jdbc:postgresql://h:5432/ycsb?reWriteBatchedInserts=true&ssl=true",
        &[
            ("db.user", "ju"),
            ("db.passwd", "jp"),
            ("timeout.ms", "250"),
        ],
    )
    .unwrap();
    assert_eq!(b.inner.config.get_user(), Some("ju"));
    assert_eq!(b.inner.config.get_password(), Some(&b"jp"[..]));
    assert_eq!(b.inner.config.get_dbname(), Some("ycsb"));
    assert!(b.inner.tls.is_some());
    assert_eq!(b.inner.config.get_ssl_mode(), SslMode::Require);
    assert_eq!(b.timeout(), Duration::from_millis(250));

    // The URL's password wins over db.passwd; query parameters are
    // percent-decoded; application_name passes through.
    let b = open(
        "postgresql://h/db?password=p%40ss&application_name=x&sslmode=require",
        &[("db.passwd", "other")],
    )
    .unwrap();
    assert_eq!(b.inner.config.get_password(), Some(&b"p@ss"[..]));
    assert_eq!(b.inner.config.get_application_name(), Some("x"));
    assert!(!b.describe().contains("p%40ss"), "{}", b.describe());

    assert!(open("postgres://h/db?sslmode=verify-full", &[]).is_err());
    assert!(open("postgres://h/db?sslmode=bogus", &[]).is_err());
    assert!(open("postgres://h/db", &[("timeout.ms", "0")]).is_err());
    assert!(open("mysql://h/db", &[]).is_err());

    let b = open_for("postgres://h/db", &[("connections", "2")], 16).unwrap();
    assert_eq!(
        b.describe(),
        "postgres://h/db (16 in flight over 2 connections)"
    );
    assert_eq!(b.pool.as_ref().map(|p| p.slots.len()), Some(2));
    let b = open_for("postgres://h/db", &[("connections", "4")], 4).unwrap();
    assert!(b.pool.is_none());
    assert!(open("postgres://h/db", &[("connections", "0")]).is_err());
    let err = open("postgres://u:hunter2@h/db?nosuchoption=1", &[]).unwrap_err();
    assert!(!err.to_string().contains("hunter2"), "{err}");
}
