//! End to end against a real MariaDB (the MySQL backend): the `sojourn` binary loads and
//! runs workloads A and E, reads a table made by YCSB's documented DDL and
//! plain SQL, and runs through a server stall and a crash and restart.
#![cfg(feature = "mysql")]

mod sql_common;
mod util;

use std::time::Duration;

use sojourn_testkit::mariadb_server::{self as my, Mariadb};
use sql_common::{Fault, TestDb};

impl TestDb for Mariadb {
    fn url(&self) -> String {
        Mariadb::url(self)
    }
    fn url_without_password(&self) -> String {
        Mariadb::url_without_password(self)
    }
    fn jdbc_url(&self) -> String {
        format!("jdbc:mysql://127.0.0.1:{}/{}", self.port(), my::DATABASE)
    }
    fn user(&self) -> &'static str {
        my::USER
    }
    fn password(&self) -> &'static str {
        my::PASSWORD
    }
    fn password_env(&self) -> &'static str {
        "MYSQL_PWD"
    }
    fn sql(&self, sql: &str) -> String {
        Mariadb::sql(self, sql)
    }
    fn pause(&self) {
        Mariadb::pause(self)
    }
    fn resume(&self) {
        Mariadb::resume(self)
    }
    fn kill(&mut self) {
        Mariadb::kill(self)
    }
    fn restart(&mut self) {
        Mariadb::restart(self)
    }
    fn cut_connections(&self) -> usize {
        let ids = self.sql(&format!(
            "SELECT id FROM information_schema.processlist \
             WHERE id <> CONNECTION_ID() AND user = '{}'",
            self.user()
        ));
        let ids: Vec<&str> = ids.split_whitespace().collect();
        let kills: String = ids
            .iter()
            .map(|id| format!("KILL CONNECTION {id};"))
            .collect();
        if !kills.is_empty() {
            self.sql(&kills);
        }
        ids.len()
    }
}

#[test]
fn workloads_a_and_e() {
    let Some(db) = Mariadb::start() else { return };
    sql_common::workloads_a_and_e(&db);
}

#[test]
fn reads_a_table_made_by_plain_sql() {
    let Some(db) = Mariadb::start() else { return };
    sql_common::reads_a_table_made_by_plain_sql(&db);
}

#[test]
fn a_table_missing_a_column() {
    let Some(db) = Mariadb::start() else { return };
    sql_common::a_table_missing_a_column(&db, "ERROR 1054 (42S22): Unknown column 'FIELD2'");
}

#[test]
fn survives_a_stall_longer_than_the_timeout() {
    let Some(mut db) = Mariadb::start() else {
        return;
    };
    sql_common::survives(&mut db, Fault::Stall(Duration::from_secs(2)));
}

#[test]
fn survives_its_connections_being_cut() {
    let Some(mut db) = Mariadb::start() else {
        return;
    };
    sql_common::survives(&mut db, Fault::Cut(Duration::from_secs(1)));
}

#[test]
fn survives_a_crash_and_restart() {
    let Some(mut db) = Mariadb::start() else {
        return;
    };
    sql_common::survives(&mut db, Fault::Restart(Duration::from_secs(1)));
}

/// pgbench's scripts on MariaDB: `-b tpcb-like`'s tables loaded at the
/// scale asked; its transactions under each protocol make pgbench's four
/// writes (every balance's sum the sum of the history's deltas), its
/// `END` committing; a script of one's own keeps a value with `\gset`
/// and branches on it.
#[test]
fn pgbench_scripts() {
    use util::*;
    let Some(db) = Mariadb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = db.url();
    let one = |sql: &str| -> i64 { db.sql(sql).trim().parse().unwrap() };
    ok(&sojourn(
        dir.path(),
        &["load", "--db", &url, "-b", "tpcb-like", "--scale", "2"],
    ));
    assert_eq!(one("SELECT count(*) FROM pgbench_accounts"), 200_000);
    assert_eq!(
        one("SELECT count(DISTINCT aid) FROM pgbench_accounts"),
        200_000
    );
    assert_eq!(one("SELECT max(aid) FROM pgbench_accounts"), 200_000);
    assert_eq!(
        one("SELECT count(*) FROM pgbench_accounts WHERE bid = 2"),
        100_000
    );
    assert_eq!(
        one("SELECT count(*) FROM pgbench_tellers WHERE bid = 2"),
        10
    );
    assert_eq!(one("SELECT count(*) FROM pgbench_branches"), 2);

    let mut done = 0;
    for (protocol, n) in [("prepared", 300), ("extended", 100), ("simple", 100)] {
        let out = sojourn(
            dir.path(),
            &[
                "run",
                "--db",
                &url,
                "-b",
                "tpcb-like",
                "-p",
                &format!("operationcount={n}"),
                "-p",
                &format!("script.protocol={protocol}"),
                "-threads",
                "4",
                "--seed",
                "5",
            ],
        );
        let s = parse_summary(&ok(&out));
        assert_eq!(
            get(&s, "tpcb-like", "Return=OK"),
            n as f64,
            "{protocol}: {s:#?}"
        );
        done += n;
        assert_eq!(
            one("SELECT count(*) FROM pgbench_history"),
            done,
            "{protocol}"
        );
    }
    assert_pgbench_balances(&one);
    gset_and_if_script(dir.path(), &url, &one);
}

/// TPC-C on MariaDB (see `util::tpcc_end_to_end`).
#[test]
fn tpcc() {
    let Some(db) = Mariadb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let value = |sql: &str| -> f64 {
        let v = db.sql(sql);
        v.trim()
            .parse()
            .unwrap_or_else(|e| panic!("{sql}: {v:?}: {e}"))
    };
    let exec = |sql: &str| {
        db.sql(sql);
    };
    util::tpcc_end_to_end(dir.path(), &db.url(), &value, &exec);
}
