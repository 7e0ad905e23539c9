//! The LIOPS workload's SQL for PostgreSQL and MySQL/MariaDB: PGIO's table
//! `(mykey, scratch, filler)`, its index, and the two statements of a run.
//!
//! PostgreSQL gets `fillfactor = 10`, so each row of about 1 KB fills its
//! 8 KB block and every row a statement touches is a block visit, as PGIO
//! intends. InnoDB has no fillfactor (its pages are 16 KB and hold about
//! fourteen such rows), and `CHAR` stops at 255 there, so MySQL's filler
//! is a `VARCHAR(1024)` written full. The index is `(mykey ASC)`: the
//! default btree on PostgreSQL and MySQL, and a range (not hash) index on
//! YugabyteDB, as ybio makes it.
//!
//! The select sums `scratch` rather than counting alone, so that every row
//! is read from the table and not answered from the index; the count says
//! how many rows it read.

use std::time::Duration;

use sojourn_core::workload::liops::{LiopsConfig, FILLER_WIDTH};

use crate::sql::{self, Dialect};

/// A batch of thousands of rows is not one operation: its load gets at
/// least a minute, whatever the operation timeout.
pub(crate) const LOAD_BATCH_TIMEOUT: Duration = Duration::from_secs(60);

/// Statements that create the tables of `cfg` if absent; with `drop`, each
/// removed first.
pub(crate) fn setup(d: Dialect, cfg: &LiopsConfig, drop: bool) -> Vec<String> {
    let mut statements = Vec::new();
    for table in cfg.tables() {
        if drop {
            statements.push(sql::drop_table(&table));
        }
        statements.push(create_table(d, &table));
    }
    statements
}

fn create_table(d: Dialect, table: &str) -> String {
    match d {
        Dialect::Postgres => format!(
            "CREATE TABLE IF NOT EXISTS {table} (mykey BIGINT NOT NULL, scratch BIGINT NOT NULL, \
             filler CHAR({FILLER_WIDTH}) NOT NULL) WITH (fillfactor = 10)"
        ),
        Dialect::Mysql => format!(
            "CREATE TABLE IF NOT EXISTS {table} (mykey BIGINT NOT NULL, scratch BIGINT NOT NULL, \
             filler VARCHAR({FILLER_WIDTH}) NOT NULL)"
        ),
    }
}

pub(crate) fn index_name(table: &str) -> String {
    format!("{table}_mykey")
}

/// PostgreSQL's form has `IF NOT EXISTS`; MySQL's callers look first.
pub(crate) fn create_index(d: Dialect, table: &str) -> String {
    let name = index_name(table);
    match d {
        Dialect::Postgres => format!("CREATE INDEX IF NOT EXISTS {name} ON {table} (mykey ASC)"),
        Dialect::Mysql => format!("CREATE INDEX {name} ON {table} (mykey ASC)"),
    }
}

pub(crate) fn analyze(d: Dialect, table: &str) -> String {
    match d {
        Dialect::Postgres => format!("ANALYZE {table}"),
        Dialect::Mysql => format!("ANALYZE TABLE {table}"),
    }
}

/// Rows read and the sum of their `scratch` over `mykey` in (lo, hi).
pub(crate) fn select(d: Dialect, table: &str) -> String {
    format!(
        "SELECT COUNT(*), SUM(scratch) FROM {table} WHERE mykey BETWEEN {} AND {}",
        d.placeholder(1),
        d.placeholder(2)
    )
}

/// Add one to `scratch` over `mykey` in (lo, hi).
pub(crate) fn update(d: Dialect, table: &str) -> String {
    format!(
        "UPDATE {table} SET scratch = scratch + 1 WHERE mykey BETWEEN {} AND {}",
        d.placeholder(1),
        d.placeholder(2)
    )
}
