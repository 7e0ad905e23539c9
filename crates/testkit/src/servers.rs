//! Real database servers for the integration tests, started on free ports on
//! 127.0.0.1 with their data in temporary directories, and stopped (by the
//! PID we started) when dropped. One launcher per database in its own file.
//!
//! A missing server binary is a failure in CI (`CI=true`) and a skip with a
//! message elsewhere: `scripts/deps` installs them.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server process we started. Killing it on drop ends only our own child.
pub struct Server {
    pub name: &'static str,
    pub port: u16,
    pub dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Server {
    /// Start `cmd` (already configured to listen on `port` with data under
    /// `dir`) and wait until the port accepts connections.
    pub fn start(
        name: &'static str,
        mut cmd: Command,
        port: u16,
        dir: tempfile::TempDir,
    ) -> Server {
        let log = std::fs::File::create(dir.path().join("server.log")).expect("server log");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        let mut s = Server {
            name,
            port,
            dir,
            child: Some(child),
        };
        s.wait_ready(Duration::from_secs(60));
        s
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// Poll (bounded) until the port accepts a TCP connection; fail with the
    /// server's log if it exits or never listens.
    pub fn wait_ready(&mut self, limit: Duration) {
        let start = Instant::now();
        loop {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                panic!(
                    "{} exited with {status} before listening:\n{}",
                    self.name,
                    self.log()
                );
            }
            if start.elapsed() > limit {
                panic!(
                    "{} did not listen on port {} within {limit:?}:\n{}",
                    self.name,
                    self.port,
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// Send a signal to the server (SIGSTOP/SIGCONT for fault tests).
    pub fn signal(&self, sig: libc::c_int) {
        // SAFETY: signalling our own child process.
        unsafe {
            libc::kill(self.pid() as libc::pid_t, sig);
        }
    }

    /// Freeze the server (SIGSTOP) and return once every thread of it is
    /// stopped: the signal is asynchronous, and a thread mid-request could
    /// otherwise still answer. Polls /proc (bounded) on Linux.
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if all_threads_stopped(self.pid()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("{} did not stop within 10 s of SIGSTOP", self.name);
    }

    /// Undo [`Server::pause`].
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    /// Kill the server (SIGKILL) and wait for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Start it again on the same port and data directory.
    pub fn restart(&mut self, cmd: Command) {
        self.kill();
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(self.dir.path().join("server.log"))
            .expect("server log");
        let mut cmd = cmd;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("restarting {}: {e}", self.name));
        self.child = Some(child);
        self.wait_ready(Duration::from_secs(60));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether every thread of `pid` is in the stopped state ('T' in
/// /proc/PID/task/TID/stat), or the process is gone.
fn all_threads_stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return true;
    };
    tasks.filter_map(|t| t.ok()).all(|t| {
        std::fs::read_to_string(t.path().join("stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.trim_start().chars().next())
            })
            .is_none_or(|state| state == 'T')
    })
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("binding a free port")
}

/// Whether tests run in CI, where a missing server must fail, not skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Find an executable on PATH or in `extra` directories (globs not needed:
/// pass e.g. every `/usr/lib/postgresql/*/bin`). In CI a missing binary
/// panics; elsewhere it returns None and the caller skips with a message.
pub fn find_binary(name: &str, extra: &[PathBuf]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .chain(extra.iter().cloned())
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        let msg = format!("{name} is not installed; scripts/deps installs it");
        if in_ci() {
            panic!("{msg} (CI=true: a missing server is a failure)");
        }
        eprintln!("skipping: {msg}");
    }
    found
}

/// Directories under `root` matching `root/*/suffix` (e.g. PostgreSQL's
/// versioned `/usr/lib/postgresql/15/bin`).
pub fn versioned_dirs(root: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path().join(suffix))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.reverse();
    v
}
