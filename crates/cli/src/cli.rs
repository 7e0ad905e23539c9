//! The command line: clap definitions, YCSB's single-dash spellings
//! (`-threads 16`, `-target 1000`, `-db basic`) rewritten to their GNU forms
//! before parsing, and conversion into the validated [`Options`] the
//! commands take.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "sojourn",
    version,
    about = "A database benchmark: YCSB-compatible workloads, open-loop scheduling, honest latency",
    after_help = "Quick start:\n  sojourn bench -P workloads/workloada -p operationcount=0 --rate 'ramp 500..2000 in 5s, hold 2000 for 5s'\n      load workload A on the embedded SQLite database, run it for 10 s with the live\n      dashboard, and say where its report is\n  sojourn run redis -P workloada -threads 16\n      YCSB's own spelling works too"
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
    /// Stored runs: list, show, export, query (see docs/results.md).
    Results(ResultsArgs),
    /// Run a folder of PerfKitBenchmarker benchmark configs (and its
    /// runner.yaml) as PKB's batch runner does, against a local database
    /// (see docs/suites.md).
    Suite(SuiteArgs),
    /// One client process of a multi-client suite stage; started by `suite`.
    #[command(name = "suite-client", hide = true)]
    SuiteClient,
    /// Report on stored runs: one self-contained HTML file with plots, or
    /// the walkthrough's performance and cost tables (--format md|csv).
    Report(ReportArgs),
    /// Compare two stored runs, or two groups of repetitions: every
    /// figure's change and whether it is significant (across repetitions,
    /// Welch's t-test, Holm-corrected over the figures; one run a side,
    /// against each run's own sampling error).
    Compare(CompareArgs),
    /// A figure over the history of stored runs (by a label such as
    /// commit, or by time), its change points found and judged; with
    /// --check, exit status 1 when the newest points come after a change
    /// for the worse (see docs/history.md).
    History(HistoryArgs),
    /// Two configurations run alternately, A B A B ..., --repeat times each
    /// (default 5), then compared across repetitions: slow drift of the
    /// machine falls on both equally. The sides differ by properties:
    /// `sojourn ab -P workloadc --a threadcount=1 --b threadcount=4`.
    Ab(AbArgs),
    /// Run the shares of phases that coordinators (`run --agents N`, ...)
    /// post in a shared PostgreSQL results store, until told to stop (see
    /// docs/distributed.md).
    Agent(AgentArgs),
    /// The agents registered in a shared results store: list them, or ask
    /// them to exit.
    Agents(AgentsArgs),
    /// Print Kubernetes manifests that run N agents (`| kubectl apply -f
    /// -`), or with --dockerfile the Dockerfile of their image (see
    /// docs/distributed.md).
    Kubernetes(KubernetesArgs),
    /// Noria's vote benchmark with Noria's own command line: `sojourn vote
    /// --target 100000 --write-every 20 mysql --address H:P --database DB`
    /// (see docs/workloads.md).
    Vote(VoteArgs),

    /// pgbench's own command line: `sojourn pgbench -c 4 -t 250 -S -r
    /// DBNAME`, `sojourn pgbench -i -s 2 DBNAME` (see docs/scripts.md).
    /// pgbench's summary lines, then sojourn's own.
    Pgbench(PgbenchArgs),

    /// memtier_benchmark's own command line: `sojourn memtier -s HOST -p
    /// PORT --ratio 1:10 -t 2 -c 4 -n 2000` (see docs/commands.md).
    /// memtier's run information and ALL STATS table, then sojourn's own
    /// lines; `--json-out-file` in memtier's JSON shape.
    Memtier(MemtierArgs),

    /// redis-benchmark's own command line: `sojourn redis-benchmark -t
    /// set,get -n 10000 -r 1000 -q`, or a command of your own after the
    /// options (see docs/commands.md). One run per test, printed as
    /// redis-benchmark prints it.
    RedisBenchmark(RedisBenchmarkArgs),

    /// Shell completions on stdout: `sojourn completions bash >
    /// /etc/bash_completion.d/sojourn`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Manual pages from the command line's own help: sojourn(1) on stdout,
    /// or with --dir, sojourn.1 and a sojourn-COMMAND.1 per command there.
    Man {
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum KubernetesKind {
    /// Long-lived agents named by their pods, restarted under their names.
    Statefulset,
    /// An Indexed Job whose agents exit after --idle-timeout without work.
    Job,
}

#[derive(Args, Debug)]
pub struct KubernetesArgs {
    /// How many agents (pods); each runs on a node of its own.
    #[arg(long, value_name = "N", required_unless_present = "dockerfile")]
    pub agents: Option<u32>,

    /// The namespace they run in (create it first).
    #[arg(long, value_name = "NAME", default_value = "sojourn")]
    pub namespace: String,

    /// The StatefulSet's (or Job's) name; agents are NAME-0, NAME-1, ...
    #[arg(long, value_name = "NAME", default_value = "sojourn-agent")]
    pub name: String,

    /// The image: one built with `sojourn kubernetes --dockerfile`.
    #[arg(long, value_name = "IMAGE", default_value = concat!("sojourn:", env!("CARGO_PKG_VERSION")))]
    pub image: String,

    /// CPU per agent (request and limit alike).
    #[arg(long, value_name = "QUANTITY", default_value = "2")]
    pub cpu: String,

    /// Memory per agent (request and limit alike).
    #[arg(long, value_name = "QUANTITY", default_value = "2Gi")]
    pub memory: String,

    /// Only nodes with this label (repeatable), e.g.
    /// --node-selector node.kubernetes.io/instance-type=n2-standard-8.
    #[arg(long = "node-selector", value_name = "KEY=VALUE")]
    pub node_selector: Vec<String>,

    /// Let agents share nodes (anti-affinity preferred, not required).
    #[arg(long)]
    pub share_nodes: bool,

    /// A StatefulSet (long-lived agents) or an Indexed Job.
    #[arg(long, value_enum, default_value = "statefulset")]
    pub kind: KubernetesKind,

    /// With --kind job: seconds an agent waits for work before it exits.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub idle_timeout: u64,

    /// Print the Dockerfile of the agents' image instead.
    #[arg(long)]
    pub dockerfile: bool,
}

#[derive(Args, Debug)]
pub struct AgentArgs {
    /// The shared results store, where coordinators post shares:
    /// postgres://USER@HOST/DB (the password in $SOJOURN_RESULTS_PASSWORD).
    #[arg(long, value_name = "URL", env = "SOJOURN_RESULTS")]
    pub results: String,

    /// This agent's name [default: the host name, a pod's name].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Exit after this many seconds without a share [default: never].
    #[arg(long, value_name = "SECONDS")]
    pub idle_timeout: Option<f64>,

    /// Where runs the store cannot take in time are spooled [env:
    /// SOJOURN_DATA_DIR; default: the user's data directory].
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    #[command(flatten)]
    pub metrics: MetricsArgs,
}

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

#[derive(Args, Debug)]
pub struct AgentsArgs {
    #[command(subcommand)]
    pub command: AgentsCommand,

    /// The shared results store (postgres://...).
    #[arg(long, value_name = "URL", env = "SOJOURN_RESULTS", global = true)]
    pub results: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum AgentsCommand {
    /// Every registered agent: name, host, version, state, last heartbeat,
    /// clock offset from the store server.
    List,
    /// Ask an agent (or every agent) to exit once its share is done.
    Stop {
        /// The agent's name.
        #[arg(value_name = "NAME", required_unless_present = "all")]
        name: Option<String>,
        /// Every agent.
        #[arg(long, conflicts_with = "name")]
        all: bool,
    },
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

    #[command(flatten)]
    pub live: LiveArgs,

    /// Run every stage's clients (num_vms of them) on agents on other
    /// machines instead of processes here, coordinated through the shared
    /// --results postgres:// store; N agents are at hand, so no config may
    /// ask for more num_vms (see docs/distributed.md).
    #[arg(long, value_name = "N")]
    pub agents: Option<u32>,

    /// With --agents: how many seconds to wait for a stage's agents to
    /// claim their shares and connect, with nothing changing.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub agents_wait: f64,
}

/// Where a command that reads stored runs finds them.
#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// The results store: a SQLite file or a postgres:// URL [default:
    /// <data dir>/results.sqlite].
    #[arg(long, value_name = "PATH|URL")]
    pub results: Option<String>,

    /// Where the default store lives [env: SOJOURN_DATA_DIR; default: the
    /// user's data directory].
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// One self-contained HTML file with SVG plots.
    Html,
    /// The walkthrough's tables in Markdown.
    Md,
    /// The walkthrough's tables in CSV, every digit kept.
    Csv,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum TableArg {
    /// The walkthrough's performance table.
    Performance,
    /// The walkthrough's resource and cost table (runs that carry a price).
    Cost,
    /// Performance, then cost.
    Both,
    /// The Redis/Tair whitepaper's table: per stage QPS, average and 99th
    /// percentile latency (µs), per operation where a stage mixes them.
    Summary,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum LatencyArg {
    /// From the actual send (YCSB's and PKB's operation latency).
    Service,
    /// From the intended send: includes queueing in the client.
    Response,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs: ids (or unique prefixes), run URIs (client processes merged),
    /// `last`, or a capacity session id (every step of it).
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,

    /// Also every run with this label (repeatable; all must match), e.g.
    /// --label experiment=latency_test.
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    #[arg(long, value_enum, default_value = "html")]
    pub format: ReportFormat,

    /// Write here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Which tables md and csv print.
    #[arg(long, value_enum, default_value = "both")]
    pub table: TableArg,

    /// Which latency the performance table shows.
    #[arg(long, value_enum, default_value = "service")]
    pub latency: LatencyArg,

    /// Dollars per node and hour, costing every run [default: 0.65, the
    /// walkthrough's Bigtable price, for Bigtable runs only; other runs
    /// have no cost row].
    #[arg(long, value_name = "DOLLARS")]
    pub node_hour_price: Option<f64>,

    /// Nodes for every run [default: the run's bigtable_node_count label, else 1].
    #[arg(long, value_name = "N")]
    pub nodes: Option<f64>,

    /// Dollars per GB and month for every run [default: 0.17, or 0.026 when
    /// the run's bigtable_storage_type label is hdd].
    #[arg(long, value_name = "DOLLARS")]
    pub storage_gb_month_price: Option<f64>,

    /// The HTML page's title.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,

    /// Open the HTML page with the runs' history: per figure its points
    /// over --by (or over time), the change points marked, each point
    /// linked to its runs (see docs/history.md).
    #[arg(long)]
    pub history: bool,

    #[command(flatten)]
    pub series: SeriesArgs,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Text,
    Json,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// On a terminal, unless NO_COLOR is set.
    Auto,
    Always,
    Never,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The baseline: a run (an id or a unique prefix, a run URI, or
    /// `last`), a group of repetitions (the id `--repeat` printed), or
    /// runs listed with commas (ID1,ID2,ID3).
    #[arg(value_name = "A")]
    pub a: String,

    /// What is compared with it, in the same forms.
    #[arg(value_name = "B")]
    pub b: String,

    #[arg(long, value_enum, default_value = "text")]
    pub format: CompareFormat,

    /// Significance level: of Welch's t-test across repetitions, family-wise
    /// over every figure (default 0.05), or, for one run per side, of the
    /// test against each run's own sampling error (default 0.01).
    #[arg(long, value_name = "P")]
    pub alpha: Option<f64>,

    /// Groups: the smallest relative change marked, the noise threshold
    /// (0.02 = 2%).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.02)]
    pub threshold: f64,

    /// Colour significant changes (green better, red worse).
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorArg,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// Only runs with this label (repeatable; all must match).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    #[command(flatten)]
    pub series: SeriesArgs,

    /// Only runs started since: a date (2025-11-21), a UTC date-time, or a
    /// time ago (90s, 30m, 2h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Only the newest N points.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,

    /// Which phase's runs.
    #[arg(long, value_name = "PHASE", default_value = "run", value_parser = ["load", "run"])]
    pub phase: String,

    /// Exit with status 1 when the newest points come after a change for
    /// the worse (the last change point before them, or one among them; 2
    /// when the newest point alone changed and has too few repetitions to
    /// judge).
    #[arg(long)]
    pub check: bool,

    /// How many of the newest points --check looks at.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub check_last: usize,

    #[arg(long, value_enum, default_value = "text")]
    pub format: HistoryFormat,

    #[command(flatten)]
    pub store: StoreArgs,
}

/// How runs become a history and its change points: `sojourn history`'s,
/// and `sojourn report --history`'s.
#[derive(Args, Debug)]
pub struct SeriesArgs {
    /// The label whose values are the history's points, in the order of
    /// each value's first run; runs that share a value are repetitions of
    /// one point [default: each run a point of its own, by start time].
    #[arg(long, value_name = "LABEL")]
    pub by: Option<String>,

    /// A figure (repeatable): throughput, KIND.throughput, KIND.pN,
    /// KIND.mean, KIND.service.pN, KIND.response.pN [default: throughput
    /// and every operation's p99].
    #[arg(long = "figure", value_name = "NAME")]
    pub figures: Vec<String>,

    /// A change point is kept when its p-value is below this.
    #[arg(long, value_name = "P", default_value_t = 0.001)]
    pub max_pvalue: f64,

    /// ... and it changes the figure by more than this (0.02 = 2%).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.02)]
    pub min_change: f64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum HistoryFormat {
    Text,
    Json,
    /// A markdown table of the change points (a pull request, a CI job's
    /// summary).
    Md,
    /// A row per figure and point, with the change point starting there.
    Csv,
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
    pub yb: crate::ybapps::YbArgs,
}

#[derive(Args, Debug)]
pub struct ResultsArgs {
    #[command(subcommand)]
    pub command: ResultsCommand,

    /// The results store: a SQLite file or a postgres:// URL [default:
    /// <data dir>/results.sqlite].
    #[arg(long, value_name = "PATH|URL", global = true)]
    pub results: Option<String>,

    /// Where the default store lives [env: SOJOURN_DATA_DIR; default: the
    /// user's data directory].
    #[arg(long, value_name = "DIR", global = true)]
    pub data_dir: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum ResultsCommand {
    /// Stored runs, oldest first.
    List(ListArgs),
    /// A run's YCSB summary again, from its stored histograms.
    Show(ShowArgs),
    /// Runs as PKB samples, CSV, JSON or an HdrHistogram interval log.
    Export(ExportArgs),
    /// Read-only SQL over the store's tables and views.
    Query(QueryArgs),
    /// Store runs kept in spool files (when the store could not take them
    /// in time) or in another SQLite store file.
    Import(ImportArgs),
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Spool files (RUN_ID.sqlite, as the warning named them) or other
    /// SQLite results stores; a run already in the store is replaced. A
    /// spool file is removed once its runs are stored.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only runs with this label (repeatable; all must match).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Only runs of this workload (file name, e.g. workloada).
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,

    /// Only runs whose backend contains this (e.g. redis, sqlite:).
    #[arg(long, value_name = "TEXT")]
    pub backend: Option<String>,

    /// Only load or run phases.
    #[arg(long, value_name = "PHASE", value_parser = ["load", "run"])]
    pub phase: Option<String>,

    /// Only runs with this status.
    #[arg(long, value_name = "STATUS", value_parser = ["running", "completed", "interrupted", "failed"])]
    pub status: Option<String>,

    /// Only runs started since: a date (2025-11-21, 2025-11-21T10:00:00Z) or
    /// a time ago (30m, 2h, 7d).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// At most this many runs (the newest).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A run id (or a unique prefix), a run URI (its client processes
    /// merged), or `last`.
    #[arg(value_name = "RUN")]
    pub run: String,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// PerfKitBenchmarker samples, newline-delimited JSON (BigQuery-ready).
    Pkb,
    /// One row per run and operation kind.
    Csv,
    /// The CSV's rows as a JSON array.
    Json,
    /// The JSON report of each run, as `--json` wrote it after the run
    /// (docs/json.md): an object, or an array of them.
    Report,
    /// An HdrHistogram interval log (one tag per operation and latency kind).
    Hdrlog,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Runs: ids (or unique prefixes), run URIs, URI/STAGE, or `last`;
    /// each names the whole run (its client processes merged). Give at
    /// least one, or select runs with --all, --label or --since.
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,

    /// Every run in the store (with --label and --since: every run they
    /// select), oldest first: `results export --all --format pkb >
    /// samples.json` is a whole BigQuery load.
    #[arg(long)]
    pub all: bool,

    /// Also every run with this label (repeatable; all must match).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Also every run started since: a date (2025-11-21,
    /// 2025-11-21T10:00:00Z) or a time ago (30m, 2h, 7d).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    #[arg(long, value_enum)]
    pub format: ExportFormat,

    /// Write here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// PKB: the samples' `test` (benchmark name) [default: the run's
    /// `benchmark` label, else BACKEND_ycsb].
    #[arg(long, value_name = "NAME")]
    pub pkb_test: Option<String>,

    /// PKB: the samples' `owner` [default: $USER].
    #[arg(long, value_name = "NAME")]
    pub owner: Option<String>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum QueryFormat {
    Table,
    Csv,
    Json,
}

#[derive(Args, Debug)]
pub struct QueryArgs {
    /// One SQL query (SELECT or WITH ... SELECT); see docs/results.md for
    /// the tables and the `performance` and `cost` views.
    #[arg(value_name = "SQL")]
    pub sql: String,

    #[arg(long, value_enum, default_value = "table")]
    pub format: QueryFormat,
}

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
