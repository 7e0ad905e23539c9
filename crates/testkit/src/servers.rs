//! Real database servers for the integration tests, started on ports of
//! their own on 127.0.0.1 with their data in temporary directories, and
//! stopped (by the PID we started) when dropped. One launcher per database
//! in its own file.
//!
//! A port is never checked free and then used later: a server either picks
//! its own port and tells it (the Bigtable emulator, memcached), or is
//! started on a port that was free a moment ago and counts as ready only
//! once the kernel shows that very process listening there; one that finds
//! its port taken by someone else is started again on another. What a
//! missing server does is [`crate::needs`]'s business.

use std::io::{Read as _, Seek as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to listen.
pub const READY_LIMIT: Duration = Duration::from_secs(60);
/// How long a stopped process may take to show it stopped.
pub const STOP_LIMIT: Duration = Duration::from_secs(10);
/// Ports tried before giving up when each one is taken in the meantime.
const PORT_ATTEMPTS: usize = 20;

/// A server process we started. Killing it on drop ends only our own child.
pub struct Server {
    pub name: &'static str,
    pub port: u16,
    pub dir: tempfile::TempDir,
    child: Option<Child>,
}

/// Why one attempt to start a server did not give a listening server.
#[derive(Debug)]
pub enum StartError {
    /// Another process took the port first; the server said so and ended.
    PortTaken { port: u16, log: String },
    /// It ended for another reason.
    Exited { status: String, log: String },
    /// It did not listen within `limit` (and was killed).
    NotListening {
        port: Option<u16>,
        limit: Duration,
        log: String,
    },
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::PortTaken { port, log } => {
                write!(f, "port {port} was taken by another process:\n{log}")
            }
            StartError::Exited { status, log } => {
                write!(f, "exited with {status} before listening:\n{log}")
            }
            StartError::NotListening {
                port: Some(p),
                limit,
                log,
            } => {
                write!(f, "did not listen on port {p} within {limit:?}:\n{log}")
            }
            StartError::NotListening {
                port: None,
                limit,
                log,
            } => {
                write!(
                    f,
                    "did not say which port it listens on within {limit:?}:\n{log}"
                )
            }
        }
    }
}

/// Where a starting server's port comes from.
enum Port<'a> {
    /// Chosen by us and passed to the server.
    Given(u16),
    /// Chosen by the server (port 0), read back from its files in `dir`.
    Told(&'a dyn Fn(&Path) -> Option<u16>),
}

impl Server {
    /// Start a server on a port of its own: `command(port)` is the server
    /// configured to listen on `port` (on 127.0.0.1) with its data under
    /// `dir`. Ready once this very process listens there; a server that
    /// finds the port taken meanwhile is started again on another.
    pub fn start(
        name: &'static str,
        dir: tempfile::TempDir,
        command: impl FnMut(u16) -> Command,
    ) -> Server {
        Self::start_on_ports(
            name,
            dir,
            std::iter::repeat_with(free_port),
            command,
            READY_LIMIT,
        )
        .unwrap_or_else(|e| panic!("starting {name}: {e}"))
    }

    /// [`Server::start`] over the ports `ports` gives, each tried in turn
    /// while the last one was taken; at most [`PORT_ATTEMPTS`].
    pub fn start_on_ports(
        name: &'static str,
        mut dir: tempfile::TempDir,
        ports: impl IntoIterator<Item = u16>,
        mut command: impl FnMut(u16) -> Command,
        limit: Duration,
    ) -> Result<Server, StartError> {
        let mut last = None;
        for port in ports.into_iter().take(PORT_ATTEMPTS) {
            let from = log_len(dir.path());
            let child = spawn(name, &mut command(port), dir.path());
            let mut s = Server {
                name,
                port,
                dir,
                child: Some(child),
            };
            match s.wait_ready(Port::Given(port), from, limit) {
                Ok(_) => return Ok(s),
                Err(e @ StartError::PortTaken { .. }) => {
                    s.kill();
                    last = Some(e);
                    dir = take_dir(s);
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("at least one port to try"))
    }

    /// Start a server that picks a free port itself (it is told port 0)
    /// and says which: `port(dir)` reads it back from the server's files
    /// in `dir` (its log is `server.log`), `None` until it is there. No
    /// other process can take that port in between.
    pub fn start_telling_port(
        name: &'static str,
        dir: tempfile::TempDir,
        mut command: Command,
        port: impl Fn(&Path) -> Option<u16>,
    ) -> Server {
        let from = log_len(dir.path());
        let child = spawn(name, &mut command, dir.path());
        let mut s = Server {
            name,
            port: 0,
            dir,
            child: Some(child),
        };
        match s.wait_ready(Port::Told(&port), from, READY_LIMIT) {
            Ok(p) => {
                s.port = p;
                s
            }
            Err(e) => panic!("starting {name}: {e}"),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// Poll (bounded) until our process listens on its port; the port when
    /// it does, else why not (the process is killed when it overran). Its
    /// log starts at byte `from` of `server.log`.
    fn wait_ready(
        &mut self,
        port: Port<'_>,
        from: u64,
        limit: Duration,
    ) -> Result<u16, StartError> {
        let start = Instant::now();
        loop {
            let p = match &port {
                Port::Given(p) => Some(*p),
                Port::Told(read) => read(self.dir.path()),
            };
            if let Some(p) = p.filter(|&p| listens(self.pid(), p)) {
                return Ok(p);
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                let log = self.log_since(from);
                return Err(match p {
                    Some(port) if log.to_ascii_lowercase().contains("address already in use") => {
                        StartError::PortTaken { port, log }
                    }
                    _ => StartError::Exited {
                        status: status.to_string(),
                        log,
                    },
                });
            }
            if start.elapsed() > limit {
                self.kill();
                return Err(StartError::NotListening {
                    port: p,
                    limit,
                    log: self.log_since(from),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// The log from byte `from` on: what the latest start wrote.
    fn log_since(&self, from: u64) -> String {
        let mut s = String::new();
        if let Ok(mut f) = std::fs::File::open(self.dir.path().join("server.log")) {
            let _ = f.seek(std::io::SeekFrom::Start(from));
            let mut bytes = Vec::new();
            let _ = f.read_to_end(&mut bytes);
            s = String::from_utf8_lossy(&bytes).into_owned();
        }
        s
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
    /// otherwise still answer. Panics if it does not stop in time.
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
        wait_stopped(&[self.pid()], self.name);
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

    /// Start it again on the same port and data directory; panics if it
    /// does not listen there (another process took the port meanwhile).
    pub fn restart(&mut self, mut cmd: Command) {
        self.kill();
        let from = log_len(self.dir.path());
        self.child = Some(spawn(self.name, &mut cmd, self.dir.path()));
        if let Err(e) = self.wait_ready(Port::Given(self.port), from, READY_LIMIT) {
            panic!("restarting {}: {e}", self.name);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The directory of a server whose start failed, for the next attempt.
fn take_dir(mut s: Server) -> tempfile::TempDir {
    s.kill();
    // A placeholder that deletes nothing of ours when `s` drops.
    let placeholder = tempfile::tempdir().expect("tempdir");
    std::mem::replace(&mut s.dir, placeholder)
}

/// Spawn `cmd` with its output appended to `dir/server.log`.
fn spawn(name: &str, cmd: &mut Command, dir: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("server.log"))
        .expect("server log");
    cmd.stdin(Stdio::null())
        .stdout(log.try_clone().expect("log handle"))
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {name}: {e}"))
}

fn log_len(dir: &Path) -> u64 {
    std::fs::metadata(dir.join("server.log")).map_or(0, |m| m.len())
}

/// Whether process `pid` holds a TCP socket listening on `port`: the
/// kernel's table of listening sockets (`/proc/net/tcp`, `tcp6`) gives
/// the sockets' inodes, the process's file descriptors name them. A port
/// that accepts connections is not enough: it may be another process's.
pub fn listens(pid: u32, port: u16) -> bool {
    if pid == 0 {
        return false;
    }
    // The tables of the server's own network namespace (a server a test
    // started in a host of its own, see `netns`, is not in ours).
    let inodes: Vec<String> = ["tcp", "tcp6"]
        .iter()
        .filter_map(|t| std::fs::read_to_string(format!("/proc/{pid}/net/{t}")).ok())
        .flat_map(|table| {
            table
                .lines()
                .skip(1)
                .filter_map(|line| {
                    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
                    let f: Vec<&str> = line.split_whitespace().collect();
                    let local_port = f.get(1)?.rsplit_once(':')?.1;
                    let listening = *f.get(3)? == "0A";
                    (listening && u16::from_str_radix(local_port, 16).ok()? == port)
                        .then(|| f.get(9).map(|s| s.to_string()))
                        .flatten()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    if inodes.is_empty() {
        return false;
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .any(|target| {
            let t = target.to_string_lossy();
            inodes.iter().any(|i| t == format!("socket:[{i}]"))
        })
}

/// Poll (bounded) until every thread of every process in `pids` is
/// stopped (or gone); panics naming `what` when one is not in time.
pub fn wait_stopped(pids: &[u32], what: &str) {
    let start = Instant::now();
    while !pids.iter().all(|&p| all_threads_stopped(p)) {
        if start.elapsed() > STOP_LIMIT {
            panic!("{what} did not stop within {STOP_LIMIT:?} of SIGSTOP");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether every thread of `pid` is in the stopped state ('T' in
/// /proc/PID/task/TID/stat), or the process is gone or dead: a zombie
/// ('Z', 'X') runs no more, and one whose parent is stopped (a PostgreSQL
/// backend that exited just as its postmaster was) stays one until the
/// parent goes on.
pub fn all_threads_stopped(pid: u32) -> bool {
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
            .is_none_or(|state| matches!(state, 'T' | 'Z' | 'X'))
    })
}

/// A port nobody listened on a moment ago: a candidate for
/// [`Server::start`], which checks that its server got it. For a port that
/// must stay closed, use [`closed_port`].
///
/// Picked at random below the kernel's ephemeral range, from which it
/// numbers the local ends of outgoing connections: a server killed and
/// restarted on its port ([`Server::restart`]) could otherwise find it
/// taken by some other test's client meanwhile.
pub fn free_port() -> u16 {
    use std::hash::{BuildHasher as _, Hasher as _};
    const LOWEST: u16 = 10_000;
    let below = ephemeral_low().max(LOWEST + 1);
    let span = u64::from(below - LOWEST);
    let start = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    (0..span)
        .map(|i| LOWEST + ((start.wrapping_add(i)) % span) as u16)
        .find(|&port| TcpListener::bind(("127.0.0.1", port)).is_ok())
        .unwrap_or_else(|| {
            TcpListener::bind(("127.0.0.1", 0))
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .expect("binding a free port")
        })
}

/// The first port of the kernel's ephemeral range (Linux's default when it
/// cannot be read).
fn ephemeral_low() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// A port on 127.0.0.1 that refuses connections for as long as this is
/// kept: bound (so that no other process can listen there) but not
/// listening.
pub struct ClosedPort {
    socket: socket2::Socket,
}

impl ClosedPort {
    pub fn port(&self) -> u16 {
        self.socket
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .map(|a| a.port())
            .expect("a bound socket's port")
    }
}

/// A [`ClosedPort`]: where a test needs "nothing listens here".
pub fn closed_port() -> ClosedPort {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("a socket");
    let addr: std::net::SocketAddr = ([127, 0, 0, 1], 0).into();
    socket.bind(&addr.into()).expect("binding a port");
    ClosedPort { socket }
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
