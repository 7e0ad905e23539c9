//! End-to-end checks shared by the client-server SQL databases (PostgreSQL,
//! MySQL/MariaDB): the real `sojourn` binary against a real server, for
//! load and run of workloads A and E, a table made by YCSB's documented
//! DDL and filled by plain SQL, and a run through a server stall and
//! through a crash and restart.
#![allow(dead_code)]

use std::process::{Child, Stdio};
use std::time::Duration;

use crate::util::*;

/// A running test server, as these checks use it.
pub trait TestDb {
    /// `scheme://user:password@127.0.0.1:port/db`.
    fn url(&self) -> String;
    /// The same without the password.
    fn url_without_password(&self) -> String;
    /// The `db.url` YCSB's JDBC binding would be given.
    fn jdbc_url(&self) -> String;
    fn user(&self) -> &'static str;
    fn password(&self) -> &'static str;
    /// The environment variable the backend reads a password from.
    fn password_env(&self) -> &'static str;
    /// Run SQL as an administrator in the test database; returns the output
    /// rows, one per line.
    fn sql(&self, sql: &str) -> String;
    fn pause(&self);
    fn resume(&self);
    fn kill(&mut self);
    fn restart(&mut self);
    /// End every client session but the administrator's own, as a DBA (or
    /// a failover) does: each connection is cut under whatever it was
    /// doing. Returns how many were cut.
    fn cut_connections(&self) -> usize;
}

fn ok_count(s: &Summary, group: &str) -> f64 {
    get_or_zero(s, group, "Return=OK")
}

fn errors(s: &Summary) -> f64 {
    ["READ", "UPDATE", "INSERT", "SCAN"]
        .iter()
        .map(|g| get_or_zero(s, g, "Return=ERROR"))
        .sum()
}

/// Assert success, that the password shows nowhere, and parse the summary.
fn summary(db: &dyn TestDb, out: &std::process::Output) -> Summary {
    let stdout = ok(out);
    let stderr = text(&out.stderr);
    assert!(
        !stdout.contains(db.password()) && !stderr.contains(db.password()),
        "password in output:\n{stdout}\n{stderr}"
    );
    parse_summary(&stdout)
}

/// Load and run workloads A and E, naming the database in each of the
/// ways a user can: URL with password, YCSB's JDBC properties, URL with the
/// password in the environment.
pub fn workloads_a_and_e(db: &dyn TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let common = ["-p", "recordcount=1000", "-threads", "4"];
    let url = db.url();
    let load = sojourn(
        dir.path(),
        &[
            &["load", &url, "-P", "workloads/workloada", "--drop"][..],
            &common[..],
        ]
        .concat(),
    );
    let s = summary(db, &load);
    assert_eq!(ok_count(&s, "INSERT"), 1000.0, "{s:#?}");

    let db_url = format!("db.url={}", db.jdbc_url());
    let db_user = format!("db.user={}", db.user());
    let db_passwd = format!("db.passwd={}", db.password());
    let run = sojourn(
        dir.path(),
        &[
            &[
                "run",
                "jdbc",
                "-p",
                &db_url,
                "-p",
                &db_user,
                "-p",
                &db_passwd,
                "-P",
                "workloads/workloada",
                "-p",
                "operationcount=3000",
                "--seed",
                "7",
            ][..],
            &common[..],
        ]
        .concat(),
    );
    let s = summary(db, &run);
    let (r, u) = (ok_count(&s, "READ"), ok_count(&s, "UPDATE"));
    assert_eq!(r + u, 3000.0, "every operation succeeded: {s:#?}");
    assert!(
        r > 1000.0 && u > 1000.0,
        "a mix of reads and updates: {s:#?}"
    );

    let bare = db.url_without_password();
    let with_env = |args: &[&str]| {
        bin()
            .args(args)
            .args(common)
            .arg("--data-dir")
            .arg(dir.path())
            .arg("--no-progress")
            .env(db.password_env(), db.password())
            .run_to_end()
    };
    let load = with_env(&["load", &bare, "-P", "workloads/workloade", "--drop"]);
    assert_eq!(ok_count(&summary(db, &load), "INSERT"), 1000.0);
    let run = with_env(&[
        "run",
        &bare,
        "-P",
        "workloads/workloade",
        "-p",
        "operationcount=1000",
        "--seed",
        "7",
    ]);
    let s = summary(db, &run);
    let (scans, inserts) = (ok_count(&s, "SCAN"), ok_count(&s, "INSERT"));
    assert_eq!(scans + inserts, 1000.0, "{s:#?}");
    assert!(scans > 900.0 && inserts > 10.0, "{s:#?}");
    let rows: f64 = db
        .sql("SELECT COUNT(*) FROM usertable")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(rows, 1000.0 + inserts);
}

/// The table exactly as YCSB's JDBC binding documents it, filled by plain
/// SQL with YCSB's key names, is read and updated by `sojourn run`.
pub fn reads_a_table_made_by_plain_sql(db: &dyn TestDb) {
    db.sql("DROP TABLE IF EXISTS usertable");
    db.sql(
        "CREATE TABLE usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY, \
         FIELD0 TEXT, FIELD1 TEXT, FIELD2 TEXT, FIELD3 TEXT, FIELD4 TEXT, \
         FIELD5 TEXT, FIELD6 TEXT, FIELD7 TEXT, FIELD8 TEXT, FIELD9 TEXT);",
    );
    let mut sql = String::from("INSERT INTO usertable VALUES ");
    let mut key = String::new();
    for n in 0..1000u64 {
        sojourn_core::keys::build_key_name(n, 1, true, &mut key);
        if n > 0 {
            sql.push_str(",\n");
        }
        sql.push_str(&format!("('{key}'"));
        for f in 0..10 {
            sql.push_str(&format!(", '{}'", format!("{key}-{f}-").repeat(4)));
        }
        sql.push(')');
    }
    sql.push(';');
    db.sql(&sql);

    let dir = tempfile::tempdir().unwrap();
    let url = db.url();
    let run = sojourn(
        dir.path(),
        &[
            "run",
            &url,
            "-P",
            "workloads/workloadc",
            "-p",
            "operationcount=2000",
            "-threads",
            "2",
        ],
    );
    let s = summary(db, &run);
    assert_eq!(
        ok_count(&s, "READ"),
        2000.0,
        "every read found its key: {s:#?}"
    );
    let run = sojourn(
        dir.path(),
        &[
            "run",
            &url,
            "-P",
            "workloads/workloada",
            "-p",
            "operationcount=2000",
            "-threads",
            "2",
        ],
    );
    let s = summary(db, &run);
    assert_eq!(
        ok_count(&s, "READ") + ok_count(&s, "UPDATE"),
        2000.0,
        "{s:#?}"
    );
    assert_eq!(
        db.sql("SELECT COUNT(*) FROM usertable").trim(),
        "1000",
        "updates changed records, added none"
    );
}

/// Kills the child (by its PID) if the test fails before it exits.
struct ChildGuard(Option<Child>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Which fault to inject.
#[derive(Copy, Clone, Debug)]
pub enum Fault {
    /// SIGSTOP the server for this long (longer than `timeout.ms`).
    Stall(Duration),
    /// SIGKILL the server, wait this long, start it again on the same port.
    Restart(Duration),
    /// The server ends every client session (the run's connections and
    /// its counter sampler), twice, this long apart.
    Cut(Duration),
}

/// Operation timeout of the fault runs.
const TIMEOUT_MS: u64 = 500;

/// A run of workload A at a target rate, with `fault` injected once the
/// run is going: it completes, counts errors, shows the outage in response
/// time and prints its summary.
pub fn survives(db: &mut dyn TestDb, fault: Fault) {
    let dir = tempfile::tempdir().unwrap();
    let url = db.url();
    let load = sojourn(
        dir.path(),
        &[
            "load",
            &url,
            "-P",
            "workloads/workloada",
            "--drop",
            "-threads",
            "4",
        ],
    );
    summary(db, &load);

    // 400 operations/s for 2400 operations: about 6 s.
    let timeout = format!("timeout.ms={TIMEOUT_MS}");
    let child = bin()
        .args([
            "run",
            &url,
            "-P",
            "workloads/workloada",
            "-p",
            "operationcount=2400",
            "-target",
            "400",
            "-threads",
            "4",
            "-p",
            &timeout,
            "-s",
            "-p",
            "status.interval=0.5",
            "-p",
            "measurement.interval=both",
        ])
        .arg("--data-dir")
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut guard = ChildGuard(Some(child));
    let child = guard.0.as_mut().unwrap();
    // Readiness: the first status line says the run is under way.
    let rest = wait_until_running(child, None);
    let outage = match fault {
        Fault::Stall(d) => {
            db.pause();
            std::thread::sleep(d);
            db.resume();
            d
        }
        Fault::Restart(d) => {
            db.kill();
            std::thread::sleep(d);
            db.restart();
            d
        }
        Fault::Cut(d) => {
            // At least the run's four connections each time.
            assert!(db.cut_connections() >= 4);
            // The gap between the two cuts: the fault's shape, not a
            // synchronisation.
            std::thread::sleep(d);
            assert!(db.cut_connections() >= 4);
            Duration::ZERO
        }
    };
    let out = finish(guard.0.take().unwrap());
    let stderr = rest.join().unwrap();
    assert!(out.status.success(), "{stderr}");
    let stdout = text(&out.stdout);
    assert!(!stdout.contains(db.password()) && !stderr.contains(db.password()));
    let s = parse_summary(&stdout);
    assert!(s.contains_key("OVERALL"), "summary printed: {stdout}");
    let done = ok_count(&s, "READ") + ok_count(&s, "UPDATE");
    let failed = errors(&s);
    assert_eq!(
        done + failed,
        2400.0,
        "every operation counted once: {s:#?}\n{stderr}"
    );
    // A session cut while idle is replaced before its next operation
    // without an error (the backend looks at the connection first); only
    // an operation in flight at the cut fails, which is timing. The second
    // cut finding the run's connections again shows they were replaced.
    if !matches!(fault, Fault::Cut(_)) {
        assert!(failed >= 1.0, "the outage caused errors: {s:#?}");
    }
    assert!(done >= 1200.0, "the run went on after it: {s:#?}");
    // Operations arriving during the outage waited for it to end.
    let worst = get(&s, "Intended-READ", "MaxLatency(us)").max(get(
        &s,
        "Intended-UPDATE",
        "MaxLatency(us)",
    ));
    let outage_us = outage.as_micros() as f64;
    assert!(
        worst >= 0.75 * outage_us,
        "response time shows the {outage:?} outage: max {worst} us\n{s:#?}"
    );
    if let Fault::Restart(_) = fault {
        // The server's counters started over: said, and no figures drawn
        // from readings of two different servers.
        assert!(
            stderr.contains("restarted") && !stderr.lines().any(|l| l.starts_with("server: ")),
            "{stderr}"
        );
    }
    if let Fault::Stall(_) = fault {
        // A stalled operation failed at the timeout, not before it.
        let timed_out = get_or_zero(&s, "READ-FAILED", "MaxLatency(us)").max(get_or_zero(
            &s,
            "UPDATE-FAILED",
            "MaxLatency(us)",
        ));
        assert!(
            timed_out >= 0.9 * (TIMEOUT_MS * 1000) as f64,
            "service time of failures reaches the timeout: {s:#?}"
        );
        assert_stall_blamed_on_the_database(&stderr);
    }
}

/// A table left without a column the workload reads: `bench` refuses it
/// before any operation, naming the `fieldcount` that matches it; `run` on
/// it fails every read, says why in the database's own `words` (in the
/// warning, the JSON report and the store), exits 1, and loses nothing:
/// the summary is printed and the run stored.
pub fn a_table_missing_a_column(db: &dyn TestDb, words: &str) {
    let dir = tempfile::tempdir().unwrap();
    let url = db.url();
    let fields = ["-p", "fieldcount=3", "-p", "recordcount=100"];
    let load = sojourn(
        dir.path(),
        &[
            &["load", &url, "-P", "workloads/workloadc", "--drop"][..],
            &fields,
        ]
        .concat(),
    );
    assert_eq!(ok_count(&summary(db, &load), "INSERT"), 100.0);
    db.sql("ALTER TABLE usertable DROP COLUMN field2");

    let refused = refused(
        dir.path(),
        &[&["bench", &url, "-P", "workloads/workloadc"][..], &fields].concat(),
    );
    assert!(
        refused.contains("without column(s) FIELD2")
            && refused.contains("-p fieldcount=2 matches")
            && refused.contains("--drop"),
        "{refused}"
    );
    assert!(!refused.contains("Return="), "nothing ran: {refused}");
    assert_eq!(db.sql("SELECT COUNT(*) FROM usertable").trim(), "100");

    let json = dir.path().join("run.json");
    let run = sojourn(
        dir.path(),
        &[
            &["run", &url, "-P", "workloads/workloadc"][..],
            &fields,
            &[
                "-p",
                "operationcount=200",
                "-threads",
                "2",
                "--json",
                json.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    let (stdout, stderr) = (text(&run.stdout), text(&run.stderr));
    assert_eq!(run.status.code(), Some(1), "{stdout}\n{stderr}");
    let s = parse_summary(&stdout);
    assert_eq!(get(&s, "READ", "Return=ERROR"), 200.0, "{s:#?}");
    assert!(
        stderr.contains("200 of 200 READ operations did not succeed: 200 × ")
            && stderr.contains(words)
            && stderr.contains("(first at "),
        "{stderr}"
    );
    assert!(stderr.contains("the phase failed"), "{stderr}");
    assert_all_stored(&stderr);
    assert!(stderr.contains("recorded as run"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let failures = &report["ops"]["read"]["failures"];
    assert_eq!(failures[0]["count"], 200, "{failures}");
    assert_eq!(failures[0]["status"], "ERROR", "{failures}");
    assert!(
        failures[0]["text"].as_str().unwrap().contains(words),
        "{failures}"
    );
    let rows = query_rows(
        dir.path(),
        "SELECT op, status, failures, first_text FROM run_failures",
    );
    let stored = rows.to_string();
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{stored}");
    assert_eq!(
        (&rows[0]["op"], &rows[0]["status"], &rows[0]["failures"]),
        (&"read".into(), &"error".into(), &200.into()),
        "{stored}"
    );
    assert!(
        rows[0]["first_text"].as_str().unwrap().contains(words),
        "{stored}"
    );
    assert!(!stored.contains(db.password()), "{stored}");
}
