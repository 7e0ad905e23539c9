//! A memcached server for tests: `memcached` on 127.0.0.1 at a free port,
//! TCP only (`-U 0`), as user `nobody` when the tests run as root (memcached
//! refuses to run as root otherwise).

use std::path::PathBuf;
use std::process::Command;

use crate::servers::{find_binary, free_port, Server};

pub struct MemcachedServer {
    pub server: Server,
    bin: PathBuf,
}

impl MemcachedServer {
    /// Start a server, or `None` when memcached is not installed (a panic
    /// in CI).
    pub fn start() -> Option<MemcachedServer> {
        let bin = find_binary("memcached", &[PathBuf::from("/usr/bin")])?;
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let server = Server::start("memcached", command(&bin, port), port, dir);
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
        let cmd = command(&self.bin, self.port());
        self.server.restart(cmd);
    }
}

fn command(bin: &PathBuf, port: u16) -> Command {
    let mut cmd = Command::new(bin);
    cmd.arg("-l")
        .arg("127.0.0.1")
        .arg("-p")
        .arg(port.to_string())
        .arg("-U")
        .arg("0");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.arg("-u").arg("nobody");
    }
    cmd
}
