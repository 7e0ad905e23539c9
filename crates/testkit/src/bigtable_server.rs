//! The official Bigtable emulator (`go install
//! cloud.google.com/go/bigtable/cmd/emulator@latest`, or gcloud's packaged
//! `cbtemulator`) on 127.0.0.1 and a free port, for the Bigtable tests.
//!
//! The emulator keeps everything in memory: a restart loses every table.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::servers::{find_binary, free_port, Server};

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

/// The emulator binary; `None` (after saying so) when it is not installed
/// outside CI, a panic in CI. `SOJOURN_BIGTABLE_EMULATOR` overrides.
pub fn emulator_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SOJOURN_BIGTABLE_EMULATOR") {
        return Some(PathBuf::from(p));
    }
    if let Some(found) = go_bin_dirs()
        .into_iter()
        .map(|d| d.join("emulator"))
        .find(|p| p.is_file())
    {
        return Some(found);
    }
    // gcloud's `google-cloud-cli-bigtable-emulator` package.
    find_binary(
        "cbtemulator",
        &[PathBuf::from(
            "/usr/lib/google-cloud-sdk/platform/bigtable-emulator",
        )],
    )
}

/// A running emulator.
pub struct BigtableEmulator {
    pub server: Server,
    binary: PathBuf,
}

impl BigtableEmulator {
    /// Start the emulator, or `None` if it is not installed (outside CI).
    pub fn start() -> Option<BigtableEmulator> {
        let binary = emulator_binary()?;
        let port = free_port();
        let dir = tempfile::tempdir().expect("tempdir");
        let server = Server::start("bigtable emulator", command(&binary, port), port, dir);
        Some(BigtableEmulator { server, binary })
    }

    /// `127.0.0.1:PORT`, the value for `BIGTABLE_EMULATOR_HOST`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.server.port)
    }

    /// Stop it (SIGSTOP) and return once the kernel shows it stopped: the
    /// signal is asynchronous, and a request sent just after `kill` could
    /// still be answered.
    pub fn pause(&self) {
        self.server.signal(libc::SIGSTOP);
        let stat = format!("/proc/{}/stat", self.server.pid());
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            // The state follows the parenthesised command name.
            let state = std::fs::read_to_string(&stat)
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .map(|(_, rest)| rest.trim_start().to_string())
                })
                .and_then(|rest| rest.chars().next());
            if state == Some('T') || Instant::now() > deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
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

fn command(binary: &PathBuf, port: u16) -> Command {
    let mut cmd = Command::new(binary);
    cmd.args(["-host", "127.0.0.1", "-port", &port.to_string()]);
    cmd
}
