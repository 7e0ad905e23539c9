//! A memcached server for tests: `memcached` on 127.0.0.1 at a port it
//! picks itself (`-p -1`, written to the file `MEMCACHED_PORT_FILENAME`
//! names, as memcached's own tests do), TCP only (`-U 0`), as user
//! `nobody` when the tests run as root (memcached refuses to run as root
//! otherwise).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::needs::{self, Need};
use crate::servers::Server;

pub struct MemcachedServer {
    pub server: Server,
    bin: PathBuf,
}

impl MemcachedServer {
    /// Start a server, or `None` when the run leaves memcached out.
    pub fn start() -> Option<MemcachedServer> {
        let bin = needs::find_binary(Need::Memcached, "memcached", &[PathBuf::from("/usr/bin")])?;
        let dir = tempfile::tempdir().expect("temp dir");
        // As root, memcached becomes `nobody` before it writes the port
        // file, so the directory must be nobody's.
        if as_root() {
            let nobody = crate::postgres_server::user_ids("nobody").expect("user nobody");
            crate::postgres_server::give(dir.path(), Some(nobody));
        }
        let mut cmd = command(&bin, -1);
        cmd.env("MEMCACHED_PORT_FILENAME", dir.path().join("ports"));
        let server = Server::start_telling_port("memcached", dir, cmd, told_port);
        Some(MemcachedServer { server, bin })
    }

    pub fn port(&self) -> u16 {
        self.server.port
    }

    pub fn url(&self) -> String {
        format!("memcached://127.0.0.1:{}", self.port())
    }

    /// Kill the server and start a new, empty one on the same port.
    pub fn restart(&mut self) {
        let cmd = command(&self.bin, self.port().into());
        self.server.restart(cmd);
    }
}

/// The TCP port in memcached's port file (`TCP INET: PORT`), which it
/// renames into place once written.
fn told_port(dir: &Path) -> Option<u16> {
    let ports = std::fs::read_to_string(dir.join("ports")).ok()?;
    ports
        .lines()
        .find_map(|l| l.strip_prefix("TCP INET: "))?
        .trim()
        .parse()
        .ok()
}

fn command(bin: &Path, port: i32) -> Command {
    let mut cmd = Command::new(bin);
    cmd.arg("-l")
        .arg("127.0.0.1")
        .arg("-p")
        .arg(port.to_string())
        .arg("-U")
        .arg("0");
    if as_root() {
        cmd.arg("-u").arg("nobody");
    }
    cmd
}

fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
