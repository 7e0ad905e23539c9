//! The command line as clap reads it: [`Cli`] and its [`Command`]s here,
//! each family's arguments in a child. YCSB's single-dash spellings are
//! rewritten before parsing (`argv.rs`); `options.rs` turns the arguments
//! into the validated options the commands take.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

mod agents;
mod compat;
mod results;
mod run;

pub use agents::*;
pub use compat::*;
pub use results::*;
pub use run::*;

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
