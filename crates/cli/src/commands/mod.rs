//! One module per subcommand family; `dispatch` picks it.

mod capacity;
mod phase;
mod results;

use std::process::ExitCode;

use crate::cli::Command;

pub fn dispatch(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Load(a) => phase::main(a, phase::Mode::Load),
        Command::Run(a) => phase::main(a, phase::Mode::Run),
        Command::Bench(a) => phase::main(a, phase::Mode::Bench),
        Command::Capacity(a) => capacity::main(a),
        Command::Results(a) => results::main(a),
    }
}
