//! One module per subcommand family; `dispatch` picks it.

mod ab;
mod agent;
mod capacity;
mod compare;
mod fleet;
mod getopt;
mod history;
mod kubernetes;
mod manual;
mod memtier;
mod pgbench;
mod phase;
mod redis_benchmark;
mod report;
mod results;
mod suite;
mod vote;

use std::process::ExitCode;

use crate::cli::Command;

pub fn dispatch(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Load(a) => phase::main(a, phase::Mode::Load),
        Command::Run(a) => phase::main(a, phase::Mode::Run),
        Command::Bench(a) => phase::main(a, phase::Mode::Bench),
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
        Command::Vote(a) => vote::main(a),
        Command::Pgbench(a) => pgbench::main(a),
        Command::Memtier(a) => memtier::main(a),
        Command::RedisBenchmark(a) => redis_benchmark::main(a),
        Command::Completions { shell } => manual::completions(shell),
        Command::Man { dir } => manual::man(dir.as_deref()),
    }
}
