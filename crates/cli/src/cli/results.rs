//! The arguments of the commands that read the results store: `results`,
//! `report`, `compare` and `history`.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

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
