//! Unit tests of the MySQL backend: its URLs and properties.

use sojourn_core::properties::Properties;

use super::*;
use crate::OpenError;

fn open(url: &str, props: &[(&str, &str)]) -> Result<MysqlBackend, OpenError> {
    let mut p = Properties::new();
    for (k, v) in props {
        p.set(k, v, sojourn_core::properties::Origin::CommandLine);
    }
    MysqlBackend::open(url, &OpenOptions::new(&p))
}

#[test]
fn urls() {
    let b = open("mysql://u:secret@127.0.0.1:3307/db", &[]).unwrap();
    let o = &b.inner.opts;
    assert_eq!(o.user(), Some("u"));
    assert_eq!(o.pass(), Some("secret"));
    assert_eq!(o.tcp_port(), 3307);
    assert_eq!(o.db_name(), Some("db"));
    assert!(o.client_found_rows());
    assert!(!o.prefer_socket());
    assert!(o.ssl_opts().is_none());
    assert!(!b.describe().contains("secret"));
    assert!(!format!("{b:?}").contains("secret"));

    let b = open(
        "jdbc:mysql://h:3306/ycsb?rewriteBatchedStatements=true&useSSL=true",
        &[
            ("db.user", "ju"),
            ("db.passwd", "jp"),
            ("timeout.ms", "300"),
        ],
    )
    .unwrap();
    let o = &b.inner.opts;
    assert_eq!((o.user(), o.pass()), (Some("ju"), Some("jp")));
    assert_eq!(o.db_name(), Some("ycsb"));
    assert!(o.ssl_opts().is_some());
    assert_eq!(b.timeout(), Duration::from_millis(300));

    let b = open("mariadb://h/db?password=p%40ss&stmt_cache_size=5", &[]).unwrap();
    assert_eq!(b.inner.opts.pass(), Some("p@ss"));
    assert_eq!(b.inner.opts.stmt_cache_size(), 5);

    assert!(open("mysql://h/db?ssl-mode=VERIFY_IDENTITY", &[]).is_err());
    assert!(open("mysql://h/db?ssl-mode=bogus", &[]).is_err());
    assert!(open("postgres://h/db", &[]).is_err());
    let err = open("mysql://u:hunter2@h/db?nosuchoption=1", &[]).unwrap_err();
    assert!(!err.to_string().contains("hunter2"), "{err}");
}
