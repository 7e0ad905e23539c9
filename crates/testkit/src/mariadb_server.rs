//! A real MariaDB server for tests: `mariadb-install-db` into a temporary
//! directory, then `mariadbd` on 127.0.0.1 and a port of its own, with a user
//! that logs in with a password over TCP (so the client's authentication is
//! exercised) and a database of its own.
//!
//! Nothing is read from the system's option files (`--no-defaults`), so
//! the Debian package's own configuration and service play no part. When
//! the tests run as root, the server runs as root too (`--user=root`, which
//! MariaDB requires to be said explicitly).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::needs::{self, Need};
use crate::process::{output_within, TOOL_LIMIT};
use crate::servers::Server;

pub const USER: &str = "sojourn";
pub const PASSWORD: &str = "s3cret-my";
pub const DATABASE: &str = "ycsb";

pub struct Mariadb {
    pub server: Server,
    spec: Spec,
}

/// How the server is started, kept for restarts.
struct Spec {
    mariadbd: PathBuf,
    client: PathBuf,
    dir: PathBuf,
    as_root: bool,
    options: Vec<String>,
}

fn sbin_dirs() -> Vec<PathBuf> {
    vec![PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")]
}

impl Spec {
    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("mysqld.sock")
    }

    fn command(&self, port: u16) -> Command {
        // Temporary tables in a folder of this server's own: the shared
        // /tmp is cleaned by others and holds other servers' files.
        let tmp = self.dir.join("tmp");
        let _ = std::fs::create_dir_all(&tmp);
        let mut cmd = Command::new(&self.mariadbd);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", self.data().display()))
            .arg(format!("--tmpdir={}", tmp.display()))
            .arg(format!("--socket={}", self.socket().display()))
            .arg(format!(
                "--pid-file={}",
                self.dir.join("mysqld.pid").display()
            ))
            .arg(format!("--port={port}"))
            .args(["--bind-address=127.0.0.1", "--skip-name-resolve"])
            .args([
                "--innodb-buffer-pool-size=64M",
                "--innodb-log-file-size=32M",
            ])
            .args(["--innodb-flush-log-at-trx-commit=2", "--skip-log-bin"])
            // io_uring and native AIO are often unavailable in containers.
            .arg("--innodb-use-native-aio=0")
            .arg("--max-connections=200");
        if self.as_root {
            cmd.arg("--user=root");
        }
        cmd.args(&self.options);
        cmd
    }

    /// Run SQL (any length: it goes through stdin) as root over the Unix
    /// socket, within [`TOOL_LIMIT`].
    fn root_sql(&self, sql: &str) -> std::process::Output {
        output_within(
            Command::new(&self.client)
                .arg("--no-defaults")
                .arg(format!("--socket={}", self.socket().display()))
                .args(["-uroot", "--batch", "--skip-column-names"]),
            Some(sql.as_bytes()),
            TOOL_LIMIT,
        )
    }
}

impl Mariadb {
    /// Start a server. `None` when the run leaves MariaDB out.
    pub fn start() -> Option<Mariadb> {
        Self::start_with(&[])
    }

    /// Start a server with extra `mariadbd` options.
    pub fn start_with(options: &[&str]) -> Option<Mariadb> {
        Self::start_inner(options, false)
    }

    /// Start a server with a certificate for IP address 127.0.0.1 issued by
    /// a test CA ([`Mariadb::ca_cert`]), where the test user must use TLS.
    pub fn start_tls() -> Option<Mariadb> {
        Self::start_inner(&[], true)
    }

    /// The CA certificate of a [`Mariadb::start_tls`] server.
    pub fn ca_cert(&self) -> PathBuf {
        self.spec.dir.join("ca.crt")
    }

    fn start_inner(options: &[&str], tls: bool) -> Option<Mariadb> {
        if needs::left_out(Need::Mariadb) {
            return None;
        }
        let mariadbd = needs::binary(Need::Mariadb, "mariadbd", &sbin_dirs());
        let install = needs::binary(Need::Mariadb, "mariadb-install-db", &[]);
        let client = needs::binary(Need::Mariadb, "mariadb", &[]);
        let dir = tempfile::Builder::new()
            .prefix("sojourn-mariadb")
            .tempdir()
            .expect("tempdir");
        // SAFETY: geteuid has no preconditions.
        let as_root = unsafe { libc::geteuid() } == 0;
        let mut options: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        if tls {
            let files = crate::postgres_server::tls_files(dir.path());
            options.extend([
                format!("--ssl-ca={}", files.ca.display()),
                format!("--ssl-cert={}", files.cert.display()),
                format!("--ssl-key={}", files.key.display()),
            ]);
        }
        let spec = Spec {
            mariadbd,
            client,
            dir: dir.path().to_path_buf(),
            as_root,
            options,
        };
        let mut install = Command::new(install);
        install
            .arg("--no-defaults")
            .arg(format!("--datadir={}", spec.data().display()))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
            .arg("--innodb-use-native-aio=0");
        if as_root {
            install.arg("--user=root");
        }
        // Once seen failing on a heavily loaded machine, and not again in
        // dozens of runs: one more attempt into an empty directory, with
        // the first failure's output shown.
        for attempt in 1..=2 {
            let out = output_within(&mut install, None, TOOL_LIMIT);
            if out.status.success() {
                break;
            }
            let message = format!(
                "mariadb-install-db failed (attempt {attempt}):\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(attempt < 2, "{message}");
            eprintln!("{message}");
            let _ = std::fs::remove_dir_all(spec.data());
        }
        let server = Server::start("mariadbd", dir, |port| spec.command(port));
        let mut db = Mariadb { server, spec };
        db.wait_accepting();
        let setup = format!(
            "DELETE FROM mysql.global_priv WHERE User = ''; FLUSH PRIVILEGES; \
             CREATE DATABASE {DATABASE}; \
             CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'{}; \
             GRANT ALL ON {DATABASE}.* TO '{USER}'@'%';",
            if tls { " REQUIRE SSL" } else { "" }
        );
        let out = db.spec.root_sql(&setup);
        assert!(
            out.status.success(),
            "creating the test user: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(db)
    }

    pub fn port(&self) -> u16 {
        self.server.port
    }

    /// The directory holding the data and the socket: a place for extra
    /// files the server must read (certificates).
    pub fn dir(&self) -> &Path {
        &self.spec.dir
    }

    /// `mysql://sojourn:PASSWORD@127.0.0.1:PORT/ycsb`.
    pub fn url(&self) -> String {
        format!(
            "mysql://{USER}:{PASSWORD}@127.0.0.1:{}/{DATABASE}",
            self.port()
        )
    }

    /// The URL without the password (give it by property or environment).
    pub fn url_without_password(&self) -> String {
        format!("mysql://{USER}@127.0.0.1:{}/{DATABASE}", self.port())
    }

    /// Poll (bounded) until the server answers a query.
    fn wait_accepting(&mut self) {
        let start = Instant::now();
        loop {
            if self.spec.root_sql("SELECT 1").status.success() {
                return;
            }
            if start.elapsed() > Duration::from_secs(60) {
                panic!("mariadbd not answering:\n{}", self.server.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Run SQL as root in the test database; panics on failure; returns the
    /// output (tab-separated, no column names).
    pub fn sql(&self, sql: &str) -> String {
        let out = self.spec.root_sql(&format!("USE {DATABASE}; {sql}"));
        assert!(
            out.status.success(),
            "mariadb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stop the server process (SIGSTOP) and return once every thread of
    /// it shows it stopped.
    pub fn pause(&self) {
        self.server.pause();
    }

    /// Let a paused server go on.
    pub fn resume(&self) {
        self.server.signal(libc::SIGCONT);
    }

    /// Crash the server (SIGKILL).
    pub fn kill(&mut self) {
        self.server.signal(libc::SIGCONT);
        self.server.kill();
    }

    /// Start again on the same port and data: crash recovery runs, then
    /// sessions are accepted.
    pub fn restart(&mut self) {
        let cmd = self.spec.command(self.port());
        self.server.restart(cmd);
        self.wait_accepting();
    }
}

impl Drop for Mariadb {
    fn drop(&mut self) {
        let pid = self.server.pid();
        if pid == 0 {
            return;
        }
        // A clean shutdown (SIGTERM) rather than the kill `Server` would
        // do: quicker to clean up, and no crash recovery in the logs.
        self.server.signal(libc::SIGCONT);
        self.server.signal(libc::SIGTERM);
        crate::postgres_server::wait_gone(&[pid], Duration::from_secs(10));
    }
}
