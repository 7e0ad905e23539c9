//! The results store through the real binary: every phase is recorded,
//! `results show` prints exactly the summary the run printed, a run killed
//! with SIGKILL keeps every completed interval and shows as failed, client
//! processes writing at once lose nothing and merge, processes opening a
//! new store at once on a loaded machine store every run, a run the store
//! cannot take (from the start, or from halfway on PostgreSQL) is spooled
//! and imported whole, a run kept nowhere fails the command, PKB samples,
//! HdrHistogram logs and the JSON report come out right, secrets never
//! reach the store, and `results query` reads only.

mod util;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use regex::Regex;
use sojourn_store::{Filter, RunStatus, Store};
use util::*;

/// serde_json parses floats fast rather than correctly rounded (without
/// its float_roundtrip feature), so a value read back from the NDJSON may
/// be one unit in the last place off what was written.
fn assert_close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-12 * b.abs().max(1e-300), "{a} != {b}");
}

fn store_path(data: &Path) -> PathBuf {
    data.join("results.sqlite")
}

/// `sojourn results ...` against the default store in `data`.
fn results(data: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .arg("results")
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .run_to_end()
}

#[test]
fn show_prints_the_summary_the_run_printed() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        // Closed loop: service time only.
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=3000",
        ][..],
        // Open loop: both blocks, and extra percentiles.
        &[
            "run",
            "null:",
            "-P",
            "workloadb",
            "-p",
            "operationcount=2000",
            "-target",
            "4000",
            "-p",
            "hdrhistogram.percentiles=50,99.9",
        ][..],
    ] {
        let printed = ok(&sojourn(dir.path(), args));
        let shown = results(dir.path(), &["show", "last"]);
        assert_eq!(ok(&shown), printed, "{args:?}");
        assert!(text(&shown.stderr).contains("completed"));
    }
    // `bench` records its load phase too, under the same run URI.
    let db = format!("sqlite:{}", dir.path().join("b.sqlite").display());
    let printed = ok(&sojourn(
        dir.path(),
        &[
            "bench",
            "--db",
            &db,
            "-P",
            "workloadc",
            "-p",
            "operationcount=500",
        ],
    ));
    let store = Store::open(store_path(dir.path()).to_str().unwrap()).unwrap();
    let runs = store.list(&Default::default()).unwrap();
    assert_eq!(runs.len(), 4);
    let (load, run) = (&runs[2], &runs[3]);
    assert_eq!(
        (load.meta.phase.as_str(), run.meta.phase.as_str()),
        ("load", "run")
    );
    assert_eq!(load.meta.run_uri, run.meta.run_uri);
    assert_eq!(load.totals.as_ref().unwrap().operations, 1000);
    assert_eq!(
        ok(&results(dir.path(), &["show", run.meta.id.as_str()])),
        printed
    );
    // The shared URI names two stages, so it is refused with a way out,
    // and the way out shows what the run printed.
    let out = results(dir.path(), &["show", &run.meta.run_uri]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(&format!("name one as {}/STAGE", run.meta.run_uri)),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        ok(&results(
            dir.path(),
            &["show", &format!("{}/1", run.meta.run_uri)]
        )),
        printed
    );
}

#[test]
fn no_store_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    ok(&sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=100",
            "--no-store",
        ],
    ));
    assert!(!store_path(dir.path()).exists());
    // --results names the store instead of the default.
    let other = dir.path().join("elsewhere").join("r.sqlite");
    ok(&sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=100",
            "--results",
            other.to_str().unwrap(),
        ],
    ));
    assert!(!store_path(dir.path()).exists());
    let store = Store::open(other.to_str().unwrap()).unwrap();
    assert_eq!(store.list(&Default::default()).unwrap().len(), 1);
    // A bad --results is an error naming the flag, before anything runs.
    let out = sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "--results",
            "mysql://x/y",
        ],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--results"),
        "{}",
        text(&out.stderr)
    );
    let out = sojourn(
        dir.path(),
        &["run", "null:", "-P", "workloada", "--label", "novalue"],
    );
    assert!(
        text(&out.stderr).contains("--label \"novalue\""),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_killed_run_keeps_its_intervals_and_shows_failed() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(dir.path());
    let mut child = bin()
        .args([
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=0",
            "-p",
            "maxexecutiontime=120",
            "-target",
            "1000",
            "-p",
            "timeseries.interval=0.1",
            "--no-progress",
            "--data-dir",
        ])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    // Wait (bounded) until a few intervals are in the store.
    let deadline = Instant::now() + Duration::from_secs(60);
    let before = loop {
        assert!(Instant::now() < deadline, "no intervals stored within 60 s");
        if let Ok(ro) = Store::open_read_only(path.to_str().unwrap()) {
            if let Ok(run) = ro.load("last") {
                if run.intervals.len() >= 5 {
                    break run;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(before.summary.status, RunStatus::Running);
    // SAFETY: killing our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGKILL) }, 0);
    child.wait().unwrap();

    let store = Store::open(path.to_str().unwrap()).unwrap();
    let after = store.load(before.id().as_str()).unwrap();
    assert_eq!(after.summary.status, RunStatus::Failed);
    assert!(after
        .summary
        .error
        .as_deref()
        .unwrap()
        .contains("ended without finishing"));
    assert!(after.summary.totals.is_none());
    // Every interval seen before the kill is there, unchanged, and the
    // sequence has no gaps.
    assert!(after.intervals.len() >= before.intervals.len());
    for (i, (a, b)) in after.intervals.iter().zip(&before.intervals).enumerate() {
        assert_eq!(a.start, b.start, "interval {i}");
        assert_eq!(a.ops_done, b.ops_done, "interval {i}");
        for (kind, s) in b.stats.kinds() {
            let t = a.stats.op(kind).unwrap();
            assert_eq!(t.ok.service, s.ok.service, "interval {i} {kind:?}");
            assert_eq!(t.statuses, s.statuses, "interval {i} {kind:?}");
        }
    }
    for w in after.intervals.windows(2) {
        assert!(w[1].start > w[0].start);
    }
    // The commands show it as failed and still print what it measured.
    let list = ok(&results(dir.path(), &["list", "--status", "failed"]));
    assert!(list.contains(&before.id().as_str()[..8]), "{list}");
    let show = results(dir.path(), &["show", before.id().as_str()]);
    let s = parse_summary(&ok(&show));
    let ops: u64 = after.intervals.iter().map(|i| i.ops_done).sum();
    let shown = get_or_zero(&s, "READ", "Operations") + get_or_zero(&s, "UPDATE", "Operations");
    assert_eq!(shown as u64, ops);
    assert!(
        text(&show.stderr).contains("failed"),
        "{}",
        text(&show.stderr)
    );
}

#[test]
fn client_processes_write_at_once_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let n = 3;
    let children: Vec<_> = (0..n)
        .map(|i| {
            bin()
                .args([
                    "run",
                    "null:",
                    "-P",
                    "workloada",
                    "-p",
                    "operationcount=20000",
                    "-p",
                    "timeseries.interval=0.01",
                    "--run-uri",
                    "feedf00d",
                    "--client-index",
                    &i.to_string(),
                    "--client-count",
                    &n.to_string(),
                    "--no-progress",
                    "--data-dir",
                ])
                .arg(dir.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let mut reads = 0.0;
    for o in &outputs {
        let s = parse_summary(&ok(o));
        assert_all_stored(&text(&o.stderr));
        reads += get_or_zero(&s, "READ", "Operations");
    }
    let store = Store::open(store_path(dir.path()).to_str().unwrap()).unwrap();
    let runs = store.list(&Default::default()).unwrap();
    assert_eq!(runs.len(), n);
    for r in &runs {
        assert_eq!(r.status, RunStatus::Completed);
        let loaded = store.load(r.meta.id.as_str()).unwrap();
        assert_eq!(loaded.intervals.len() as u64, r.intervals);
        let ops: u64 = loaded.intervals.iter().map(|i| i.ops_done).sum();
        assert_eq!(
            ops, 20_000,
            "every interval of client {}",
            r.meta.client_index
        );
    }
    // The run URI shows the three merged.
    let merged = parse_summary(&ok(&results(dir.path(), &["show", "feedf00d"])));
    assert_eq!(get(&merged, "READ", "Operations"), reads);
    assert_eq!(
        get(&merged, "READ", "Operations") + get(&merged, "UPDATE", "Operations"),
        60_000.0
    );
    // However the stage is named (each client's id, its URI, URI/STAGE,
    // all at once), an export and a report hold it once: a BigQuery load
    // of it counts every operation once.
    let ids: Vec<String> = runs
        .iter()
        .map(|r| r.meta.id.as_str()[..8].to_string())
        .collect();
    let mut names: Vec<&str> = ids.iter().map(String::as_str).collect();
    names.extend(["feedf00d", "feedf00d/0"]);
    let mut export = vec!["export"];
    export.extend(&names);
    export.extend(["--format", "pkb"]);
    let samples = ok(&results(dir.path(), &export));
    let throughput: Vec<&str> = samples
        .lines()
        .filter(|l| l.contains("\"overall Throughput\""))
        .collect();
    assert_eq!(throughput.len(), 1, "{samples}");
    let mut report = vec!["report"];
    report.extend(&names);
    report.extend(["--format", "csv", "--table", "performance"]);
    let rows = ok(&bin()
        .args(&report)
        .arg("--data-dir")
        .arg(dir.path())
        .run_to_end());
    assert_eq!(
        rows.lines().count(),
        2,
        "a header, then the merged run:\n{rows}"
    );
    assert!(
        rows.lines().nth(1).unwrap().ends_with(",1,3"),
        "3 clients of 1 thread each: {rows}"
    );
}

/// Load on every core and a writer syncing to disk, started by the test
/// itself and stopped when dropped: the busy machine on which client
/// processes starting at once once lost runs.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(dir: &Path) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mut threads = Vec::new();
        for _ in 0..cores {
            let stop = stop.clone();
            threads.push(std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            }));
        }
        let stop_writer = stop.clone();
        let file = dir.join("load");
        threads.push(std::thread::spawn(move || {
            let chunk = vec![0x5au8; 4 << 20];
            while !stop_writer.load(Ordering::Relaxed) {
                let mut f = std::fs::File::create(&file).unwrap();
                f.write_all(&chunk).unwrap();
                f.sync_all().unwrap();
            }
            let _ = std::fs::remove_file(&file);
        }));
        Load { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Client processes of one run, all started at once on a data directory
/// with no store yet, on a loaded machine: every time, every run is
/// stored, and none says otherwise.
#[test]
fn processes_opening_a_new_store_at_once_store_every_run() {
    const PROCESSES: usize = 6;
    const ROUNDS: usize = 10;
    let scratch = tempfile::tempdir().unwrap();
    let _load = Load::start(scratch.path());
    for round in 0..ROUNDS {
        let dir = tempfile::tempdir().unwrap();
        // Each process waits in a shell for a line on stdin, then becomes
        // sojourn: the lines go out together, so the processes start at
        // one instant rather than one spawn after another.
        let mut children: Vec<_> = (0..PROCESSES)
            .map(|i| {
                Command::new("sh")
                    .args(["-c", "read go && exec \"$0\" \"$@\""])
                    .arg(env!("CARGO_BIN_EXE_sojourn"))
                    .args([
                        "run",
                        "null:",
                        "-P",
                        "workloada",
                        "-p",
                        "operationcount=500",
                        "--run-uri",
                        "feedf00d",
                        "--client-index",
                        &i.to_string(),
                        "--client-count",
                        &PROCESSES.to_string(),
                        "--no-progress",
                        "--data-dir",
                    ])
                    .arg(dir.path())
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in &mut children {
            c.stdin.take().unwrap().write_all(b"go\n").unwrap();
        }
        for c in children {
            let o = c.wait_with_output().unwrap();
            ok(&o);
            assert_all_stored(&text(&o.stderr));
        }
        let store = Store::open(store_path(dir.path()).to_str().unwrap()).unwrap();
        let runs = store
            .list(&Filter {
                run_uri: Some("feedf00d".into()),
                ..Filter::default()
            })
            .unwrap();
        assert_eq!(runs.len(), PROCESSES, "round {round}");
        for r in &runs {
            assert_eq!(r.status, RunStatus::Completed, "round {round}");
            assert_eq!(r.totals.as_ref().unwrap().operations, 500);
        }
    }
}

/// The spool file a run's stderr names: the file in "`sojourn results
/// import FILE` does".
fn spool_file(stderr: &str) -> PathBuf {
    let at = stderr
        .find("`sojourn results import ")
        .unwrap_or_else(|| panic!("no spool file named:\n{stderr}"));
    let rest = &stderr[at + "`sojourn results import ".len()..];
    PathBuf::from(&rest[..rest.find('`').unwrap()])
}

#[test]
fn a_run_the_store_cannot_take_is_spooled_then_imported() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_path(dir.path());
    // What is at the default store's place is not a store.
    std::fs::write(
        &store,
        "not a results store, nor any SQLite file at all, just text",
    )
    .unwrap();
    let args = [
        "run",
        "null:",
        "-P",
        "workloada",
        "-p",
        "operationcount=1000",
    ];
    let o = sojourn(dir.path(), &args);
    let printed = ok(&o);
    let stderr = text(&o.stderr);
    assert!(stderr.contains("file is not a database"), "{stderr}");
    let spooled = spool_file(&stderr);
    assert!(spooled.starts_with(dir.path().join("results.sqlite.spool")));
    assert!(spooled.is_file(), "{}", spooled.display());
    assert!(!stderr.contains("not recorded"), "{stderr}");

    // By hand, into another store: the run the command printed.
    let other = dir.path().join("other.sqlite");
    let o = bin()
        .args(["results", "import"])
        .arg(&spooled)
        .arg("--results")
        .arg(&other)
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let id = ok(&o).trim().to_string();
    assert!(
        text(&o.stderr).contains("imported 1 run from"),
        "{}",
        text(&o.stderr)
    );
    assert!(!spooled.exists(), "an imported spool file is removed");
    let shown = bin()
        .args(["results", "show", &id, "--results"])
        .arg(&other)
        .output()
        .unwrap();
    assert_eq!(ok(&shown), printed);

    // By the next command that opens the store, once it can be opened.
    let o = sojourn(dir.path(), &args);
    let second = ok(&o);
    let spooled = spool_file(&text(&o.stderr));
    std::fs::remove_file(&store).unwrap();
    let o = sojourn(dir.path(), &args);
    let third = ok(&o);
    let stderr = text(&o.stderr);
    assert!(stderr.contains("imported 1 spooled run from"), "{stderr}");
    assert!(!spooled.exists());
    let runs = Store::open(store.to_str().unwrap())
        .unwrap()
        .list(&Default::default())
        .unwrap();
    assert_eq!(runs.len(), 2);
    for (r, printed) in runs.iter().zip([&second, &third]) {
        assert_eq!(r.status, RunStatus::Completed);
        assert_eq!(
            &ok(&results(dir.path(), &["show", r.meta.id.as_str()])),
            printed
        );
    }
}

#[test]
fn a_run_kept_nowhere_fails_the_command_after_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        store_path(dir.path()),
        "not a results store, nor any SQLite file at all",
    )
    .unwrap();
    // Files where the spool folders would be.
    std::fs::write(dir.path().join("results.sqlite.spool"), "a file").unwrap();
    std::fs::write(dir.path().join("spool"), "a file").unwrap();
    let o = sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=1000",
        ],
    );
    let stderr = text(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(stderr.contains("could not be stored anywhere"), "{stderr}");
    // What was measured was shown first.
    let s = parse_summary(&text(&o.stdout));
    assert_eq!(
        get_or_zero(&s, "READ", "Operations") + get_or_zero(&s, "UPDATE", "Operations"),
        1000.0
    );
}

/// A PostgreSQL store's password can stay off the command line (where
/// `ps` shows it): without one in the URL, `$PGPASSWORD` is used, as libpq
/// does; without either, the server's refusal is the error. And the
/// history of runs it keeps is the one an SQLite store keeps.
#[cfg(feature = "store-postgres")]
#[test]
fn a_postgres_store_takes_its_password_from_pgpassword_and_tells_the_history_sqlite_tells() {
    let Some(pg) = sojourn_testkit::postgres_server::Postgres::start() else {
        return;
    };
    let url = pg.url_without_password();
    let dir = tempfile::tempdir().unwrap();
    let run = |password: Option<&str>| {
        let mut cmd = bin();
        cmd.args([
            "run",
            "null:",
            "-P",
            "workloadc",
            "-p",
            "operationcount=100",
            "--no-progress",
            "--results",
            &url,
            "--data-dir",
        ])
        .arg(dir.path())
        .env_remove("PGPASSWORD");
        if let Some(p) = password {
            cmd.env("PGPASSWORD", p);
        }
        cmd.run_to_end()
    };
    let refused = run(None);
    assert!(!refused.status.success());
    let e = text(&refused.stderr);
    assert!(e.contains("password"), "{e}");
    ok(&run(Some(sojourn_testkit::postgres_server::PASSWORD)));
    let store = Store::open_read_only(&pg.url()).unwrap();
    let stored = store.load("last").unwrap();
    assert_eq!(stored.meta().phase, "run");
    assert!(!stored
        .meta()
        .command_line
        .contains(sojourn_testkit::postgres_server::PASSWORD));
    history_alike(&pg.url(), dir.path());
}

/// Twenty-four runs of 1,000 reads a second, then 900 from the thirteenth
/// commit, kept alike in the PostgreSQL store at `url` and an SQLite one:
/// `sojourn history` prints the same CSV from both, with one change for
/// the worse, at c13. The runs are seeded synthetic ones (Poisson
/// arrivals, five 1-second intervals): what this checks is that the two
/// stores read back alike, which real runs on a busy machine would blur
/// (`compare.rs` finds such a drop in real runs).
#[cfg(feature = "store-postgres")]
fn history_alike(url: &str, dir: &Path) {
    use sojourn_testkit::runs::{meta_for, store_outcome, Synthetic};

    let sqlite = dir.join("history.sqlite");
    let stores = [
        Store::open(sqlite.to_str().unwrap()).unwrap(),
        Store::open(url).unwrap(),
    ];
    for c in 1..=24u32 {
        let run = Synthetic {
            rate: if c < 13 { 1000.0 } else { 900.0 },
            intervals: 5,
            target: None,
            ..Synthetic::new(u64::from(c))
        };
        let o = run.outcome();
        let commit = format!("c{c:02}");
        let meta = meta_for(
            &o,
            "memory:",
            &[],
            &[("commit", &commit), ("suite", "alike")],
        );
        for store in &stores {
            store_outcome(store, &meta, &o, &run.series());
        }
    }
    let history = |results: &str| {
        ok(&bin()
            .args(["history", "--results", results, "--label", "suite=alike"])
            .args([
                "--by",
                "commit",
                "--figure",
                "throughput",
                "--format",
                "csv",
            ])
            .run_to_end())
    };
    let (from_sqlite, from_postgres) = (history(sqlite.to_str().unwrap()), history(url));
    assert_eq!(from_sqlite, from_postgres);
    let changes: Vec<&str> = from_sqlite
        .lines()
        .filter(|r| r.contains(",yes,"))
        .collect();
    assert_eq!(changes.len(), 1, "{from_sqlite}");
    assert!(
        changes[0].contains(",13,c13,") && changes[0].ends_with(",worse"),
        "{from_sqlite}"
    );
    let pct: f64 = changes[0].split(',').nth(8).unwrap().parse().unwrap();
    assert!((-12.0..=-8.0).contains(&pct), "about -10%: {from_sqlite}");
}

/// A PostgreSQL store that dies halfway through a run: the rest of the
/// run goes to a spool file in the data directory, and once the server is
/// back, the next command puts the run back together in the store.
#[cfg(feature = "store-postgres")]
#[test]
fn a_run_whose_postgres_store_dies_halfway_is_imported_whole() {
    let Some(mut pg) = sojourn_testkit::postgres_server::Postgres::start() else {
        return;
    };
    let url = pg.url();
    let dir = tempfile::tempdir().unwrap();
    let mut child = bin()
        .args([
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=0",
            "-p",
            "maxexecutiontime=120",
            "-target",
            "500",
            "-p",
            "timeseries.interval=0.1",
            "-s",
            "-p",
            "status.interval=0.2",
            "--no-progress",
            "--results",
            &url,
            "--data-dir",
        ])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rest = wait_until_running(&mut child, None);

    // Wait (bounded) until the store has a few intervals of the run.
    let deadline = Instant::now() + Duration::from_secs(60);
    let in_store = loop {
        assert!(Instant::now() < deadline, "no intervals stored within 60 s");
        if let Ok(run) = Store::open_read_only(&url).and_then(|s| s.load("last")) {
            if run.intervals.len() >= 3 {
                break run.intervals.len();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    pg.kill();
    // The next interval finds the store gone: the run goes on into a
    // spool file (bounded wait for it to appear).
    let spool = dir.path().join("spool");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_dir(&spool).is_ok_and(|d| {
        d.flatten().any(|f| {
            std::fs::read_dir(f.path()).is_ok_and(|mut files| {
                files
                    .any(|x| x.is_ok_and(|x| x.file_name().to_string_lossy().ends_with(".partial")))
            })
        })
    }) {
        assert!(Instant::now() < deadline, "no spool file within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: Ctrl+C to our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let stderr = rest.join().unwrap();
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let spooled = spool_file(&stderr);
    assert!(spooled.starts_with(&spool), "{}", spooled.display());
    let printed = parse_summary(&text(&out.stdout));

    pg.restart();
    let o = bin()
        .args(["results", "list", "--results", &url, "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    ok(&o);
    assert!(
        text(&o.stderr).contains("imported 1 spooled run"),
        "{}",
        text(&o.stderr)
    );
    assert!(!spooled.exists());
    let run = Store::open(&url).unwrap().load("last").unwrap();
    assert_eq!(run.summary.status, RunStatus::Interrupted);
    assert!(
        run.intervals.len() > in_store,
        "{} intervals",
        run.intervals.len()
    );
    // Every interval, the store's and the spool's, in order and once.
    for w in run.intervals.windows(2) {
        assert!(w[1].start > w[0].start);
    }
    let ops: u64 = run.intervals.iter().map(|i| i.ops_done).sum();
    assert_eq!(ops, run.summary.totals.as_ref().unwrap().operations_all);
    assert_eq!(
        run.summary.totals.as_ref().unwrap().operations as f64,
        get_or_zero(&printed, "READ", "Operations") + get_or_zero(&printed, "UPDATE", "Operations")
    );
}

#[test]
fn pkb_export_reads_through_the_walkthrough_regexes() {
    let dir = tempfile::tempdir().unwrap();
    let printed = ok(&sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=3000",
            "-p",
            "fieldcount=1",
            "-p",
            "fieldlength=1024",
            "-p",
            "readallfields=false",
            "-target",
            "3000",
            "-threads",
            "4",
            "--label",
            "experiment=latency_test",
            "--label",
            "machine_type=n1-highcpu-16",
            "--label",
            "odd=x|y,z:w",
        ],
    ));
    let summary = parse_summary(&printed);
    let out = dir.path().join("samples.json");
    ok(&results(
        dir.path(),
        &[
            "export",
            "last",
            "--format",
            "pkb",
            "-o",
            out.to_str().unwrap(),
        ],
    ));
    let ndjson = std::fs::read_to_string(&out).unwrap();
    let samples: Vec<serde_json::Value> = ndjson
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let keys = [
        "metric",
        "value",
        "unit",
        "timestamp",
        "test",
        "product_name",
        "official",
        "owner",
        "run_uri",
        "sample_uri",
        "labels",
    ];
    for (line, s) in ndjson.lines().zip(&samples) {
        assert_eq!(s.as_object().unwrap().len(), keys.len(), "{line}");
        let pos: Vec<usize> = keys
            .iter()
            .map(|k| line.find(&format!("\"{k}\":")).unwrap())
            .collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "{line}");
    }
    let sample = |metric: &str| {
        samples
            .iter()
            .find(|s| s["metric"] == metric)
            .unwrap_or_else(|| panic!("no {metric}"))
    };
    let labels = sample("read p99 latency")["labels"].as_str().unwrap();
    let extract = |p: &str| {
        Regex::new(p)
            .unwrap()
            .captures(labels)
            .map(|c| c[1].to_string())
    };
    assert_eq!(extract(r"\|stage:(\w+)\|").unwrap(), "run");
    assert_eq!(extract(r"\|experiment:(.*?)\|").unwrap(), "latency_test");
    assert_eq!(extract(r"\|experiment:([^|]+)\|").unwrap(), "latency_test");
    assert_eq!(extract(r"\|workload_name:([^|]+)\|").unwrap(), "workloada");
    assert_eq!(extract(r"\|operation:([^|]+)\|").unwrap(), "read");
    let target: u64 = extract(r"-target (\d+)").unwrap().parse().unwrap();
    let vms: u64 = extract(r"\|vm_count:(\w+)\|").unwrap().parse().unwrap();
    assert_eq!(target * vms, 3000);
    assert_eq!(extract(r"-threads (\d+)").unwrap(), "4");
    assert_eq!(extract(r"\|fieldlength:(\w+)\|").unwrap(), "1024");
    assert_eq!(extract(r"\|fieldcount:(\w+)\|").unwrap(), "1");
    assert_eq!(extract(r"\|recordcount:(\w+)\|").unwrap(), "1000");
    assert_eq!(extract(r"-p readallfields=(\w+)").unwrap(), "false");
    assert_eq!(extract(r"-p requestdistribution=(\w+)").unwrap(), "zipfian");
    assert_eq!(
        extract(r"\|machine_type:([^|]+)\|").unwrap(),
        "n1-highcpu-16"
    );
    assert_eq!(
        sojourn_core::output::pkb::unescape(&extract(r"\|odd:([^|]+)\|").unwrap()),
        "x|y,z:w"
    );
    // The numbers are those `results show` prints (and the run printed).
    let shown = parse_summary(&ok(&results(dir.path(), &["show", "last"])));
    assert_eq!(shown, summary);
    let ms = |g: &str, k: &str| get(&shown, g, k) / 1000.0;
    let value = |m: &str| sample(m)["value"].as_f64().unwrap();
    assert_close(
        value("overall Throughput"),
        get(&shown, "OVERALL", "Throughput(ops/sec)"),
    );
    assert_close(
        value("overall RunTime"),
        get(&shown, "OVERALL", "RunTime(ms)"),
    );
    assert_close(value("read Operations"), get(&shown, "READ", "Operations"));
    assert_close(value("read Return=OK"), get(&shown, "READ", "Return=OK"));
    assert_close(
        value("read p99 latency"),
        ms("READ", "99thPercentileLatency(us)"),
    );
    assert_close(
        value("read p95 latency"),
        ms("READ", "95thPercentileLatency(us)"),
    );
    assert_close(
        value("update p99 latency"),
        ms("UPDATE", "99thPercentileLatency(us)"),
    );
    assert_close(value("read MaxLatency"), ms("READ", "MaxLatency(us)"));
    assert_close(value("read MinLatency"), ms("READ", "MinLatency(us)"));
    assert_close(
        value("intended-read p99 latency"),
        ms("Intended-READ", "99thPercentileLatency(us)"),
    );
}

#[test]
fn report_export_is_the_json_report_the_run_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let written = dir.path().join("run.json");
    ok(&sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=2000",
            "--json",
            &written.to_string_lossy(),
        ],
    ));
    let exported = ok(&results(
        dir.path(),
        &["export", "last", "--format", "report"],
    ));
    let mut exported: serde_json::Value = serde_json::from_str(&exported).unwrap();
    let mut written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&written).unwrap()).unwrap();
    assert!(
        exported["ops"]["read"]["count"].as_u64() > Some(0),
        "{exported:#}"
    );
    // Floats that went through the store's text may be a unit in the last
    // place off; everything else is the same report.
    for path in [
        "/achieved_ops_per_sec",
        "/client_cpu/us_per_op",
        "/client_cpu/utilisation",
    ] {
        let take = |v: &mut serde_json::Value| {
            let slot = v.pointer_mut(path).unwrap();
            std::mem::take(slot).as_f64().unwrap()
        };
        assert_close(take(&mut exported), take(&mut written));
    }
    assert_eq!(exported, written);
    // One run named twice is one report; several runs, an array.
    let once = ok(&results(
        dir.path(),
        &["export", "last", "last", "--format", "report"],
    ));
    let once: serde_json::Value = serde_json::from_str(&once).unwrap();
    assert!(once.is_object(), "{once:#}");
    let first = ok(&results(
        dir.path(),
        &["query", "SELECT id FROM runs", "--format", "csv"],
    ));
    let first = first.lines().nth(1).unwrap().trim().to_string();
    ok(&sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=200",
        ],
    ));
    let both = ok(&results(
        dir.path(),
        &["export", &first, "last", "--format", "report"],
    ));
    let both: serde_json::Value = serde_json::from_str(&both).unwrap();
    assert_eq!(both.as_array().map(Vec::len), Some(2));
}

#[test]
fn hdrlog_export_holds_every_interval() {
    let dir = tempfile::tempdir().unwrap();
    ok(&sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=2000",
            "-target",
            "5000",
            "-p",
            "timeseries.interval=0.1",
        ],
    ));
    let log = ok(&results(
        dir.path(),
        &["export", "last", "--format", "hdrlog"],
    ));
    let store = Store::open(store_path(dir.path()).to_str().unwrap()).unwrap();
    let run = store.load("last").unwrap();
    let tags: Vec<&str> = log.lines().filter(|l| l.starts_with("Tag=")).collect();
    let expected: usize = run
        .intervals
        .iter()
        .map(|i| i.stats.kinds().count() * 2)
        .sum();
    assert_eq!(tags.len(), expected);
    assert!(log.contains("#[BaseTime: "));
    // Each read-service line decodes to its interval's histogram.
    let reads: Vec<&str> = tags
        .iter()
        .copied()
        .filter(|l| l.starts_with("Tag=read-service,"))
        .collect();
    let stored: Vec<_> = run
        .intervals
        .iter()
        .filter_map(|i| {
            i.stats
                .op(sojourn_core::op::OpKind::Read)
                .filter(|s| s.count() > 0)
        })
        .collect();
    assert_eq!(reads.len(), stored.len());
    for (line, s) in reads.iter().zip(stored) {
        let payload = line.rsplit(',').next().unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(payload)
            .unwrap();
        let h = sojourn_core::hist_codec::decode(&bytes).unwrap();
        assert_eq!(h, s.ok.service);
    }
}

#[test]
fn secrets_never_reach_the_store() {
    let dir = tempfile::tempdir().unwrap();
    ok(&sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "operationcount=500",
            "-p",
            "db.passwd=pwsecret77",
            "-p",
            "db.url=postgres://bench:urlsecret99@db.example:5432/ycsb",
            "-p",
            "api.key=propsecret33",
            "--label",
            "experiment=secrets",
            "--label",
            "password=labelsecret55",
            "--label",
            "dsn=postgres://u:labelsecret55@h/x",
            "--label",
            "auth=labelsecret55",
            "--label",
            "note=see host=h password=labelsecret55 dbname=d",
        ],
    ));
    let list = ok(&results(dir.path(), &["list"]));
    let shown = results(dir.path(), &["show", "last"]);
    let shown = format!("{}{}", text(&shown.stdout), text(&shown.stderr));
    let html = dir.path().join("r.html");
    ok(&bin()
        .args(["report", "last", "-o", html.to_str().unwrap(), "--data-dir"])
        .arg(dir.path())
        .run_to_end());
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("secrets"), "the report shows the run");
    let pkb = ok(&results(dir.path(), &["export", "last", "--format", "pkb"]));
    // The labels were kept, without their secrets.
    assert!(pkb.contains("|dsn:postgres%3A//u%3A***@h/x|"), "{pkb}");
    assert!(pkb.contains("|password:***|"), "{pkb}");
    let json = ok(&results(
        dir.path(),
        &["export", "last", "--format", "json"],
    ));
    let store = Store::open(store_path(dir.path()).to_str().unwrap()).unwrap();
    let run = store.load("last").unwrap();
    // The properties were recorded, without their secrets.
    assert_eq!(run.meta().properties["db.passwd"], "***");
    assert!(run.meta().properties["db.url"].contains("bench:***@db.example"));
    assert!(run.meta().command_line.contains("db.passwd=***"));
    drop(store);
    // Not in any byte of the store (main file, WAL, shared memory).
    let mut files = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if !path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("results.sqlite")
        {
            continue;
        }
        files += 1;
        let bytes = std::fs::read(&path).unwrap();
        for secret in ["pwsecret77", "urlsecret99", "labelsecret55", "propsecret33"] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} in {}",
                path.display()
            );
        }
        // The file does hold the run, so the search was not vacuous.
        if path.extension().is_some_and(|e| e == "sqlite") {
            let needle = b"experiment";
            let wal = std::fs::read(path.with_extension("sqlite-wal")).unwrap_or_default();
            assert!(bytes
                .windows(needle.len())
                .chain(wal.windows(needle.len()))
                .any(|w| w == needle));
        }
    }
    assert!(files >= 1);
    for out in [&pkb, &json, &list, &shown, &html] {
        for secret in ["pwsecret77", "urlsecret99", "labelsecret55", "propsecret33"] {
            assert!(!out.contains(secret), "{secret} in:\n{out}");
        }
    }
}

#[test]
fn export_selects_runs_in_bulk_for_a_bigquery_load() {
    let dir = tempfile::tempdir().unwrap();
    for exp in ["one", "two", "two"] {
        ok(&sojourn(
            dir.path(),
            &[
                "run",
                "null:",
                "-P",
                "workloadc",
                "-p",
                "operationcount=200",
                "--label",
                &format!("experiment={exp}"),
            ],
        ));
    }
    let run_ids = |ndjson: &str| -> std::collections::BTreeSet<String> {
        ndjson
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let labels = v["labels"].as_str().unwrap().to_string();
                let id = labels.split("|sojourn_run_id:").nth(1).unwrap();
                id.split('|').next().unwrap().to_string()
            })
            .collect()
    };
    let all = ok(&results(
        dir.path(),
        &["export", "--all", "--format", "pkb"],
    ));
    assert_eq!(run_ids(&all).len(), 3, "{all}");
    // Naming nothing is refused with every way to name or select runs.
    let nothing = results(dir.path(), &["export", "--format", "pkb"]);
    let said = text(&nothing.stderr);
    assert!(!nothing.status.success(), "{said}");
    for way in ["RUN", "URI/STAGE", "`last`", "--all", "--label", "--since"] {
        assert!(said.contains(way), "{way}: {said}");
    }
    let two = ok(&results(
        dir.path(),
        &["export", "--label", "experiment=two", "--format", "pkb"],
    ));
    assert_eq!(run_ids(&two).len(), 2);
    assert!(!two.contains("|experiment:one|"));
    let recent = ok(&results(
        dir.path(),
        &[
            "export",
            "--since",
            "1h",
            "--label",
            "experiment=one",
            "--format",
            "csv",
        ],
    ));
    assert_eq!(
        recent.lines().count(),
        2,
        "header and one read row: {recent}"
    );
    let none = results(
        dir.path(),
        &["export", "--label", "experiment=three", "--format", "pkb"],
    );
    assert!(!none.status.success());
    assert!(
        text(&none.stderr).contains("no run in"),
        "{}",
        text(&none.stderr)
    );
    // Without a run or a selector, clap says what is missing.
    let bare = results(dir.path(), &["export", "--format", "pkb"]);
    assert!(!bare.status.success());

    // A bench's run URI names its load and its run: exported as both.
    let bench = tempfile::tempdir().unwrap();
    ok(&sojourn(
        bench.path(),
        &[
            "bench",
            "memory:",
            "-P",
            "workloadc",
            "-p",
            "recordcount=100",
            "-p",
            "operationcount=100",
        ],
    ));
    let uri = ok(&results(
        bench.path(),
        &[
            "query",
            "SELECT DISTINCT run_uri FROM runs",
            "--format",
            "csv",
        ],
    ));
    let uri = uri.lines().nth(1).unwrap().trim().to_string();
    let both = ok(&results(bench.path(), &["export", &uri, "--format", "pkb"]));
    assert!(
        both.contains("|stage:load|") && both.contains("|stage:run|"),
        "{both}"
    );
    // `show` wants one stage, and says how to name each.
    let shown = results(bench.path(), &["show", &uri]);
    assert!(!shown.status.success());
    let said = text(&shown.stderr);
    assert!(
        said.contains("2 stages") && said.contains(&format!("{uri}/0 (load), {uri}/1 (run)")),
        "{said}"
    );
    for (stage, phase) in [
        ("0", "load"),
        ("load", "load"),
        ("1", "run"),
        ("run", "run"),
    ] {
        let one = ok(&results(
            bench.path(),
            &["export", &format!("{uri}/{stage}"), "--format", "json"],
        ));
        let rows: serde_json::Value = serde_json::from_str(&one).unwrap();
        let rows = rows.as_array().unwrap();
        assert!(!rows.is_empty());
        assert!(rows.iter().all(|r| r["phase"] == phase), "{stage}: {one}");
    }
    let none = results(bench.path(), &["show", &format!("{uri}/2")]);
    assert!(!none.status.success());
    assert!(
        text(&none.stderr).contains("2 stages"),
        "{}",
        text(&none.stderr)
    );
}

#[test]
fn list_filters_and_query_reads_only() {
    let dir = tempfile::tempdir().unwrap();
    for (w, exp) in [("workloada", "one"), ("workloadc", "two")] {
        ok(&sojourn(
            dir.path(),
            &[
                "run",
                "null:",
                "-P",
                w,
                "-p",
                "operationcount=200",
                "--label",
                &format!("experiment={exp}"),
            ],
        ));
    }
    let all = ok(&results(dir.path(), &["list"]));
    assert_eq!(all.lines().count(), 3, "{all}");
    let two = ok(&results(dir.path(), &["list", "--label", "experiment=two"]));
    assert_eq!(two.lines().count(), 2, "{two}");
    assert!(two.contains("workloadc") && !two.contains("workloada"));
    let a = ok(&results(
        dir.path(),
        &["list", "--workload", "workloada", "--since", "1h"],
    ));
    assert!(
        a.contains("experiment=one") && !a.contains("experiment=two"),
        "{a}"
    );
    let none = ok(&results(dir.path(), &["list", "--backend", "redis"]));
    assert_eq!(none.lines().count(), 1, "{none}");

    let q = ok(&results(
        dir.path(),
        &[
            "query",
            "SELECT experiment, operation, operations FROM performance ORDER BY experiment, operation",
            "--format",
            "csv",
        ],
    ));
    let lines: Vec<&str> = q.lines().collect();
    assert_eq!(lines[0], "experiment,operation,operations");
    assert!(lines[1].starts_with("one,read,"), "{q}");
    assert!(lines[3].starts_with("two,read,200"), "{q}");
    let out = results(dir.path(), &["query", "DELETE FROM runs"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("read-only"),
        "{}",
        text(&out.stderr)
    );
    let still = ok(&results(dir.path(), &["list"]));
    assert_eq!(still.lines().count(), 3);
}
