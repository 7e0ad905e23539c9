//! The official Bigtable emulator (`go install
//! cloud.google.com/go/bigtable/cmd/emulator@latest`, or gcloud's packaged
//! `cbtemulator`) on 127.0.0.1 and a port it picks itself (`-port 0`,
//! read back from what it prints), for the Bigtable tests.
//!
//! The emulator keeps everything in memory: a restart loses every table.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::needs::{self, Need};
use crate::servers::Server;

/// Where `go install` puts binaries: `$GOBIN`, each `$GOPATH/bin`, and the
/// default `$HOME/go/bin`. Looked at before `PATH`, where a binary called
/// `emulator` could be anything (Android's, say).
fn go_bin_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(gobin) = std::env::var_os("GOBIN").filter(|v| !v.is_empty()) {
        dirs.push(PathBuf::from(gobin));
    }
    if let Some(gopath) = std::env::var_os("GOPATH") {
        dirs.extend(std::env::split_paths(&gopath).map(|p| p.join("bin")));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join("go/bin"));
    }
    dirs
}

/// gcloud's `google-cloud-cli-bigtable-emulator` package.
const GCLOUD_DIR: &str = "/usr/lib/google-cloud-sdk/platform/bigtable-emulator";

/// The emulator binary: `SOJOURN_BIGTABLE_EMULATOR`, else `cbtemulator`
/// on PATH (where scripts/deps installs it, for every user) or in gcloud's
/// package, else `emulator` in Go's bin directories. `None` when the run
/// leaves Bigtable out; a panic saying how to install it when it is
/// missing.
pub fn emulator_binary() -> Option<PathBuf> {
    if needs::left_out(Need::Bigtable) {
        return None;
    }
    if let Some(p) = std::env::var_os("SOJOURN_BIGTABLE_EMULATOR").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "SOJOURN_BIGTABLE_EMULATOR={}: no such file",
            p.display()
        );
        return Some(p);
    }
    let go_dirs = go_bin_dirs();
    let found = needs::locate("cbtemulator", &[PathBuf::from(GCLOUD_DIR)]).or_else(|| {
        go_dirs
            .iter()
            .map(|d| d.join("emulator"))
            .find(|p| p.is_file())
    });
    Some(found.unwrap_or_else(|| {
        let mut searched = vec![format!("cbtemulator on PATH and in {GCLOUD_DIR}")];
        searched.extend(
            go_dirs
                .iter()
                .map(|d| d.join("emulator").display().to_string()),
        );
        panic!(
            "{}",
            needs::missing(
                Need::Bigtable,
                "the Bigtable emulator",
                &searched.join(", ")
            )
        )
    }))
}

/// A running emulator.
pub struct BigtableEmulator {
    pub server: Server,
    binary: PathBuf,
}

impl BigtableEmulator {
    /// Start the emulator on a port it picks itself, or `None` when the
    /// run leaves Bigtable out.
    pub fn start() -> Option<BigtableEmulator> {
        let binary = emulator_binary()?;
        let dir = tempfile::tempdir().expect("tempdir");
        let server =
            Server::start_telling_port("bigtable emulator", dir, command(&binary, 0), told_port);
        Some(BigtableEmulator { server, binary })
    }

    /// `127.0.0.1:PORT`, the value for `BIGTABLE_EMULATOR_HOST`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.server.port)
    }

    /// Stop it (SIGSTOP) and return once the kernel shows every thread
    /// of it stopped: the signal is asynchronous, and a request sent just
    /// after `kill` could still be answered.
    pub fn pause(&self) {
        self.server.pause();
    }

    /// Let it run again after [`BigtableEmulator::pause`].
    pub fn resume(&self) {
        self.server.signal(libc::SIGCONT);
    }

    /// Kill it and start it again on the same port (with no data).
    pub fn restart(&mut self) {
        let cmd = command(&self.binary, self.server.port);
        self.server.restart(cmd);
    }
}

/// The port in the emulator's first line, `Cloud Bigtable emulator running
/// on 127.0.0.1:PORT`.
fn told_port(dir: &Path) -> Option<u16> {
    let log = std::fs::read_to_string(dir.join("server.log")).ok()?;
    let line = log.lines().find(|l| l.contains("emulator running on "))?;
    line.rsplit_once(':')?
        .1
        .trim()
        .parse()
        .ok()
        .filter(|&p| p != 0)
}

fn command(binary: &Path, port: u16) -> Command {
    let mut cmd = Command::new(binary);
    cmd.args(["-host", "127.0.0.1", "-port", &port.to_string()]);
    cmd
}
