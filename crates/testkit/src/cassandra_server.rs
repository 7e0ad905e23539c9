//! A single Apache Cassandra 5.0 node for tests: the `cassandra-all` jar
//! and its dependencies from Maven Central (scripts/deps puts them in
//! [`LIB`]) run by Java 17 as a foreground `CassandraDaemon`
//! (`scripts/cassandra-node`), on 127.0.0.1 with a native (CQL) and a
//! storage port of its own, a small heap, its data, commit log and
//! configuration in a temporary directory.
//!
//! Clients may encrypt (TLS with a certificate for 127.0.0.1 from a test
//! authority, [`CassandraServer::tls_ca`]) or not, on the same port.
//!
//! It checks passwords (`PasswordAuthenticator`): once it listens, the
//! default superuser `cassandra` creates the role [`USER`] with the
//! password [`PASSWORD`], the one the tests connect as (a password no
//! other text of the test contains, so that a leak of it is found).
//!
//! Starting a node is slow and takes much memory, so each test binary
//! starts one node and runs its checks on it in turn.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::needs::{self, Need};
use crate::servers::{self, Server};

/// Where scripts/deps puts Cassandra's jars.
pub const LIB: &str = "/opt/sojourn-cassandra-5.0.9/lib";
/// The jar that says the others are there.
const MAIN_JAR: &str = "cassandra-all-5.0.9.jar";
/// Debian's Java 17, which Cassandra 5.0 needs (it runs on 11 and 17).
const DEBIAN_JAVA_17: &str = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java";

/// The role the tests connect as, and its password.
pub const USER: &str = "bench";
pub const PASSWORD: &str = "cql-Pa55-for-tests";
/// The superuser every new node has, with its well-known password.
const SUPERUSER: (&str, &str) = ("cassandra", "cassandra");

/// The log line of a node whose default superuser exists: logins work
/// from then on.
const SUPERUSER_READY: &str = "Created default superuser role";

pub struct CassandraServer {
    pub server: Server,
    pub storage_port: u16,
    /// The authority that signed the node's certificate (for 127.0.0.1):
    /// clients may encrypt, and then check the node against it.
    pub tls_ca: PathBuf,
    java: PathBuf,
    tls: tempfile::TempDir,
}

/// The Java 17 to run the node with, or `None` when the run leaves
/// Cassandra out; a panic saying how to install it when it is missing.
fn java() -> Option<PathBuf> {
    if needs::left_out(Need::Cassandra) {
        return None;
    }
    if !Path::new(LIB).join(MAIN_JAR).is_file() {
        panic!(
            "{}",
            needs::missing(Need::Cassandra, "Cassandra 5.0.9's jars", LIB)
        );
    }
    if Path::new(DEBIAN_JAVA_17).is_file() {
        return Some(PathBuf::from(DEBIAN_JAVA_17));
    }
    let java = needs::binary(Need::Cassandra, "java", &[]);
    let version = Command::new(&java).arg("-version").output().ok();
    let said = version
        .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        .unwrap_or_default();
    assert!(
        said.contains("version \"17") || said.contains("version \"11"),
        "{} is not Java 17 or 11, which Cassandra 5.0 needs: {said}",
        java.display()
    );
    Some(java)
}

impl CassandraServer {
    /// Start a node with the role [`USER`] ready, or `None` when the run
    /// leaves Cassandra out.
    pub fn start() -> Option<CassandraServer> {
        let java = java()?;
        let tls = tempfile::tempdir().expect("temp dir");
        let files = crate::postgres_server::tls_files(tls.path());
        // Cassandra's PEM keystore: the key, then its certificate.
        let mut pem = std::fs::read(&files.key).expect("the node's key");
        pem.extend(std::fs::read(&files.cert).expect("the node's certificate"));
        std::fs::write(tls.path().join("node.pem"), pem).expect("the node's keystore");
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path().to_path_buf();
        let storage = Cell::new(0);
        let server = Server::start("cassandra", dir, |native| {
            // A storage port of its own for each attempt: one taken in the
            // meantime makes the node exit as a taken native port does.
            storage.set(servers::free_port());
            command(&java, &d, native, storage.get(), tls.path())
        });
        let node = CassandraServer {
            server,
            storage_port: storage.get(),
            tls_ca: files.ca,
            java,
            tls,
        };
        node.ready();
        node.add_role();
        Some(node)
    }

    pub fn port(&self) -> u16 {
        self.server.port
    }

    /// `host:port` of the native protocol.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port())
    }

    /// The URL of keyspace `keyspace` as [`USER`].
    pub fn url(&self, keyspace: &str) -> String {
        format!("cassandra://{USER}:{PASSWORD}@{}/{keyspace}", self.host())
    }

    /// [`CassandraServer::url`] without the password.
    pub fn url_without_password(&self, keyspace: &str) -> String {
        format!("cassandra://{USER}@{}/{keyspace}", self.host())
    }

    /// Stop every thread of the node (SIGSTOP) and return once they are.
    pub fn pause(&self) {
        self.server.pause();
    }

    pub fn resume(&self) {
        self.server.resume();
    }

    /// Kill the node (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        self.server.kill();
    }

    /// Start it again on the same ports and data (its commit log replayed),
    /// and wait until logins work.
    pub fn restart(&mut self) {
        let cmd = command(
            &self.java,
            self.server.dir.path(),
            self.port(),
            self.storage_port,
            self.tls.path(),
        );
        let from = self.server.log().len();
        self.server.restart(cmd);
        self.wait_for_log(from, "Startup complete");
    }

    /// Wait (bounded) until the default superuser exists, as logged.
    fn ready(&self) {
        self.wait_for_log(0, SUPERUSER_READY);
    }

    /// Wait (bounded) for `line` in the log after byte `from`.
    fn wait_for_log(&self, from: usize, line: &str) {
        let start = Instant::now();
        while !self.server.log().get(from..).unwrap_or("").contains(line) {
            assert!(
                start.elapsed() < servers::READY_LIMIT,
                "cassandra did not log {line:?} within {:?}:\n{}",
                servers::READY_LIMIT,
                self.server.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Create the role the tests log in as, through the superuser.
    fn add_role(&self) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        rt.block_on(async {
            let session = scylla::client::session_builder::SessionBuilder::new()
                .known_node(self.host())
                .user(SUPERUSER.0, SUPERUSER.1)
                .build()
                .await
                .unwrap_or_else(|e| panic!("logging in to cassandra as its superuser: {e}"));
            let role = format!(
                "CREATE ROLE IF NOT EXISTS {USER} WITH PASSWORD = '{PASSWORD}' \
                 AND LOGIN = true AND SUPERUSER = true"
            );
            session
                .query_unpaged(role, ())
                .await
                .unwrap_or_else(|e| panic!("creating role {USER}: {e}"));
        });
    }
}

/// The node on ports `native` and `storage`, its files in `dir`, its
/// keystore in `tls`: `scripts/cassandra-node`, which the benchmarks start
/// nodes with too.
fn command(java: &Path, dir: &Path, native: u16, storage: u16, tls: &Path) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/cassandra-node");
    let mut cmd = Command::new(script);
    cmd.arg(dir)
        .arg(native.to_string())
        .arg(storage.to_string())
        .env("JAVA", java)
        .env("CASSANDRA_LIB", LIB)
        .env("CASSANDRA_AUTH", "1")
        .env("CASSANDRA_TLS_PEM", tls.join("node.pem"));
    cmd
}

/// The token Cassandra's Murmur3Partitioner gives a key (the first half of
/// its MurmurHash3 x64 128, with Cassandra's sign-extended tail bytes; the
/// empty key is the ring's minimum), for the order a scan returns: an
/// independent model of the server, which the tests check against its
/// own `token()`.
pub fn token(key: &str) -> i64 {
    let data = key.as_bytes();
    if data.is_empty() {
        return i64::MIN;
    }
    let h = murmur3_x64_128_h1(data);
    if h == i64::MIN {
        i64::MAX
    } else {
        h
    }
}

fn murmur3_x64_128_h1(data: &[u8]) -> i64 {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let fmix = |mut k: u64| {
        k ^= k >> 33;
        k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
        k ^= k >> 33;
        k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        k ^ (k >> 33)
    };
    // Each half's word is scrambled with the constants in its own order.
    let k1_of = |k: u64| k.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    let k2_of = |k: u64| k.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    let mix = |h: u64, r: u32, other: u64, add: u64| {
        h.rotate_left(r)
            .wrapping_add(other)
            .wrapping_mul(5)
            .wrapping_add(add)
    };
    let (mut h1, mut h2) = (0u64, 0u64);
    let blocks = data.len() / 16;
    for b in 0..blocks {
        let word = |i: usize| {
            let at = b * 16 + i * 8;
            u64::from_le_bytes(data[at..at + 8].try_into().expect("8 bytes"))
        };
        h1 = mix(h1 ^ k1_of(word(0)), 27, h2, 0x52dc_e729);
        h2 = mix(h2 ^ k2_of(word(1)), 31, h1, 0x3849_5ab5);
    }
    let tail = &data[blocks * 16..];
    // Java's bytes are signed: each tail byte is sign-extended before it
    // is shifted into place (Cassandra keeps this for compatibility).
    let byte = |i: usize| tail[i] as i8 as i64 as u64;
    let (mut k1, mut k2) = (0u64, 0u64);
    for i in (8..tail.len()).rev() {
        k2 ^= byte(i) << ((i - 8) * 8);
    }
    if tail.len() > 8 {
        h2 ^= k2_of(k2);
    }
    for i in (0..tail.len().min(8)).rev() {
        k1 ^= byte(i) << (i * 8);
    }
    if !tail.is_empty() {
        h1 ^= k1_of(k1);
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1.wrapping_add(h2) as i64
}
