//! The arguments of the commands that spread a run over machines: `agent`,
//! `agents`, `kubernetes`, and of `suite`, which runs a folder of them.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::run::{LiveArgs, MetricsArgs};

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
