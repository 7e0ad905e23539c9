//! The seed tools' own command lines as clap holds them: Noria's vote,
//! memtier's, redis-benchmark's and pgbench's (read by their own getopt-style
//! readers in `compat/`), and yb-sample-apps' flags, which `load`/`run` take.

use std::fmt;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// `vote`: Noria's flags, as its `vote` binary spells them, then the
/// backend with its own; the defaults are Noria's.
#[derive(Args, Debug)]
pub struct VoteArgs {
    /// Offered load in operations per second, open loop (Noria's default).
    #[arg(long, value_name = "OPS", default_value_t = 1_000_000.0)]
    pub target: f64,

    /// One operation in N is a vote (the others read an article).
    #[arg(long = "write-every", value_name = "N", default_value_t = 19)]
    pub write_every: u64,

    /// Seconds the run lasts.
    #[arg(short = 'r', long, value_name = "N", default_value_t = 30)]
    pub runtime: u64,

    /// Articles the database is primed with.
    #[arg(short = 'a', long, value_name = "N", default_value_t = 100_000)]
    pub articles: u64,

    /// Which articles operations pick.
    #[arg(short = 'd', long, value_enum, default_value = "uniform")]
    pub distribution: VoteDistributionArg,

    /// Append the run's four histograms to FILE, in HdrHistogram's V2
    /// serialized form and Noria's order: sojourn-write, sojourn-read,
    /// remote-write, remote-read (microseconds).
    #[arg(long, value_name = "FILE")]
    pub histogram: Option<PathBuf>,

    /// Do not set the database up: run on the articles already there.
    #[arg(long)]
    pub no_prime: bool,

    /// Concurrent connections.
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,

    /// sojourn property KEY=VALUE (repeatable; wins over the translation
    /// of Noria's flags), e.g. -p vote.variant=join.
    #[arg(short = 'p', value_name = "KEY=VALUE")]
    pub props: Vec<String>,

    /// Seed for a reproducible operation stream.
    #[arg(long, value_name = "N")]
    pub seed: Option<String>,

    /// Where the run is recorded (as `sojourn run --results`).
    #[arg(long, value_name = "PATH|URL", global = true)]
    pub results: Option<String>,

    /// Do not record the run.
    #[arg(long, conflicts_with = "results", global = true)]
    pub no_store: bool,

    /// Label the recorded run (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Where the default results store lives (as `sojourn run --data-dir`).
    #[arg(long, value_name = "DIR", global = true)]
    pub data_dir: Option<PathBuf>,

    /// No progress line on stderr.
    #[arg(long, global = true)]
    pub no_progress: bool,

    #[command(subcommand)]
    pub backend: VoteBackend,
}

/// Noria's `-d`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum VoteDistributionArg {
    Uniform,
    Skewed,
}

/// The databases `sojourn vote` runs on, with Noria's flags (PostgreSQL
/// is sojourn's own).
#[derive(Subcommand, Debug)]
pub enum VoteBackend {
    /// MySQL/MariaDB with precomputed vote counts, as Noria ran it.
    Mysql {
        /// host:port, or user:password@host:port.
        #[arg(long, default_value = "127.0.0.1:3306")]
        address: String,
        #[arg(long, default_value = "soup")]
        database: String,
    },
    /// memcached alone: each article's title and count as cache items.
    Memcached {
        #[arg(long, default_value = "127.0.0.1:11211")]
        address: String,
        /// Noria's "only fetch vote counts, not titles" (refused).
        #[arg(long)]
        fast: bool,
    },
    /// MySQL behind a cache (memcached, or Redis as Noria's own hybrid
    /// client has it): reads ask the cache first, votes invalidate it.
    Hybrid {
        #[arg(long, default_value = "127.0.0.1:3306")]
        mysql_address: String,
        #[arg(long, conflicts_with = "redis_address")]
        memcached_address: Option<String>,
        #[arg(long)]
        redis_address: Option<String>,
        #[arg(long, default_value = "soup")]
        database: String,
    },
    /// Redis alone: each article a hash with its title and count.
    Redis {
        /// host or host:port.
        #[arg(long, default_value = "127.0.0.1")]
        address: String,
    },
    /// PostgreSQL (sojourn's own; not in Noria).
    Postgresql {
        /// host:port, or user:password@host:port.
        #[arg(long, default_value = "127.0.0.1:5432")]
        address: String,
        #[arg(long, default_value = "soup")]
        database: String,
    },
    /// Noria's other backends, which sojourn does not run.
    #[command(external_subcommand)]
    Other(Vec<String>),
}

/// memtier_benchmark's options, read as memtier reads them.
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct MemtierArgs {
    /// memtier's options (-s -p -P -t -c -n --test-time --ratio
    /// --key-pattern --command --command-ratio --pipeline --rate-limiting
    /// --json-out-file ...; see docs/commands.md).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "MEMTIER ARGS"
    )]
    pub args: Vec<String>,
}

/// redis-benchmark's options and command, read as redis-benchmark reads
/// them.
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct RedisBenchmarkArgs {
    /// redis-benchmark's options (-h -p -a -c -n -d -r -P -t -q --csv
    /// --precision --threads), then a command of your own if any.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "REDIS-BENCHMARK ARGS"
    )]
    pub args: Vec<String>,
}

/// pgbench's options and DBNAME, read as pgbench reads them.
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct PgbenchArgs {
    /// pgbench's options (-c -j -t -T -R -L -P -r -M -f -b -S -N -D -s -n
    /// --random-seed --max-tries -h -p -U; -i with -s, -I, -F, -q) and
    /// DBNAME (a name or a postgres:// URI).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PGBENCH ARGS"
    )]
    pub args: Vec<String>,
}

/// yb-sample-apps' flags that sojourn reads (with `--workload` and
/// `--nodes`). Underscores as yb-sample-apps writes them; each sets the
/// key-value property of the same name unless its help says otherwise.
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "yb-sample-apps' command line (docs/keyvalue.md)")]
pub struct YbArgs {
    /// With --workload CassandraKeyValue, RedisKeyValue or SqlInserts: the
    /// database's nodes, comma-separated; connections spread over them.
    /// The port defaults to the workload's (9042, 6379, 5433).
    #[arg(long, value_name = "HOST:PORT[,HOST:PORT...]")]
    pub nodes: Option<String>,

    /// Keys the writers insert before they start updating.
    #[arg(long = "num_unique_keys", value_name = "N")]
    pub num_unique_keys: Option<u64>,

    /// Writes to perform, inserts and updates (-1: no limit).
    #[arg(long = "num_writes", value_name = "N", allow_negative_numbers = true)]
    pub num_writes: Option<i64>,

    /// Reads to perform (-1: no limit).
    #[arg(long = "num_reads", value_name = "N", allow_negative_numbers = true)]
    pub num_reads: Option<i64>,

    /// Reader connections.
    #[arg(long = "num_threads_read", value_name = "N")]
    pub num_threads_read: Option<u32>,

    /// Writer connections.
    #[arg(long = "num_threads_write", value_name = "N")]
    pub num_threads_write: Option<u32>,

    /// Read by yb-sample-apps' key-value workloads no more than here: their
    /// pools are --num_threads_read and --num_threads_write.
    #[arg(long = "num_threads", value_name = "N")]
    pub num_threads: Option<u32>,

    /// Bytes per value (at least 10: a checksum and a byte).
    #[arg(long = "value_size", value_name = "BYTES")]
    pub value_size: Option<u64>,

    /// Keys are key:<n>, without a UUID prefix.
    #[arg(long)]
    pub nouuid: bool,

    /// The keys' prefix [default: a random UUID, new each time].
    #[arg(long, value_name = "UUID", conflicts_with = "nouuid")]
    pub uuid: Option<String>,

    /// Readers only (needs --uuid or --nouuid).
    #[arg(long = "read_only")]
    pub read_only: bool,

    /// The highest key known written (skips the search for it).
    #[arg(
        long = "max_written_key",
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub max_written_key: Option<i64>,

    /// Seconds to run (0 or negative: until the counts are done).
    #[arg(
        long = "run_time",
        value_name = "SECONDS",
        allow_negative_numbers = true
    )]
    pub run_time: Option<i64>,

    /// The database user.
    #[arg(long, value_name = "USER")]
    pub username: Option<String>,

    /// The database password (needs --username; never shown or stored).
    #[arg(long, value_name = "PASSWORD")]
    pub password: Option<String>,

    /// Values of ASCII text (sojourn's always are).
    #[arg(long = "use_ascii_values")]
    pub use_ascii_values: bool,

    /// Reads per second of each reader connection.
    #[arg(long = "read_rate", value_name = "OPS")]
    pub read_rate: Option<f64>,

    /// Writes per second of each writer connection.
    #[arg(long = "write_rate", value_name = "OPS")]
    pub write_rate: Option<f64>,

    /// SqlInserts: the database [default: postgres].
    #[arg(long = "default_postgres_database", value_name = "NAME")]
    pub default_postgres_database: Option<String>,

    /// yb-sample-apps' flags this does not read, marked by
    /// [`super::mark_unread_flags`] before parsing, to be refused by name.
    #[arg(long = "yb-sample-apps-flag", hide = true, value_name = "NAME")]
    pub unread: Vec<String>,
}

impl fmt::Debug for YbArgs {
    // Not derived: the password must not reach a debug print.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("YbArgs")
            .field("nodes", &self.nodes)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}
