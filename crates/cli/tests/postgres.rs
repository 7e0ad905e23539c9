//! End to end against a real PostgreSQL: the `sojourn` binary loads and
//! runs workloads A and E, reads a table made by YCSB's documented DDL and
//! plain SQL, and runs through a server stall and a crash and restart.
#![cfg(feature = "postgres")]

mod sql_common;
mod util;

use std::time::Duration;

use sojourn_testkit::postgres_server::{self as pg, Postgres};
use sql_common::{Fault, TestDb};

impl TestDb for Postgres {
    fn url(&self) -> String {
        Postgres::url(self)
    }
    fn url_without_password(&self) -> String {
        Postgres::url_without_password(self)
    }
    fn jdbc_url(&self) -> String {
        format!(
            "jdbc:postgresql://127.0.0.1:{}/{}",
            self.port(),
            pg::DATABASE
        )
    }
    fn user(&self) -> &'static str {
        pg::USER
    }
    fn password(&self) -> &'static str {
        pg::PASSWORD
    }
    fn password_env(&self) -> &'static str {
        "PGPASSWORD"
    }
    fn sql(&self, sql: &str) -> String {
        self.psql(sql)
    }
    fn pause(&self) {
        Postgres::pause(self)
    }
    fn resume(&self) {
        Postgres::resume(self)
    }
    fn kill(&mut self) {
        Postgres::kill(self)
    }
    fn restart(&mut self) {
        Postgres::restart(self)
    }
    fn cut_connections(&self) -> usize {
        self.psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
        )
        .trim()
        .parse()
        .unwrap()
    }
}

#[test]
fn workloads_a_and_e() {
    let Some(db) = Postgres::start() else { return };
    sql_common::workloads_a_and_e(&db);
}

#[test]
fn reads_a_table_made_by_plain_sql() {
    let Some(db) = Postgres::start() else { return };
    sql_common::reads_a_table_made_by_plain_sql(&db);
}

#[test]
fn a_table_missing_a_column() {
    let Some(db) = Postgres::start() else { return };
    sql_common::a_table_missing_a_column(&db, "column \"field2\" does not exist (SQLSTATE 42703)");
}

#[test]
fn survives_a_stall_longer_than_the_timeout() {
    let Some(mut db) = Postgres::start() else {
        return;
    };
    sql_common::survives(&mut db, Fault::Stall(Duration::from_secs(2)));
}

#[test]
fn survives_its_connections_being_cut() {
    let Some(mut db) = Postgres::start() else {
        return;
    };
    sql_common::survives(&mut db, Fault::Cut(Duration::from_secs(1)));
}

#[test]
fn survives_a_crash_and_restart() {
    let Some(mut db) = Postgres::start() else {
        return;
    };
    sql_common::survives(&mut db, Fault::Restart(Duration::from_secs(1)));
}
