//! One module per subcommand family; `dispatch` picks it. `load`, `run`
//! and `bench` are the pipeline itself, and the seed tools' command lines
//! are translations into it (`compat/`): no command module imports another.

mod ab;
mod agent;
mod capacity;
mod compare;
mod history;
mod kubernetes;
mod manual;
mod report;
mod results;
mod suite;

use std::process::ExitCode;

use crate::cli::Command;
use crate::compat::{memtier, noria, pgbench, redis_benchmark};
use crate::pipeline::{self, Mode};

pub fn dispatch(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Load(a) => pipeline::main(a, Mode::Load),
        Command::Run(a) => pipeline::main(a, Mode::Run),
        Command::Bench(a) => pipeline::main(a, Mode::Bench),
        Command::Capacity(a) => capacity::main(a),
        Command::Results(a) => results::main(a),
        Command::Suite(a) => suite::main(a),
        Command::SuiteClient => suite::client_main(),
        Command::Report(a) => report::main(a),
        Command::Compare(a) => compare::main(a),
        Command::History(a) => history::main(a),
        Command::Ab(a) => ab::main(a),
        Command::Agent(a) => agent::main(a),
        Command::Agents(a) => agent::agents(a),
        Command::Kubernetes(a) => kubernetes::main(a),
        Command::Vote(a) => noria::main(a),
        Command::Pgbench(a) => pgbench::main(a),
        Command::Memtier(a) => memtier::main(a),
        Command::RedisBenchmark(a) => redis_benchmark::main(a),
        Command::Completions { shell } => manual::completions(shell),
        Command::Man { dir } => manual::man(dir.as_deref()),
    }
}
