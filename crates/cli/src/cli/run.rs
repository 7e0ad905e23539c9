//! The arguments of `load`, `run` and `bench` ([`PhaseArgs`]) and of the
//! commands that run a phase of their own making: `capacity` and `ab`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// What a phase shows while it runs.
#[derive(Args, Debug, Clone, Default)]
pub struct LiveArgs {
    /// Print YCSB status lines on stderr every status.interval seconds
    /// (instead of the dashboard).
    #[arg(short = 's', long = "status")]
    pub status: bool,

    /// No live dashboard: a one-line progress bar instead (the dashboard is
    /// drawn only when stderr is a terminal, and never with -s or
    /// --format json).
    #[arg(long)]
    pub no_dashboard: bool,

    /// Nothing live on the terminal: neither the dashboard nor the bar.
    #[arg(long)]
    pub no_progress: bool,

    #[command(flatten)]
    pub metrics: MetricsArgs,
}

/// The Prometheus endpoint.
#[derive(Args, Debug, Clone, Default)]
pub struct MetricsArgs {
    /// Serve Prometheus metrics of the running phases on
    /// http://ADDR/metrics (e.g. 127.0.0.1:9464; port 0 takes a free one,
    /// printed on stderr). See docs/metrics.md.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,

    /// With --metrics-listen: once the command is done, keep serving the
    /// final figures until they are scraped once, at most this many seconds.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 0.0,
        requires = "metrics_listen"
    )]
    pub metrics_linger: f64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// YCSB's text summary (what PerfKitBenchmarker parses).
    Text,
    /// The JSON report (see docs/json.md).
    Json,
    /// A script run as pgbench reports one, then sojourn's own lines (see
    /// docs/scripts.md); YCSB's summary for other workloads.
    Pgbench,
    /// A commands run as memtier_benchmark reports one (see
    /// docs/commands.md); YCSB's summary for other workloads.
    Memtier,
    /// A commands run as redis-benchmark reports one test (see
    /// docs/commands.md); YCSB's summary for other workloads.
    RedisBenchmark,
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

    /// Property KEY=VALUE (repeatable; wins over files). Among sojourn's
    /// own: max_error_rate=SHARE, the share of an operation kind's
    /// operations that may fail before the phase fails with exit status 1
    /// (default 1: when every one failed; none: never, as YCSB).
    #[arg(short = 'p', value_name = "KEY=VALUE")]
    pub props: Vec<String>,

    /// A pgbench script of your own, FILE[@WEIGHT] (repeatable): runs
    /// workload=script (see docs/scripts.md).
    #[arg(short = 'f', long = "file", value_name = "FILE[@WEIGHT]")]
    pub script_files: Vec<String>,

    /// One of pgbench's builtin scripts, NAME[@WEIGHT] (repeatable):
    /// tpcb-like, simple-update or select-only, or a prefix of one.
    #[arg(short = 'b', long = "builtin", value_name = "NAME[@WEIGHT]")]
    pub builtins: Vec<String>,

    /// A script variable, NAME=VALUE (repeatable), as pgbench's -D.
    #[arg(short = 'D', long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,

    /// pgbench's scale: the size a load of pgbench's tables makes
    /// (100,000 accounts each) and :scale in scripts (a run of a builtin
    /// reads it from the tables when not given).
    #[arg(long, value_name = "N")]
    pub scale: Option<String>,

    /// Workload kind, as -p workload=NAME: core (YCSB's, the default) or
    /// another kind docs/workloads.md lists (an unknown name is refused
    /// with the list; -f and -b choose script). Or yb-sample-apps'
    /// CassandraKeyValue, RedisKeyValue or SqlInserts with --nodes and its
    /// flags (below).
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,

    /// Concurrent connections (YCSB: -threads; property threadcount).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub threads: Option<String>,

    /// Offered load in operations per second in total, open loop (YCSB:
    /// -target; property target). Without it: closed loop.
    #[arg(long, value_name = "OPS", allow_hyphen_values = true)]
    pub target: Option<String>,

    /// Offered load that changes over time (property rate): segments such
    /// as 'ramp 1000..50000 in 60s, hold 50000 for 120s, step 80000 for
    /// 30s'; also sine, burst, stairs and pause (docs/rates.md). The phase
    /// ends with the profile; each segment is summarised on its own.
    #[arg(long, value_name = "PROFILE", allow_hyphen_values = true)]
    pub rate: Option<String>,

    /// Replay an arrival trace as the intended start times (property
    /// trace): one time per line (seconds from the start, or RFC 3339
    /// timestamps), or second,rate lines. Scaled by -p trace.speed and
    /// trace.scale.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<String>,

    /// Run the run phase N times as one group of repetitions (bench loads
    /// once), each recorded on its own with the labels repeat_group and
    /// repetition; `sojourn compare GROUP_A GROUP_B` then tests across
    /// repetitions. Each repetition gets the next seed.
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,

    /// Seconds to pause between repetitions.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
    pub repeat_pause: f64,

    /// Gaps between intended starts under -target or --rate.
    #[arg(long, value_enum, value_name = "KIND")]
    pub arrival: Option<ArrivalArg>,

    /// Seed for a reproducible operation stream (printed when not given).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub seed: Option<String>,

    /// Seconds at the start kept in the time series but left out of the summary.
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    pub warmup: Option<String>,

    #[command(flatten)]
    pub live: LiveArgs,

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

    /// Where the run is recorded: a SQLite file, or a postgres:// URL for a
    /// store shared by many client machines [default: <data dir>/results.sqlite].
    #[arg(long, value_name = "PATH|URL")]
    pub results: Option<String>,

    /// Do not record the run.
    #[arg(long, conflicts_with = "results")]
    pub no_store: bool,

    /// Label the recorded run (repeatable), e.g. --label experiment=latency_test.
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Run URI shared by the client processes of one run, so that their
    /// results merge, and by a benchmark's stages [default: a new one].
    #[arg(long, value_name = "URI")]
    pub run_uri: Option<String>,

    /// Which stage of the run URI this run is, when one URI covers several
    /// run stages (as a suite's benchmark does): the client processes of one
    /// stage share URI and stage index.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub stage_index: u32,

    /// This process's index among the run's client processes (set by suites).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub client_index: u32,

    /// How many client processes the run has (set by suites).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub client_count: u32,

    /// Run on N agents on other machines (`sojourn agent`), coordinated
    /// through the shared --results postgres:// store: the key range, the
    /// operation count and -target are split over them (totals), -threads
    /// is per agent, every agent starts at one instant, and the runs merge
    /// exactly (see docs/distributed.md).
    #[arg(long, value_name = "N")]
    pub agents: Option<u32>,

    /// With --agents: how many seconds to wait for the agents to claim
    /// their shares and connect, with nothing changing, before giving up.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub agents_wait: f64,

    #[command(flatten)]
    pub yb: super::compat::YbArgs,
}

impl PhaseArgs {
    /// The arguments of a bare `sojourn run`, where a seed tool's
    /// translation starts: it sets only what that tool's command line says.
    pub fn defaults() -> PhaseArgs {
        use clap::FromArgMatches;
        let cmd = PhaseArgs::augment_args(clap::Command::new("run"));
        PhaseArgs::from_arg_matches(&cmd.get_matches_from(["run"]))
            .expect("every argument of `run` has a default")
    }
}

#[derive(Args, Debug, Clone)]
pub struct AbArgs {
    /// A property of configuration A (repeatable), as -p takes it, e.g.
    /// --a threadcount=1.
    #[arg(long = "a", value_name = "KEY=VALUE", required = true)]
    pub a: Vec<String>,

    /// A property of configuration B (repeatable).
    #[arg(long = "b", value_name = "KEY=VALUE", required = true)]
    pub b: Vec<String>,

    /// Family-wise significance level of the comparison.
    #[arg(long, value_name = "P", default_value_t = 0.05)]
    pub alpha: f64,

    /// The smallest relative change marked (0.02 = 2%).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.02)]
    pub threshold: f64,

    #[command(flatten)]
    pub phase: PhaseArgs,
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

    /// Tries of the capacity found beyond the first: it stands if it held
    /// in all but at most one (a missed step is always tried again before
    /// the search believes it).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub confirm: u32,

    /// Load the data first if the table is empty (as `bench` does).
    #[arg(long)]
    pub load: bool,
}
