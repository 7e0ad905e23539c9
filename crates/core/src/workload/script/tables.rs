//! pgbench's four tables, as `pgbench -i -s SCALE` makes them: the
//! definitions, rows, balances and fillers of PostgreSQL's pgbench 15-17
//! (its steps `dtGvp`: drop, create, generate in the server, vacuum,
//! primary keys), in each dialect the scripts run on. The accounts are
//! loaded a unit of scale (100,000 rows) per operation, so a load spreads
//! over connections and reports its progress.

/// Rows per unit of scale, as pgbench loads them.
pub const BRANCHES: u64 = 1;
pub const TELLERS: u64 = 10;
pub const ACCOUNTS: u64 = 100_000;

/// Which SQL a database speaks, where pgbench's tables differ.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// PostgreSQL: pgbench's own statements.
    Postgres,
    /// SQLite: no fill factor, no `generate_series`, primary keys made
    /// with the table, `char(n)` unpadded (the filler written padded).
    Sqlite,
    /// MySQL and MariaDB: no fill factor, no `generate_series`, primary
    /// keys made with the table (InnoDB clusters rows by it, so adding it
    /// after would copy the table), `div` for integer division, `datetime`
    /// for PostgreSQL's `timestamp`, parameters as `?`.
    Mysql,
}

impl Dialect {
    /// Whether a statement's parameters are `?`, in order, rather than
    /// PostgreSQL's `$n`.
    pub fn positional(self) -> bool {
        self == Dialect::Mysql
    }

    /// Integer division.
    fn div(self) -> &'static str {
        match self {
            Dialect::Mysql => "div",
            Dialect::Postgres | Dialect::Sqlite => "/",
        }
    }
}

/// A workload's tables as SQL text in each dialect: what a backend that
/// runs SQL workloads is asked to set up, knowing nothing of the workload
/// (pgbench's tables, TPC-C's).
pub trait SqlTables: Send + Sync + std::fmt::Debug {
    fn sql(&self, d: Dialect) -> TablesSql;
}

/// The tables of [`SqlTables`] as the capability passes them.
pub type Tables = dyn SqlTables;

/// pgbench's tables at a scale: what a backend is asked to set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgbenchTables {
    pub scale: i64,
}

/// The SQL that sets pgbench's tables up, as a backend runs it: each list
/// in order, over one connection of its own.
#[derive(Clone, Debug, PartialEq)]
pub struct TablesSql {
    /// Drop the tables (pgbench's `d` step).
    pub drop: Vec<String>,
    /// Create the tables and fill the small ones (branches, tellers).
    pub create: Vec<String>,
    /// A query whose one value says whether any account is there.
    pub any_row: String,
    /// After the accounts: primary keys and statistics.
    pub finish: Vec<String>,
    /// A query whose one value is the scale (the branches).
    pub scale: String,
    /// Why a run found no tables, after the database's words.
    pub not_loaded: &'static str,
    /// Before a run, as pgbench's (unless `-n`): vacuum the small tables
    /// the builtins update and empty the history.
    pub vacuum: Vec<String>,
}

/// The integers `lo..=hi` as a row source named `name`, in `d`.
fn series(d: Dialect, name: &str, lo: i64, hi: i64) -> (String, String) {
    match d {
        Dialect::Postgres => (
            String::new(),
            format!("generate_series({lo}, {hi}) as {name}"),
        ),
        Dialect::Sqlite => (
            format!(
                "with recursive s({name}) as (select {lo} union all select {name} + 1 from s \
                 where {name} < {hi}) "
            ),
            "s".into(),
        ),
        // Ten digits crossed as many times as the count has digits: no
        // recursion, whose depth MySQL 8 caps at 1,000 by default.
        Dialect::Mysql => {
            let digits = (hi - lo).max(1).ilog10() + 1;
            let ten = "(select 0 d union all select 1 union all select 2 union all select 3 \
                       union all select 4 union all select 5 union all select 6 union all \
                       select 7 union all select 8 union all select 9)";
            let sum = (0..digits)
                .map(|k| format!("{} * d{k}.d", 10i64.pow(k)))
                .collect::<Vec<_>>()
                .join(" + ");
            let from = (0..digits)
                .map(|k| format!("{ten} d{k}"))
                .collect::<Vec<_>>()
                .join(", ");
            (
                String::new(),
                format!("(select {lo} + {sum} as {name} from {from}) s where {name} <= {hi}"),
            )
        }
    }
}

impl PgbenchTables {
    /// Why a run found no tables to run on, after the database's words.
    pub const NOT_LOADED: &'static str = "pgbench's tables are not there; load them first \
                                          (`sojourn load -b tpcb-like --scale N`)";

    /// The accounts of one unit of scale (`branch`, from 1), as pgbench's
    /// server-side generation inserts them: one load operation.
    pub fn accounts_batch(branch: u64, d: Dialect) -> String {
        let lo = ((branch - 1) * ACCOUNTS + 1) as i64;
        let hi = (branch * ACCOUNTS) as i64;
        let (with, from) = series(d, "aid", lo, hi);
        // PostgreSQL pads '' to char(84)'s 84 blanks; SQLite keeps what it
        // is given.
        let filler = match d {
            Dialect::Postgres | Dialect::Mysql => "''",
            Dialect::Sqlite => "printf('%84s', '')",
        };
        let div = d.div();
        format!(
            "insert into pgbench_accounts(aid,bid,abalance,filler) {with}select aid, (aid - 1) \
             {div} {ACCOUNTS} + 1, 0, {filler} from {from}"
        )
    }
}

impl SqlTables for PgbenchTables {
    fn sql(&self, d: Dialect) -> TablesSql {
        let s = self.scale;
        // At scale 20,000 and above the account ids pass 2^31.
        let aid = if s >= 20_000 { "bigint" } else { "int" };
        let (fill, key) = match d {
            Dialect::Postgres => (" with (fillfactor=100)", ""),
            Dialect::Sqlite | Dialect::Mysql => ("", " primary key"),
        };
        let (div, mtime) = match d {
            Dialect::Mysql => (d.div(), "datetime"),
            Dialect::Postgres | Dialect::Sqlite => (d.div(), "timestamp"),
        };
        let (with_b, from_b) = series(d, "bid", 1, s * BRANCHES as i64);
        let (with_t, from_t) = series(d, "tid", 1, s * TELLERS as i64);
        TablesSql {
            drop: match d {
                Dialect::Postgres | Dialect::Mysql => {
                    vec!["drop table if exists pgbench_accounts, pgbench_branches, \
                     pgbench_history, pgbench_tellers"
                        .into()]
                }
                Dialect::Sqlite => ["accounts", "branches", "history", "tellers"]
                    .map(|t| format!("drop table if exists pgbench_{t}"))
                    .to_vec(),
            },
            create: vec![
                format!(
                    "create table pgbench_history(tid int,bid int,aid    {aid},delta int,mtime \
                     {mtime},filler char(22))"
                ),
                format!(
                    "create table pgbench_tellers(tid int not null{key},bid int,tbalance \
                     int,filler char(84)){fill}"
                ),
                format!(
                    "create table pgbench_accounts(aid    {aid} not null{key},bid int,abalance \
                     int,filler char(84)){fill}"
                ),
                format!(
                    "create table pgbench_branches(bid int not null{key},bbalance int,filler \
                     char(88)){fill}"
                ),
                format!(
                    "insert into pgbench_branches(bid,bbalance) {with_b}select bid, 0 from \
                     {from_b}"
                ),
                format!(
                    "insert into pgbench_tellers(tid,bid,tbalance) {with_t}select tid, (tid - \
                     1) {div} 10 + 1, 0 from {from_t}"
                ),
            ],
            any_row: "select exists (select 1 from pgbench_accounts)".into(),
            finish: match d {
                Dialect::Postgres => vec![
                    "vacuum analyze pgbench_branches".into(),
                    "vacuum analyze pgbench_tellers".into(),
                    "vacuum analyze pgbench_accounts".into(),
                    "vacuum analyze pgbench_history".into(),
                    "alter table pgbench_branches add primary key (bid)".into(),
                    "alter table pgbench_tellers add primary key (tid)".into(),
                    "alter table pgbench_accounts add primary key (aid)".into(),
                ],
                Dialect::Sqlite => vec!["analyze".into()],
                Dialect::Mysql => vec!["analyze table pgbench_branches, pgbench_tellers, \
                     pgbench_accounts, pgbench_history"
                    .into()],
            },
            scale: "select count(*) from pgbench_branches".into(),
            not_loaded: PgbenchTables::NOT_LOADED,
            vacuum: match d {
                Dialect::Postgres => vec![
                    "vacuum pgbench_branches".into(),
                    "vacuum pgbench_tellers".into(),
                    "truncate pgbench_history".into(),
                ],
                // No vacuum of one table: emptying the history is what
                // changes what a run finds.
                Dialect::Sqlite => vec!["delete from pgbench_history".into()],
                Dialect::Mysql => vec!["truncate table pgbench_history".into()],
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_gets_pgbench_s_own_statements() {
        let t = PgbenchTables { scale: 2 }.sql(Dialect::Postgres);
        assert_eq!(
            t.create[2],
            "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler \
             char(84)) with (fillfactor=100)"
        );
        assert_eq!(
            t.create[5],
            "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / 10 + 1, 0 \
             from generate_series(1, 20) as tid"
        );
        assert_eq!(
            PgbenchTables::accounts_batch(2, Dialect::Postgres),
            "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / \
             100000 + 1, 0, '' from generate_series(100001, 200000) as aid"
        );
        let mysql = PgbenchTables::accounts_batch(2, Dialect::Mysql);
        assert!(
            mysql.contains("(aid - 1) div 100000 + 1")
                && mysql.contains("100001 + 1 * d0.d + 10 * d1.d")
                && mysql.contains("10000 * d4.d as aid")
                && mysql.ends_with("s where aid <= 200000"),
            "{mysql}"
        );
        let big = PgbenchTables { scale: 20_000 }.sql(Dialect::Postgres);
        assert!(big.create[2].contains("aid    bigint"), "{}", big.create[2]);
    }
}
