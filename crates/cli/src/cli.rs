//! The command line: clap definitions, YCSB's single-dash spellings
//! (`-threads 16`, `-target 1000`, `-db basic`) rewritten to their GNU forms
//! before parsing, and conversion into the validated [`Options`] the
//! commands take.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "sojourn",
    version,
    about = "A database benchmark: YCSB-compatible workloads, open-loop scheduling, honest latency",
    after_help = "Quick start:\n  sojourn bench -P workloads/workloada        load and run workload A on the embedded SQLite database\n  sojourn run redis -P workloada -threads 16  YCSB's own spelling works too"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Load the data set (YCSB's load phase: inserts of recordcount records).
    Load(PhaseArgs),
    /// Run the operation mix against loaded data (YCSB's transaction phase).
    Run(PhaseArgs),
    /// Load if the table is empty, then run.
    Bench(PhaseArgs),
    /// Find the highest rate the database sustains while response-time SLOs
    /// hold (ramp geometrically, then bisect), on loaded data.
    Capacity(CapacityArgs),
    /// Run a folder of PerfKitBenchmarker benchmark configs (and its
    /// runner.yaml) as PKB's batch runner does, against a local database
    /// (see docs/suites.md).
    Suite(SuiteArgs),
    /// One client process of a multi-client suite stage; started by `suite`.
    #[command(name = "suite-client", hide = true)]
    SuiteClient,
}

#[derive(Args, Debug, Clone)]
pub struct SuiteArgs {
    /// The folder: benchmark configs (*.yaml, `benchmarks: - NAME: flags:
    /// {...}`) and an optional runner.yaml. Status markers are written
    /// beside the configs.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Database URL for every config; wins over any `sojourn_db` flag
    /// [default: the embedded SQLite database in the data directory].
    #[arg(long = "db", value_name = "URL")]
    pub db: Option<String>,

    /// Set a PKB flag in every config, over the config's own value, as
    /// PKB's command line does (repeatable), e.g. --flag ycsb_record_count=2000.
    #[arg(long = "flag", value_name = "KEY=VALUE")]
    pub flags: Vec<String>,

    /// The results store every stage is recorded in: a SQLite file (or a
    /// postgres:// URL) [default: <data dir>/results.sqlite].
    #[arg(long, value_name = "PATH|URL")]
    pub results: Option<String>,

    /// Where the default embedded database and results store live [env:
    /// SOJOURN_DATA_DIR; default: the user's data directory].
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Print YCSB status lines on stderr every status.interval seconds.
    #[arg(short = 's', long = "status")]
    pub status: bool,

    /// No live progress bar on a terminal.
    #[arg(long)]
    pub no_progress: bool,
}

#[derive(Args, Debug, Clone)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub phase: PhaseArgs,

    /// Response-time objectives, e.g. 'read.p99<10ms,update.p99<20ms'
    /// (kinds: read, update, insert, scan, read-modify-write, delete, all).
    #[arg(long, value_name = "SLOS")]
    pub slo: String,

    /// First target in ops/s [default: an eighth of a closed-loop probe's rate].
    #[arg(long, value_name = "OPS")]
    pub start: Option<f64>,

    /// Seconds measured per step.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub step: f64,

    /// Seconds at the start of each step left out of its measurement.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub settle: f64,

    /// Stop when the capacity is bracketed within this fraction (0.05 = +-5%).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.05)]
    pub precision: f64,

    /// Highest share of failed operations a sustained step may have.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.01)]
    pub max_error_rate: f64,

    /// Load the data first if the table is empty (as `bench` does).
    #[arg(long)]
    pub load: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// YCSB's text summary (what PerfKitBenchmarker parses).
    Text,
    /// The JSON report (see docs/json.md).
    Json,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ArrivalArg {
    /// Exponential gaps (a Poisson process).
    Poisson,
    /// Constant gaps.
    Uniform,
}

#[derive(Args, Debug, Clone)]
pub struct PhaseArgs {
    /// Database: a YCSB binding name (basic, null, memory, sqlite) or a URL
    /// (sqlite:PATH, memory:, null:). Default: the embedded SQLite database
    /// in the data directory.
    #[arg(value_name = "DB")]
    pub db_name: Option<String>,

    /// Database URL (wins over the positional DB).
    #[arg(long = "db", value_name = "URL")]
    pub db: Option<String>,

    /// Workload property file (repeatable; merged in order). A shipped
    /// workload can be named without its folder: -P workloada.
    #[arg(short = 'P', value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Property KEY=VALUE (repeatable; wins over files).
    #[arg(short = 'p', value_name = "KEY=VALUE")]
    pub props: Vec<String>,

    /// Concurrent connections (YCSB: -threads; property threadcount).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub threads: Option<String>,

    /// Offered load in operations per second in total, open loop (YCSB:
    /// -target; property target). Without it: closed loop.
    #[arg(long, value_name = "OPS", allow_hyphen_values = true)]
    pub target: Option<String>,

    /// Gaps between intended starts under -target.
    #[arg(long, value_enum, value_name = "KIND")]
    pub arrival: Option<ArrivalArg>,

    /// Seed for a reproducible operation stream (printed when not given).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub seed: Option<String>,

    /// Seconds at the start kept in the time series but left out of the summary.
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    pub warmup: Option<String>,

    /// Print YCSB status lines on stderr every status.interval seconds.
    #[arg(short = 's', long = "status")]
    pub status: bool,

    /// Summary format on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,

    /// Also write the JSON report to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Load: empty the table first (property dropdata=true).
    #[arg(long)]
    pub drop: bool,

    /// Where the default embedded database lives [env: SOJOURN_DATA_DIR;
    /// default: the user's data directory].
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// No live progress bar on a terminal.
    #[arg(long)]
    pub no_progress: bool,
}

/// YCSB writes long options with one dash. Rewrite exactly those so clap
/// sees its usual forms; anything else is left for clap to judge.
pub fn normalise_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    args.into_iter()
        .map(|a| match a.to_str() {
            Some("-threads") => "--threads".into(),
            Some("-target") => "--target".into(),
            Some("-db") => "--db".into(),
            Some("-seed") => "--seed".into(),
            _ => a,
        })
        .collect()
}
