//! A real PostgreSQL server for tests: `initdb` into a temporary directory,
//! then `postgres` on 127.0.0.1 and a port of its own, with password (SCRAM)
//! authentication so that the client's authentication is exercised too.
//!
//! PostgreSQL refuses to run as root. When the tests run as root, the
//! server runs as the `postgres` user that Debian's package creates (else
//! `nobody`), with the temporary directory handed to that user.
//!
//! A stall ([`Postgres::pause`]) or a crash ([`Postgres::kill`]) reaches
//! the postmaster and every backend process it forked, as a real stall or
//! crash of the machine would; a SIGSTOP of the postmaster alone would
//! leave established connections served.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::needs::{self, Need};
use crate::process::{output_within, TOOL_LIMIT};
use crate::servers::{versioned_dirs, wait_stopped, Server};

/// How to install `openssl`, which makes the TLS tests' certificates.
pub const OPENSSL: &str = "Debian package openssl";

/// The database superuser the tests log in as, and its password.
pub const USER: &str = "sojourn";
pub const PASSWORD: &str = "s3cret-pg";
pub const DATABASE: &str = "postgres";

pub struct Postgres {
    pub server: Server,
    spec: Spec,
}

/// How the server is started, kept for restarts.
struct Spec {
    bin: PathBuf,
    data: PathBuf,
    socket_dir: PathBuf,
    run_as: Option<(u32, u32)>,
    settings: Vec<String>,
}

/// Uid and gid of `name`, if that user exists.
pub(crate) fn user_ids(name: &str) -> Option<(u32, u32)> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam returns a pointer into static storage or null; we
    // read two integers from it immediately, on the calling thread.
    unsafe {
        let pw = libc::getpwnam(c.as_ptr());
        if pw.is_null() {
            None
        } else {
            Some(((*pw).pw_uid, (*pw).pw_gid))
        }
    }
}

/// Hand `path` to `ids` (when the server runs as another user).
pub(crate) fn give(path: &Path, ids: Option<(u32, u32)>) {
    if let Some((uid, gid)) = ids {
        std::os::unix::fs::chown(path, Some(uid), Some(gid))
            .unwrap_or_else(|e| panic!("chown {}: {e}", path.display()));
    }
}

/// State and parent of process `pid`, from `/proc/PID/stat`.
fn stat(pid: u32) -> Option<(String, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": comm may contain spaces and parentheses,
    // so split after the last closing parenthesis.
    let rest = stat.rsplit_once(')')?.1;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.to_string();
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Whether `pid` is running (a zombie awaiting `wait` is not: it holds no
/// resources any more).
pub(crate) fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != "Z" && state != "X")
}

/// `pid` and its children. PostgreSQL's backends put themselves in
/// sessions of their own (`setsid`), so a process group would not reach
/// them; their parent, while it lives, does.
pub(crate) fn family(pid: u32) -> Vec<u32> {
    let mut pids = vec![pid];
    if let Ok(dir) = std::fs::read_dir("/proc") {
        pids.extend(
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
                .filter(|&p| stat(p).is_some_and(|(_, ppid)| ppid == pid)),
        );
    }
    pids
}

/// Signal processes we started (the server and the children it forked).
pub(crate) fn signal_all(pids: &[u32], sig: libc::c_int) {
    for &pid in pids.iter().filter(|&&p| p != 0) {
        // SAFETY: signalling a process we started or its child.
        unsafe {
            libc::kill(pid as libc::pid_t, sig);
        }
    }
}

/// Poll (bounded) until none of `pids` runs.
pub(crate) fn wait_gone(pids: &[u32], limit: Duration) -> bool {
    let start = Instant::now();
    while pids.iter().any(|&p| alive(p)) {
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// Certificate files for a TLS test server.
pub struct TlsFiles {
    /// The test CA's certificate: what a verifying client trusts.
    pub ca: PathBuf,
    /// The server's certificate (for IP address 127.0.0.1, signed by the
    /// CA) and its private key.
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Make a test CA and a server certificate for 127.0.0.1 in `dir`, with
/// the `openssl` command.
pub fn tls_files(dir: &Path) -> TlsFiles {
    let files = TlsFiles {
        ca: dir.join("ca.crt"),
        cert: dir.join("server.crt"),
        key: dir.join("server.key"),
    };
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .expect("extensions file");
    let openssl = needs::tool("openssl", OPENSSL);
    let run = |args: &str| {
        let out = output_within(
            Command::new(&openssl)
                .args(args.split_whitespace())
                .current_dir(dir),
            None,
            TOOL_LIMIT,
        );
        assert!(
            out.status.success(),
            "openssl {args}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    run(&format!(
        "req -x509 {ec} -keyout ca.key -out ca.crt -days 2 -subj /CN=sojourn-test-CA"
    ));
    run(&format!(
        "req {ec} -keyout server.key -out server.csr -subj /CN=127.0.0.1"
    ));
    run(
        "x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
         -out server.crt -days 2 -extfile server.ext",
    );
    // PostgreSQL refuses a key file that others can read.
    std::fs::set_permissions(
        &files.key,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .expect("key permissions");
    files
}

impl Spec {
    fn command(&self, port: u16) -> Command {
        let mut cmd = Command::new(self.bin.join("postgres"));
        cmd.arg("-D")
            .arg(&self.data)
            .arg("-p")
            .arg(port.to_string())
            .arg("-k")
            .arg(&self.socket_dir)
            .args(["-c", "listen_addresses=127.0.0.1"])
            // Durable across a kill of the server (commits reach the
            // kernel), not across a power loss: all a test needs.
            .args(["-c", "fsync=off", "-c", "full_page_writes=off"])
            // Segments in the data directory rather than /dev/shm, so that
            // nothing outlives the temporary directory after a kill.
            .args(["-c", "dynamic_shared_memory_type=mmap"])
            .args(["-c", "max_connections=200"]);
        for s in &self.settings {
            cmd.arg("-c").arg(s);
        }
        if let Some((uid, gid)) = self.run_as {
            std::os::unix::process::CommandExt::uid(&mut cmd, uid);
            std::os::unix::process::CommandExt::gid(&mut cmd, gid);
        }
        cmd
    }
}

impl Postgres {
    /// Start a server with settings for fast tests (no fsync). `None` when
    /// the run leaves PostgreSQL out.
    pub fn start() -> Option<Postgres> {
        Self::start_with(&[])
    }

    /// Start a server with extra `-c name=value` settings.
    pub fn start_with(settings: &[&str]) -> Option<Postgres> {
        Self::start_inner(settings, false)
    }

    /// Start a server that accepts only TLS connections over TCP, with a
    /// certificate for IP address 127.0.0.1 issued by a test CA whose
    /// certificate is [`Postgres::ca_cert`].
    pub fn start_tls() -> Option<Postgres> {
        Self::start_inner(&[], true)
    }

    /// The CA certificate of a [`Postgres::start_tls`] server.
    pub fn ca_cert(&self) -> PathBuf {
        self.spec.socket_dir.join("ca.crt")
    }

    fn start_inner(settings: &[&str], tls: bool) -> Option<Postgres> {
        let postgres = needs::find_binary(
            Need::Postgres,
            "postgres",
            &versioned_dirs(Path::new("/usr/lib/postgresql"), "bin"),
        )?;
        // The other programs (initdb, pg_isready) sit next to the real
        // binary, which a `postgres` on PATH may only link to.
        let postgres = std::fs::canonicalize(&postgres).unwrap_or(postgres);
        let bin = postgres.parent().expect("bin dir").to_path_buf();
        let dir = tempfile::Builder::new()
            .prefix("sojourn-pg")
            .tempdir()
            .expect("tempdir");
        // SAFETY: geteuid has no preconditions.
        let run_as = if unsafe { libc::geteuid() } == 0 {
            Some(
                user_ids("postgres")
                    .or_else(|| user_ids("nobody"))
                    .expect("a non-root user to run PostgreSQL as"),
            )
        } else {
            None
        };
        give(dir.path(), run_as);
        let data = dir.path().join("data");
        let pwfile = dir.path().join("pwfile");
        std::fs::write(&pwfile, PASSWORD).expect("pwfile");
        give(&pwfile, run_as);
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", USER, "-A", "scram-sha-256", "-E", "UTF8"])
            .args(["--locale=C", "--no-sync"])
            .arg(format!("--pwfile={}", pwfile.display()));
        if let Some((uid, gid)) = run_as {
            std::os::unix::process::CommandExt::uid(&mut initdb, uid);
            std::os::unix::process::CommandExt::gid(&mut initdb, gid);
        }
        let out = output_within(&mut initdb, None, TOOL_LIMIT);
        assert!(
            out.status.success(),
            "initdb failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let mut settings: Vec<String> = settings.iter().map(|s| s.to_string()).collect();
        if tls {
            let files = tls_files(dir.path());
            for f in [&files.cert, &files.key] {
                give(f, run_as);
            }
            let hba = dir.path().join("pg_hba.conf");
            std::fs::write(
                &hba,
                "local all all scram-sha-256\nhostssl all all 127.0.0.1/32 scram-sha-256\n",
            )
            .expect("pg_hba.conf");
            give(&hba, run_as);
            settings.extend([
                "ssl=on".to_string(),
                format!("ssl_cert_file={}", files.cert.display()),
                format!("ssl_key_file={}", files.key.display()),
                format!("hba_file={}", hba.display()),
            ]);
        }
        let spec = Spec {
            bin,
            data,
            socket_dir: dir.path().to_path_buf(),
            run_as,
            settings,
        };
        let server = Server::start("postgres", dir, |port| spec.command(port));
        let mut pg = Postgres { server, spec };
        pg.wait_accepting();
        Some(pg)
    }

    pub fn port(&self) -> u16 {
        self.server.port
    }

    /// The data directory's parent, owned by the server's user: a place
    /// for extra files the server must read (certificates).
    pub fn dir(&self) -> &Path {
        &self.spec.socket_dir
    }

    /// Hand a file to the user the server runs as.
    pub fn give(&self, path: &Path) {
        give(path, self.spec.run_as);
    }

    /// `postgres://sojourn:PASSWORD@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!(
            "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{DATABASE}",
            self.port()
        )
    }

    /// The URL without the password (give it by property or environment).
    pub fn url_without_password(&self) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{DATABASE}", self.port())
    }

    /// Poll (bounded) until the server accepts sessions: it listens before
    /// crash recovery ends, refusing sessions meanwhile.
    fn wait_accepting(&mut self) {
        let start = Instant::now();
        loop {
            let ok = output_within(
                Command::new(self.spec.bin.join("pg_isready"))
                    .args(["-h", "127.0.0.1", "-t", "2", "-q", "-p"])
                    .arg(self.port().to_string()),
                None,
                TOOL_LIMIT,
            )
            .status
            .success();
            if ok {
                return;
            }
            if start.elapsed() > Duration::from_secs(60) {
                panic!("postgres not accepting sessions:\n{}", self.server.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Run SQL (any length: it goes through stdin) with psql as the test
    /// user; panics with psql's output on failure; returns its output
    /// (unaligned, tuples only).
    pub fn psql(&self, sql: &str) -> String {
        let out = output_within(
            Command::new(self.spec.bin.join("psql"))
                .args(["-h", "127.0.0.1", "-U", USER, "-d", DATABASE])
                .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-p"])
                .arg(self.port().to_string())
                .env("PGPASSWORD", PASSWORD)
                .env("PGSSLMODE", "prefer"),
            Some(sql.as_bytes()),
            TOOL_LIMIT,
        );
        assert!(
            out.status.success(),
            "psql failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stop every server process (SIGSTOP) and return once each shows it
    /// stopped: the postmaster first, so that the processes it forked are
    /// all known once it is, then those.
    pub fn pause(&self) {
        let pid = self.server.pid();
        signal_all(&[pid], libc::SIGSTOP);
        wait_stopped(&[pid], "the postmaster");
        let pids = family(pid);
        signal_all(&pids, libc::SIGSTOP);
        wait_stopped(&pids, "postgres");
    }

    /// Let a paused server go on.
    pub fn resume(&self) {
        signal_all(&family(self.server.pid()), libc::SIGCONT);
    }

    /// Crash the server: SIGKILL to every process, as a power loss would.
    pub fn kill(&mut self) {
        let pids = family(self.server.pid());
        signal_all(&pids, libc::SIGKILL);
        // The backends must be gone before a new postmaster starts, or it
        // finds the old shared memory in use and refuses to start.
        assert!(
            wait_gone(&pids, Duration::from_secs(10)),
            "postgres processes survived SIGKILL"
        );
        self.server.kill();
    }

    /// Start again on the same port and data (after [`Postgres::kill`]):
    /// crash recovery runs, then sessions are accepted.
    pub fn restart(&mut self) {
        let cmd = self.spec.command(self.port());
        self.server.restart(cmd);
        self.wait_accepting();
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let pid = self.server.pid();
        if pid == 0 {
            return;
        }
        // A fast shutdown (SIGINT) removes shared memory and sockets; a
        // paused server must be resumed to receive it.
        let pids = family(pid);
        signal_all(&pids, libc::SIGCONT);
        signal_all(&[pid], libc::SIGINT);
        if !wait_gone(&pids, Duration::from_secs(10)) {
            signal_all(&family(pid), libc::SIGKILL);
            wait_gone(&pids, Duration::from_secs(5));
        }
    }
}
