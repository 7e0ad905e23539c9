//! What the tests need from the machine (database servers, the Bigtable
//! emulator, a browser) and what happens when one is missing: the test
//! fails with a message saying how to install it, the same for a user as
//! for CI. A partial run is an explicit choice: `SOJOURN_TEST_LEAVE_OUT`
//! names what to leave out (`bigtable,chromium`); a test that needs one of
//! those says so, appends a line to the file `SOJOURN_TEST_LEFT_OUT_LOG`
//! names (`scripts/test` lists those lines at the end, and fails on any it
//! was not told to leave out) and returns without it.
//!
//! This is the only way a test may skip: `scripts/test` refuses ignored
//! tests and skip messages of any other kind.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The variable naming what a partial run leaves out.
pub const LEAVE_OUT_ENV: &str = "SOJOURN_TEST_LEAVE_OUT";
/// The variable naming the file each left-out test appends a line to.
pub const LEFT_OUT_LOG_ENV: &str = "SOJOURN_TEST_LEFT_OUT_LOG";

/// Something the tests need that a machine may lack, by the name a
/// partial run leaves it out by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    Postgres,
    Mariadb,
    Redis,
    Memcached,
    Bigtable,
    Chromium,
    Duckdb,
    /// `kubernetes-validate`, for the manifests `sojourn kubernetes` prints.
    Kubernetes,
    /// Network namespaces (root, `ip` from iproute2): hosts of a test's own.
    Netns,
    /// Apache Cassandra's jars and Java 17.
    Cassandra,
    /// tmux: a real terminal for the live dashboard's tests.
    Tmux,
    /// Prometheus's `promtool`, which checks the metrics endpoint's
    /// exposition against Prometheus's own rules.
    Prometheus,
}

impl Need {
    pub const ALL: [Need; 12] = [
        Need::Postgres,
        Need::Mariadb,
        Need::Redis,
        Need::Memcached,
        Need::Bigtable,
        Need::Chromium,
        Need::Duckdb,
        Need::Kubernetes,
        Need::Netns,
        Need::Cassandra,
        Need::Tmux,
        Need::Prometheus,
    ];

    /// Its name in `SOJOURN_TEST_LEAVE_OUT` (and its snippet in
    /// `scripts/deps.d/`).
    pub fn name(self) -> &'static str {
        match self {
            Need::Postgres => "postgres",
            Need::Mariadb => "mariadb",
            Need::Redis => "redis",
            Need::Memcached => "memcached",
            Need::Bigtable => "bigtable",
            Need::Chromium => "chromium",
            Need::Duckdb => "duckdb",
            Need::Kubernetes => "kubernetes",
            Need::Netns => "netns",
            Need::Cassandra => "cassandra",
            Need::Tmux => "tmux",
            Need::Prometheus => "prometheus",
        }
    }

    /// How to install it by hand, for the message of a missing one.
    pub fn install(self) -> &'static str {
        match self {
            Need::Postgres => "Debian packages postgresql and postgresql-client",
            Need::Mariadb => "Debian packages mariadb-server and mariadb-client",
            Need::Redis => "Debian package redis-server, or Valkey's valkey-server",
            Need::Memcached => "Debian package memcached",
            Need::Bigtable => {
                "Go 1.21 or newer, then `go install \
                 cloud.google.com/go/bigtable/cmd/emulator@latest` and the binary \
                 on PATH as cbtemulator (scripts/deps does both), or \
                 SOJOURN_BIGTABLE_EMULATOR=/path/to/emulator"
            }
            Need::Chromium => "Debian package chromium",
            Need::Duckdb => {
                "DuckDB for Python: `python3 -m venv /opt/sojourn-duckdb`, \
                 `/opt/sojourn-duckdb/bin/pip install duckdb`, and its python3 on PATH as \
                 sojourn-duckdb (scripts/deps does all three)"
            }
            Need::Kubernetes => {
                "kubernetes-validate from PyPI: `python3 -m venv \
                 /opt/sojourn-kubernetes-validate`, `/opt/sojourn-kubernetes-validate/bin/pip \
                 install kubernetes-validate`, and its kubernetes-validate on PATH as \
                 sojourn-kubernetes-validate (scripts/deps does all three)"
            }
            Need::Netns => {
                "root, and Debian's iproute2 (`ip netns`, veth, bridges): run the tests as root, \
                 as CI does"
            }
            Need::Cassandra => {
                "Debian's openjdk-17-jre-headless and maven, then Cassandra's jars from Maven \
                 Central into /opt/sojourn-cassandra-5.0.9/lib (scripts/deps does all of it)"
            }
            Need::Tmux => "Debian package tmux",
            Need::Prometheus => "Debian package prometheus (for its promtool)",
        }
    }
}

/// What a `SOJOURN_TEST_LEAVE_OUT` value names: names separated by commas
/// or spaces; an unknown name is an error naming the accepted ones.
pub fn parse_leave_out(value: &str) -> Result<Vec<Need>, String> {
    value
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|name| {
            Need::ALL
                .into_iter()
                .find(|n| n.name() == name)
                .ok_or_else(|| {
                    let known: Vec<&str> = Need::ALL.iter().map(|n| n.name()).collect();
                    format!(
                        "{LEAVE_OUT_ENV}={value:?}: {name:?} is not something a test needs; \
                         the names are {}",
                        known.join(", ")
                    )
                })
        })
        .collect()
}

/// Whether this run leaves `need` out; when it does, says so and records
/// it in the left-out log. A bad `SOJOURN_TEST_LEAVE_OUT` panics.
pub fn left_out(need: Need) -> bool {
    let value = std::env::var(LEAVE_OUT_ENV).unwrap_or_default();
    let listed = parse_leave_out(&value).unwrap_or_else(|e| panic!("{e}"));
    if !listed.contains(&need) {
        return false;
    }
    let test = current_test();
    eprintln!("left out ({LEAVE_OUT_ENV} names {}): {test}", need.name());
    if let Some(log) = std::env::var_os(LEFT_OUT_LOG_ENV).filter(|v| !v.is_empty()) {
        record(Path::new(&log), need, &test);
    }
    true
}

/// `binary::test` for the test running on this thread (libtest names the
/// thread after the test).
fn current_test() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        // Cargo's test binaries end in `-<hash>`.
        .map(|s| match s.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
            _ => s,
        })
        .unwrap_or_else(|| "?".to_string());
    let thread = std::thread::current();
    format!("{binary}::{}", thread.name().unwrap_or("?"))
}

/// One line, `NEED<TAB>TEST`, in one `write` on a file opened for
/// appending, so that lines of tests running at once do not mix.
fn record(log: &Path, need: Need, test: &str) {
    let line = format!("{}\t{test}\n", need.name());
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap_or_else(|e| panic!("{LEFT_OUT_LOG_ENV}={}: {e}", log.display()));
    f.write_all(line.as_bytes())
        .unwrap_or_else(|e| panic!("{LEFT_OUT_LOG_ENV}={}: {e}", log.display()));
}

/// The message of a missing `program` that `need` brings.
pub fn missing(need: Need, program: &str, searched: &str) -> String {
    format!(
        "{program} is not installed (looked in {searched}), so this test cannot run. \
         Install it with scripts/deps ({}), or leave out every test that needs it: \
         {LEAVE_OUT_ENV}={} scripts/test (a partial run, which lists what it left out)",
        need.install(),
        need.name()
    )
}

/// The executable `name` on PATH or in `extra`, if there is one.
pub fn locate(name: &str, extra: &[PathBuf]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra.iter().cloned())
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The executable `name` that `need` brings (on PATH or in `extra`);
/// panics with how to install it when it is missing. Callers check
/// [`left_out`] first.
pub fn binary(need: Need, name: &str, extra: &[PathBuf]) -> PathBuf {
    locate(name, extra).unwrap_or_else(|| {
        let mut searched = vec!["PATH".to_string()];
        searched.extend(extra.iter().map(|d| d.display().to_string()));
        panic!("{}", missing(need, name, &searched.join(", ")))
    })
}

/// [`binary`], or `None` when the run leaves `need` out.
pub fn find_binary(need: Need, name: &str, extra: &[PathBuf]) -> Option<PathBuf> {
    if left_out(need) {
        return None;
    }
    Some(binary(need, name, extra))
}

/// A tool every run needs (no partial run leaves it out), e.g. `openssl`
/// for the TLS tests' certificates: panics with `install` when missing.
pub fn tool(name: &str, install: &str) -> PathBuf {
    locate(name, &[]).unwrap_or_else(|| {
        panic!("{name} is not installed on PATH, so this test cannot run: {install} (scripts/deps installs it)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leave_out_lists_are_parsed_and_checked() {
        assert_eq!(parse_leave_out(""), Ok(vec![]));
        assert_eq!(
            parse_leave_out("bigtable, chromium redis"),
            Ok(vec![Need::Bigtable, Need::Chromium, Need::Redis])
        );
        let e = parse_leave_out("bigtabel").unwrap_err();
        assert!(e.contains("\"bigtabel\""), "{e}");
        assert!(
            e.contains("postgres, mariadb, redis, memcached, bigtable, chromium"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_program_panics_saying_how_to_install_it() {
        let err =
            std::panic::catch_unwind(|| binary(Need::Memcached, "no-such-program-sojourn", &[]))
                .unwrap_err();
        let msg = err.downcast_ref::<String>().expect("a message");
        assert!(
            msg.contains("no-such-program-sojourn is not installed"),
            "{msg}"
        );
        assert!(msg.contains("scripts/deps"), "{msg}");
        assert!(msg.contains("Debian package memcached"), "{msg}");
        assert!(msg.contains("SOJOURN_TEST_LEAVE_OUT=memcached"), "{msg}");
    }

    #[test]
    fn only_executables_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "").unwrap();
        assert_eq!(locate("plain", &[dir.path().to_path_buf()]), None);
        std::fs::set_permissions(&plain, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        assert_eq!(locate("plain", &[dir.path().to_path_buf()]), Some(plain));
    }

    #[test]
    fn left_out_tests_are_recorded_one_line_each() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("left-out");
        record(&log, Need::Bigtable, "a::b");
        record(&log, Need::Chromium, "c::d");
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "bigtable\ta::b\nchromium\tc::d\n"
        );
        assert!(current_test().ends_with("::tests::left_out_tests_are_recorded_one_line_each"));
    }
}
