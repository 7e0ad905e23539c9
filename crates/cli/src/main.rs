//! sojourn's binary: parse the command line, run the command, and print any
//! error in one place with its exit code.

mod argv;
mod cli;
mod commands;
mod compat;
mod dashboard;
mod fleet;
mod metrics;
mod options;
mod pipeline;
mod progress;
mod selection;
mod workloads;

use std::process::ExitCode;

use clap::Parser;

// The unit tests fuzz the suite reader with a bound on what it allocates.
#[cfg(test)]
#[global_allocator]
static ALLOC: sojourn_testkit::fuzz::CountingAlloc = sojourn_testkit::fuzz::CountingAlloc;

fn main() -> ExitCode {
    let cli = cli::Cli::parse_from(argv::normalise_args(std::env::args_os()));
    match commands::dispatch(cli.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
