//! yb-sample-apps' flags as clap reads them, apart from their
//! translation so that the command line's definitions (`cli.rs`) can hold
//! them without importing the translation, which reads those definitions.

use std::fmt;

use clap::Args;

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
