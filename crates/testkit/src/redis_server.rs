//! A Redis server for tests: `redis-server` on 127.0.0.1 at a free port,
//! nothing persisted (`--save '' --appendonly no`), working files in a
//! temporary directory, optionally with a password (`requirepass`).
//! Valkey's `valkey-server` is used when `redis-server` is absent.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::servers::{find_binary, free_port, Server};

pub struct RedisServer {
    pub server: Server,
    pub password: Option<String>,
    bin: PathBuf,
}

/// `redis-server`'s path (else `valkey-server`'s), or `None` (after a
/// message) when neither is installed outside CI.
fn binary() -> Option<PathBuf> {
    let on_path = |name: &str| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    };
    on_path("redis-server")
        .or_else(|| on_path("valkey-server"))
        .or_else(|| find_binary("redis-server", &[]))
}

impl RedisServer {
    /// Start a server, or `None` when Redis is not installed (a panic in CI).
    pub fn start(password: Option<&str>) -> Option<RedisServer> {
        let bin = binary()?;
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let password = password.map(str::to_string);
        let cmd = command(&bin, port, dir.path(), password.as_deref());
        let server = Server::start("redis-server", cmd, port, dir);
        Some(RedisServer {
            server,
            password,
            bin,
        })
    }

    pub fn port(&self) -> u16 {
        self.server.port
    }

    /// `redis://[:password@]127.0.0.1:port`.
    pub fn url(&self) -> String {
        match &self.password {
            Some(p) => format!("redis://:{p}@127.0.0.1:{}", self.port()),
            None => format!("redis://127.0.0.1:{}", self.port()),
        }
    }

    /// Kill the server and start a new, empty one on the same port.
    pub fn restart(&mut self) {
        let cmd = command(
            &self.bin,
            self.port(),
            self.server.dir.path(),
            self.password.as_deref(),
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

fn command(bin: &PathBuf, port: u16, dir: &std::path::Path, password: Option<&str>) -> Command {
    let mut cmd = Command::new(bin);
    cmd.arg("--port")
        .arg(port.to_string())
        .arg("--bind")
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
