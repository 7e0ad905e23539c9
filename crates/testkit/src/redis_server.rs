//! A Redis server for tests: `redis-server` on 127.0.0.1 at a port of its
//! own (Redis cannot pick one itself: see [`Server::start`]),
//! nothing persisted (`--save '' --appendonly no`), working files in a
//! temporary directory, optionally with a password (`requirepass`).
//! Valkey's `valkey-server` is used when `redis-server` is absent.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::needs::{self, Need};
use crate::servers::Server;

pub struct RedisServer {
    pub server: Server,
    pub password: Option<String>,
    /// With TLS: where the certificates are.
    pub tls: Option<TlsFiles>,
    bin: PathBuf,
    extra: Vec<String>,
}

/// PEM files of a TLS test server: a certificate authority, and a client
/// certificate it signed (the server's is signed by it too, for
/// `127.0.0.1` and `localhost`).
#[derive(Clone, Debug)]
pub struct TlsFiles {
    pub ca: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

/// `redis-server`'s path (else `valkey-server`'s), or `None` when the run
/// leaves Redis out; a panic saying how to install it when neither is.
fn binary() -> Option<PathBuf> {
    if needs::left_out(Need::Redis) {
        return None;
    }
    Some(
        needs::locate("redis-server", &[])
            .or_else(|| needs::locate("valkey-server", &[]))
            .unwrap_or_else(|| needs::binary(Need::Redis, "redis-server", &[])),
    )
}

impl RedisServer {
    /// Start a server, or `None` when the run leaves Redis out.
    pub fn start(password: Option<&str>) -> Option<RedisServer> {
        let bin = binary()?;
        let dir = tempfile::tempdir().expect("temp dir");
        let password = password.map(str::to_string);
        let d = dir.path().to_path_buf();
        let server = Server::start("redis-server", dir, |port| {
            command(&bin, port, &d, password.as_deref(), &[])
        });
        Some(RedisServer {
            server,
            password,
            tls: None,
            bin,
            extra: Vec::new(),
        })
    }

    /// A server that speaks only TLS, with certificates made for the test
    /// by `openssl`; with `check_clients`, it also demands a client
    /// certificate (Redis' default). `None` when the run leaves Redis out.
    pub fn start_tls(check_clients: bool) -> Option<RedisServer> {
        let bin = binary()?;
        let openssl = needs::tool("openssl", crate::postgres_server::OPENSSL);
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        let run = |args: &[&str]| {
            let out = crate::process::output_within(
                Command::new(&openssl).args(args).current_dir(d),
                None,
                crate::process::TOOL_LIMIT,
            );
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        let mut ca = vec!["req", "-x509", "-days", "2", "-subj", "/CN=sojourn test CA"];
        ca.extend(ec);
        ca.extend(["-keyout", "ca.key", "-out", "ca.crt"]);
        run(&ca);
        // Extensions make X.509 v3 certificates, which is all rustls takes.
        std::fs::write(
            d.join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        std::fs::write(d.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
        for name in ["server", "client"] {
            let key = format!("{name}.key");
            let csr = format!("{name}.csr");
            let crt = format!("{name}.crt");
            let ext = format!("{name}.ext");
            let subj = format!("/CN={name}");
            let mut req = vec!["req", "-subj", &subj];
            req.extend(ec);
            req.extend(["-keyout", &key, "-out", &csr]);
            run(&req);
            run(&[
                "x509",
                "-req",
                "-days",
                "2",
                "-in",
                &csr,
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &crt,
                "-extfile",
                &ext,
            ]);
        }
        let p = |f: &str| d.join(f).display().to_string();
        let extra = vec![
            "--tls-cert-file".to_string(),
            p("server.crt"),
            "--tls-key-file".to_string(),
            p("server.key"),
            "--tls-ca-cert-file".to_string(),
            p("ca.crt"),
            "--tls-auth-clients".to_string(),
            if check_clients { "yes" } else { "no" }.to_string(),
        ];
        let tls = TlsFiles {
            ca: d.join("ca.crt"),
            client_cert: d.join("client.crt"),
            client_key: d.join("client.key"),
        };
        let d = d.to_path_buf();
        let server = Server::start("redis-server", dir, |port| {
            command(&bin, port, &d, None, &extra)
        });
        Some(RedisServer {
            server,
            password: None,
            tls: Some(tls),
            bin,
            extra,
        })
    }

    pub fn port(&self) -> u16 {
        self.server.port
    }

    /// `redis://[:password@]127.0.0.1:port` (`rediss://` with TLS).
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        match &self.password {
            Some(p) => format!("{scheme}://:{p}@127.0.0.1:{}", self.port()),
            None => format!("{scheme}://127.0.0.1:{}", self.port()),
        }
    }

    /// Kill the server and start a new, empty one on the same port.
    pub fn restart(&mut self) {
        let cmd = command(
            &self.bin,
            self.port(),
            self.server.dir.path(),
            self.password.as_deref(),
            &self.extra,
        );
        self.server.restart(cmd);
    }

    /// Run one command (after `AUTH` when there is a password) on a fresh
    /// connection and return its reply in short: a simple string, error or
    /// integer as its line (`+OK`, `:3`), a bulk string as its contents
    /// (`nil` when null), an array as its header line (`*2`).
    pub fn command(&self, args: &[&str]) -> String {
        let s = TcpStream::connect(("127.0.0.1", self.port())).expect("connect to redis");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut req = Vec::new();
        if let Some(p) = &self.password {
            encode(&mut req, &["AUTH", p]);
        }
        encode(&mut req, args);
        (&s).write_all(&req).unwrap();
        let mut r = std::io::BufReader::new(&s);
        if self.password.is_some() {
            let auth = read_line(&mut r);
            assert_eq!(auth, "+OK", "AUTH failed");
        }
        let line = read_line(&mut r);
        match line.strip_prefix('$').map(str::parse::<i64>) {
            Some(Ok(n)) if n >= 0 => {
                let mut value = vec![0; n as usize + 2];
                r.read_exact(&mut value).expect("bulk reply");
                value.truncate(n as usize);
                String::from_utf8_lossy(&value).into_owned()
            }
            Some(_) => "nil".to_string(),
            None => line,
        }
    }
}

impl RedisServer {
    /// Every command the server has run so far, by name, from `INFO
    /// commandstats`: a count the code under test did not compute.
    pub fn commandstats(&self) -> std::collections::BTreeMap<String, u64> {
        self.command(&["INFO", "commandstats"])
            .lines()
            .filter_map(|l| {
                let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
                let calls = rest
                    .strip_prefix("calls=")?
                    .split(',')
                    .next()?
                    .parse()
                    .ok()?;
                Some((name.to_string(), calls))
            })
            .collect()
    }

    /// The commands run from `before` (a [`Self::commandstats`]) to now,
    /// those run at least once.
    pub fn commands_since(
        &self,
        before: &std::collections::BTreeMap<String, u64>,
    ) -> std::collections::BTreeMap<String, u64> {
        self.commandstats()
            .into_iter()
            .map(|(k, v)| {
                let d = v - before.get(&k).copied().unwrap_or(0);
                (k, d)
            })
            .filter(|&(_, d)| d > 0)
            .collect()
    }
}

fn read_line(r: &mut impl std::io::BufRead) -> String {
    let mut line = String::new();
    r.read_line(&mut line).expect("reply from redis");
    line.trim_end().to_string()
}

fn encode(out: &mut Vec<u8>, args: &[&str]) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
}

fn command(
    bin: &PathBuf,
    port: u16,
    dir: &std::path::Path,
    password: Option<&str>,
    tls: &[String],
) -> Command {
    let mut cmd = Command::new(bin);
    // With TLS the port is the TLS port and plain TCP is off.
    let (plain, tls_port) = if tls.is_empty() {
        (port, None)
    } else {
        (0, Some(port))
    };
    cmd.arg("--port").arg(plain.to_string());
    if let Some(p) = tls_port {
        cmd.arg("--tls-port").arg(p.to_string()).args(tls);
    }
    cmd.arg("--bind")
        .arg("127.0.0.1")
        .arg("--save")
        .arg("")
        .arg("--appendonly")
        .arg("no")
        .arg("--dir")
        .arg(dir);
    if let Some(p) = password {
        cmd.arg("--requirepass").arg(p);
    }
    cmd
}
