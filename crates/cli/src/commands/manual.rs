//! `sojourn completions SHELL` and `sojourn man`: shell completions and
//! manual pages generated from the clap definitions, so that they never
//! say other than `--help` does.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::Cli;

pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    let mut cmd = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut cmd, "sojourn", &mut out);
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub fn man(dir: Option<&Path>) -> Result<ExitCode> {
    let cmd = Cli::command();
    let Some(dir) = dir else {
        let mut out = std::io::stdout().lock();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = 0;
    let mut page = |name: String, cmd: clap::Command| -> Result<()> {
        let path = dir.join(format!("{name}.1"));
        let mut text = Vec::new();
        clap_mangen::Man::new(cmd).title(&name).render(&mut text)?;
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written += 1;
        Ok(())
    };
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        page(format!("sojourn-{}", sub.get_name()), sub.clone())?;
    }
    page("sojourn".to_string(), cmd)?;
    eprintln!("wrote {written} manual pages in {}", dir.display());
    Ok(ExitCode::SUCCESS)
}
