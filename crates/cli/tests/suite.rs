//! `sojourn suite`: the walkthrough's real folders run unchanged against
//! local databases; status markers, resuming after a SIGKILL, same-database
//! exclusivity, ordered stages, PKB's final messages, stopping at the first
//! failure, warnings about unused flags, and several client processes whose
//! histograms merge exactly and whose server counters merge to the whole.

mod util;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use sojourn_core::op::OpKind;
use sojourn_core::output::pkb::{samples, PkbOptions};
use sojourn_store::{Filter, RunStatus, RunSummary, Store};
use util::*;

const ALL_PASSED: &str = "All tests have passed. To rerun the tests, please clean up the status \
                          markers before executing the invocation command.";
const SOME_FAILED: &str =
    "Some tests have failures. You can retry by running the same invocation command again.";

/// The walkthrough's batch folders, unchanged (read-only; copied before
/// use), in `tests/fixtures/` with their licence note.
/// `SOJOURN_PKB_FIXTURES` points elsewhere.
fn fixtures() -> PathBuf {
    let dir = std::env::var_os("SOJOURN_PKB_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pkb-walkthrough")
        });
    assert!(
        dir.join("sequential_tests").is_dir(),
        "the PKB walkthrough fixtures are not at {} (set SOJOURN_PKB_FIXTURES)",
        dir.display()
    );
    dir
}

/// A scratch place: the suite folder, the database, the store.
struct Scratch {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        std::fs::create_dir(root.join("suite")).unwrap();
        Scratch { _tmp: tmp, root }
    }

    fn dir(&self) -> PathBuf {
        self.root.join("suite")
    }

    fn results(&self) -> PathBuf {
        self.root.join("results.sqlite")
    }

    fn db(&self, name: &str) -> String {
        format!("sqlite:{}", self.root.join(name).display())
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.dir().join(name), text).unwrap();
    }

    fn marker(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir().join(name)).ok()
    }

    /// Copy a read-only fixture folder in (markers are written beside the
    /// configs).
    fn copy_fixture(&self, folder: &str) {
        let src = fixtures().join(folder);
        for e in std::fs::read_dir(&src).unwrap() {
            let e = e.unwrap();
            let text = std::fs::read_to_string(e.path()).unwrap();
            self.write(&e.file_name().to_string_lossy(), &text);
        }
    }

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut c = bin();
        c.arg("suite")
            .arg(self.dir())
            .arg("--results")
            .arg(self.results())
            .arg("--data-dir")
            .arg(self.root.join("data"))
            .arg("--no-progress")
            .args(args);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).run_to_end()
    }

    fn store(&self) -> Store {
        Store::open(&self.results().to_string_lossy()).unwrap()
    }

    /// `sojourn results ARGS` on this store.
    fn results_cmd(&self, args: &[&str]) -> Output {
        bin()
            .arg("results")
            .args(args)
            .arg("--results")
            .arg(self.results())
            .run_to_end()
    }

    /// The rows `results query` gives for `sql`, as CSV lines.
    fn query(&self, sql: &str) -> Vec<String> {
        ok(&self.results_cmd(&["query", "--format", "csv", sql]))
            .lines()
            .skip(1)
            .map(str::to_string)
            .collect()
    }

    fn runs(&self, labels: &[(&str, &str)]) -> Vec<RunSummary> {
        self.store()
            .list(&Filter {
                labels: labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                ..Filter::default()
            })
            .unwrap()
    }
}

fn both(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        text(&o.stdout),
        text(&o.stderr)
    )
}

/// Exactly one final message, the expected one, as the last line.
fn assert_final(o: &Output, passed: bool) {
    let out = text(&o.stdout);
    let (want, other) = if passed {
        (ALL_PASSED, SOME_FAILED)
    } else {
        (SOME_FAILED, ALL_PASSED)
    };
    assert_eq!(out.lines().last(), Some(want), "{}", both(o));
    assert!(!out.contains(other), "{}", both(o));
    assert_eq!(o.status.success(), passed, "{}", both(o));
}

/// From a stored run's start to its end.
fn span(r: &RunSummary) -> (SystemTime, SystemTime) {
    (r.meta.started_at, r.ended_at.expect("an ended run"))
}

/// The span covering several runs.
fn hull(runs: &[RunSummary]) -> (SystemTime, SystemTime) {
    let start = runs.iter().map(|r| span(r).0).min().unwrap();
    let end = runs.iter().map(|r| span(r).1).max().unwrap();
    (start, end)
}

fn overlap(a: (SystemTime, SystemTime), b: (SystemTime, SystemTime)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// The scaled-down flags for the walkthrough folders.
const SCALE: &[&str] = &[
    "--flag",
    "ycsb_record_count=2000",
    "--flag",
    "ycsb_timelimit=2",
    "--flag",
    "num_vms=1",
    "--flag",
    "ycsb_threads_per_client=2",
    "--flag",
    "ycsb_preload_threads=2",
];

#[test]
fn walkthrough_sequential_folder_runs_unchanged_and_a_rerun_skips_everything() {
    let s = Scratch::new();
    s.copy_fixture("sequential_tests");
    let db = s.db("bigtable.sqlite");
    let mut args = vec!["--db", db.as_str()];
    args.extend_from_slice(SCALE);
    let o = s.run(&args);
    assert_final(&o, true);
    for f in ["load.yaml", "latency.yaml", "throughput.yaml"] {
        assert_eq!(
            s.marker(&format!("{f}.FINISHED")).as_deref(),
            Some("Failed: 0 Passed: 1"),
            "{f}\n{}",
            both(&o)
        );
        assert_eq!(s.marker(&format!("{f}.PROCESSING")), None);
    }
    let stdout = text(&o.stdout);
    assert_eq!(
        stdout.matches("\n== ").count() + usize::from(stdout.starts_with("== ")),
        3
    );

    // The load: 2000 records, all inserted, labelled as PKB labels it.
    let load = s.runs(&[("suite_config", "load.yaml")]);
    assert_eq!(load.len(), 1, "{load:#?}");
    let l = &load[0];
    assert_eq!(l.status, RunStatus::Completed);
    assert_eq!(l.meta.phase, "load");
    assert_eq!(l.totals.as_ref().unwrap().operations, 2000);
    for (k, v) in [
        ("experiment", "table_loading"),
        ("stage", "load"),
        ("workload_name", "workloada"),
        ("machine_type", "n1-highcpu-16"),
        ("bigtable_node_count", "3"),
        ("bigtable_storage_type", "ssd"),
        ("google_bigtable_instance_name", "pkb-benchmarks"),
        ("vm_count", "1"),
        ("benchmark", "cloud_bigtable_ycsb"),
    ] {
        assert_eq!(l.meta.labels.get(k).map(String::as_str), Some(v), "{k}");
    }
    assert_eq!(l.meta.properties["fieldcount"], "1");
    assert_eq!(l.meta.properties["fieldlength"], "1024");

    // The runs: each at its per-VM target, read and update mixed.
    let lat = s.runs(&[("suite_config", "latency.yaml")]);
    let thr = s.runs(&[("suite_config", "throughput.yaml")]);
    assert_eq!((lat.len(), thr.len()), (1, 1));
    for (r, exp, target) in [
        (&lat[0], "latency_test", 3000.0),
        (&thr[0], "throughput_test", 6000.0),
    ] {
        assert_eq!(r.status, RunStatus::Completed);
        assert_eq!(r.meta.phase, "run");
        assert_eq!(r.meta.labels["experiment"], exp);
        assert_eq!(r.meta.labels["threads_per_client_vm"], "2");
        assert_eq!(r.meta.target, Some(target));
        assert_eq!(r.meta.properties["readallfields"], "false");
        assert_eq!(r.meta.properties["maxexecutiontime"], "2");
        assert_eq!(r.totals.as_ref().unwrap().stop_reason, "max_execution_time");
    }
    // PKB's samples: what the walkthrough's performance query extracts.
    let stored = s.store().load(lat[0].meta.id.as_str()).unwrap();
    let samples = samples(&stored, &PkbOptions::default());
    let thr_sample = samples
        .iter()
        .find(|x| x.metric == "overall Throughput")
        .expect("an overall Throughput sample");
    assert_eq!(thr_sample.test, "cloud_bigtable_ycsb");
    assert_eq!(thr_sample.run_uri, lat[0].meta.run_uri);
    assert!(
        (thr_sample.value - lat[0].totals.as_ref().unwrap().throughput).abs() < 1e-6,
        "{thr_sample:?}"
    );
    for part in [
        "|stage:run|",
        "|experiment:latency_test|",
        "|workload_name:workloada|",
        "|workload_index:0|",
        "|vm_count:1|",
        "|fieldlength:1024|",
        "|fieldcount:1|",
        "|recordcount:2000|",
        "|machine_type:n1-highcpu-16|",
        "|bigtable_node_count:3|",
        "|bigtable_storage_type:ssd|",
        "-target 3000",
        "-threads 2",
        "-p readallfields=false",
        "-p requestdistribution=zipfian",
    ] {
        assert!(
            thr_sample.labels.contains(part),
            "{part} in {}",
            thr_sample.labels
        );
    }

    // Ordered stages: each starts after the previous one ended.
    assert!(span(l).1 <= span(&lat[0]).0);
    assert!(span(&lat[0]).1 <= span(&thr[0]).0);

    // The cloud flags sojourn does not use are listed once each.
    let stderr = text(&o.stderr);
    for flag in ["machine_type", "bigquery_table", "gcloud_scopes", "zones"] {
        assert_eq!(
            stderr.matches(&format!("  {flag} (")).count(),
            1,
            "{flag}\n{stderr}"
        );
    }

    // A rerun skips everything.
    let again = s.run(&args);
    assert_final(&again, true);
    assert!(!text(&again.stdout).contains("== "), "{}", both(&again));
    assert_eq!(s.runs(&[]).len(), 3);
}

#[test]
fn walkthrough_parallel_folder_runs_unchanged_and_a_rerun_skips_everything() {
    let s = Scratch::new();
    s.copy_fixture("parallel_tests");
    let db = s.db("bigtable.sqlite");
    let mut args = vec!["--db", db.as_str()];
    args.extend_from_slice(SCALE);
    let o = s.run(&args);
    assert_final(&o, true);
    for f in ["latency.yaml", "throughput.yaml"] {
        assert_eq!(
            s.marker(&format!("{f}.FINISHED")).as_deref(),
            Some("Failed: 0 Passed: 1"),
            "{}",
            both(&o)
        );
        let runs = s.runs(&[("suite_config", f)]);
        let phases: Vec<&str> = runs.iter().map(|r| r.meta.phase.as_str()).collect();
        assert_eq!(phases, ["load", "run"], "{f}");
        assert!(runs.iter().all(|r| r.status == RunStatus::Completed));
    }
    // One database for both (--db), so they ran one at a time.
    let lat = hull(&s.runs(&[("suite_config", "latency.yaml")]));
    let thr = hull(&s.runs(&[("suite_config", "throughput.yaml")]));
    assert!(!overlap(lat, thr));

    let again = s.run(&args);
    assert_final(&again, true);
    assert!(!text(&again.stdout).contains("== "), "{}", both(&again));
    assert_eq!(s.runs(&[]).len(), 4);
}

/// A config that loads `records` rows into `db` and runs workload A for
/// `secs` seconds at a modest rate with one thread.
fn small_config(db: &str, records: u32, secs: u32, extra: &str) -> String {
    format!(
        "benchmarks:\n- cloud_bigtable_ycsb:\n    flags:\n      sojourn_db: {db}\n      \
         ycsb_record_count: {records}\n      ycsb_preload_threads: 1\n      \
         ycsb_threads_per_client: 1\n      ycsb_run_parameters: target=200\n      \
         ycsb_timelimit: {secs}\n      ycsb_workload_files: workloada\n      ycsb_field_count: 1\n{extra}"
    )
}

#[test]
fn a_killed_suite_resumes_with_only_the_missing_iterations() {
    let s = Scratch::new();
    let db = s.db("it.sqlite");
    s.write("it.yaml", &small_config(&db, 100, 1, ""));
    s.write(
        "runner.yaml",
        "runner:\n  unordered_tests:\n    num_iterations: 3\n    concurrency: 1\n",
    );
    let mut child = s
        .command(&[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait (bounded) for the first iteration's marker, then kill.
    let deadline = Instant::now() + Duration::from_secs(120);
    let passed_before = loop {
        if let Some(m) = s.marker("it.yaml.PROCESSING") {
            if m.starts_with("Failed: 0 Passed: ") {
                // SAFETY: SIGKILL to our own child process.
                assert_eq!(
                    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) },
                    0
                );
                break m;
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the suite ended ({status}) before a marker appeared");
        }
        assert!(Instant::now() < deadline, "no marker within two minutes");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.wait().unwrap();
    let marker = s
        .marker("it.yaml.PROCESSING")
        .expect("the marker survives the kill");
    assert_eq!(s.marker("it.yaml.FINISHED"), None);
    let passed: u32 = marker
        .trim_start_matches("Failed: 0 Passed: ")
        .parse()
        .unwrap();
    assert!(
        (1..3).contains(&passed),
        "{marker} (first seen {passed_before})"
    );

    let o = s.run(&[]);
    assert_final(&o, true);
    let stderr = text(&o.stderr);
    let starting = stderr.lines().filter(|l| l.ends_with("starting")).count();
    assert_eq!(starting as u32, 3 - passed, "{stderr}");
    assert!(
        stderr.contains(&format!("resuming (Failed: 0 Passed: {passed})")),
        "{stderr}"
    );
    assert_eq!(
        s.marker("it.yaml.FINISHED").as_deref(),
        Some("Failed: 0 Passed: 3")
    );
    assert_eq!(s.marker("it.yaml.PROCESSING"), None);
    // Every iteration has a completed load and run. The kill may land
    // after some of the interrupted iteration's phases were stored as
    // completed but before its marker was written, so that iteration
    // ran again: at most one extra completed load and one extra run,
    // and never more completed runs than there were starts.
    let completed: Vec<RunSummary> = s
        .runs(&[("suite_config", "it.yaml")])
        .into_iter()
        .filter(|r| r.status == RunStatus::Completed)
        .collect();
    for stage in ["load", "run"] {
        let iterations: std::collections::BTreeMap<&str, usize> = completed
            .iter()
            .filter(|r| r.meta.phase == stage)
            .fold(Default::default(), |mut m, r| {
                *m.entry(r.meta.labels["suite_iteration"].as_str())
                    .or_default() += 1;
                m
            });
        assert_eq!(
            iterations.keys().copied().collect::<Vec<_>>(),
            ["1", "2", "3"],
            "{stage}: {completed:#?}"
        );
        let total: usize = iterations.values().sum();
        assert!((3..=4).contains(&total), "{stage}: {completed:#?}");
    }
    let again = s.run(&[]);
    assert_final(&again, true);
    assert!(!text(&again.stderr).contains("starting"));
}

#[test]
fn unordered_configs_on_one_database_never_overlap_and_on_two_they_do() {
    // Same database, concurrency 2: one after the other.
    let s = Scratch::new();
    let same = s.db("same.sqlite");
    s.write("a.yaml", &small_config(&same, 100, 2, ""));
    s.write("b.yaml", &small_config(&same, 100, 2, ""));
    s.write(
        "runner.yaml",
        "runner:\n  unordered_tests:\n    num_iterations: 1\n    concurrency: 2\n",
    );
    let o = s.run(&[]);
    assert_final(&o, true);
    let a = hull(&s.runs(&[("suite_config", "a.yaml")]));
    let b = hull(&s.runs(&[("suite_config", "b.yaml")]));
    assert!(!overlap(a, b), "{a:?} {b:?}");

    // Different databases: side by side.
    let t = Scratch::new();
    t.write("a.yaml", &small_config(&t.db("a.sqlite"), 100, 2, ""));
    t.write("b.yaml", &small_config(&t.db("b.sqlite"), 100, 2, ""));
    t.write(
        "runner.yaml",
        "runner:\n  unordered_tests:\n    num_iterations: 1\n    concurrency: 2\n",
    );
    let o = t.run(&[]);
    assert_final(&o, true);
    let a = hull(&t.runs(&[("suite_config", "a.yaml")]));
    let b = hull(&t.runs(&[("suite_config", "b.yaml")]));
    assert!(overlap(a, b), "{a:?} {b:?}");

    // The same Bigtable instance name makes different databases exclusive.
    let u = Scratch::new();
    let inst = "      google_bigtable_instance_name: shared\n";
    u.write("a.yaml", &small_config(&u.db("a.sqlite"), 100, 2, inst));
    u.write("b.yaml", &small_config(&u.db("b.sqlite"), 100, 2, inst));
    u.write(
        "runner.yaml",
        "runner:\n  unordered_tests:\n    num_iterations: 1\n    concurrency: 2\n",
    );
    let o = u.run(&[]);
    assert_final(&o, true);
    let a = hull(&u.runs(&[("suite_config", "a.yaml")]));
    let b = hull(&u.runs(&[("suite_config", "b.yaml")]));
    assert!(!overlap(a, b), "{a:?} {b:?}");
}

#[test]
fn ordered_stages_run_in_order_and_files_of_a_stage_together() {
    let s = Scratch::new();
    let db = s.db("db.sqlite");
    s.write(
        "s1.yaml",
        &small_config(&db, 200, 1, "      ycsb_skip_run_stage: true\n"),
    );
    let run_only = "      ycsb_skip_load_stage: true\n";
    s.write("s2a.yaml", &small_config(&db, 200, 2, run_only));
    s.write("s2b.yaml", &small_config(&db, 200, 2, run_only));
    // Not listed: never runs.
    s.write("unlisted.yaml", &small_config(&db, 200, 2, run_only));
    s.write(
        "runner.yaml",
        "runner:\n  ordered_tests:\n  - s1.yaml\n  - s2a.yaml s2b.yaml\n",
    );
    let o = s.run(&[]);
    assert_final(&o, true);
    let s1 = hull(&s.runs(&[("suite_config", "s1.yaml")]));
    let s2a = hull(&s.runs(&[("suite_config", "s2a.yaml")]));
    let s2b = hull(&s.runs(&[("suite_config", "s2b.yaml")]));
    assert!(s1.1 <= s2a.0 && s1.1 <= s2b.0, "{s1:?} {s2a:?} {s2b:?}");
    assert!(overlap(s2a, s2b), "{s2a:?} {s2b:?}");
    assert!(s.runs(&[("suite_config", "unlisted.yaml")]).is_empty());
    assert_eq!(s.marker("unlisted.yaml.FINISHED"), None);
}

#[test]
fn an_error_rate_above_the_limit_stops_the_batch() {
    let s = Scratch::new();
    let db = s.db("db.sqlite");
    // 100 rows loaded, reads drawn from 100000 keys: nearly all NOT_FOUND.
    let extra = "      ycsb_max_error_rate: 0.5\n      ycsb_requestdistribution: uniform\n";
    let mut cfg = small_config(&db, 100, 1, extra);
    cfg = cfg.replace(
        "ycsb_run_parameters: target=200",
        "ycsb_run_parameters: target=200,recordcount=100000",
    );
    s.write("a_errors.yaml", &cfg);
    s.write("b_after.yaml", &small_config(&db, 100, 1, ""));
    let o = s.run(&[]);
    assert_final(&o, false);
    assert_eq!(o.status.code(), Some(1));
    let stderr = text(&o.stderr);
    assert!(stderr.contains("ycsb_max_error_rate 0.5"), "{stderr}");
    assert!(stderr.contains("READ operations failed"), "{stderr}");
    assert_eq!(
        s.marker("a_errors.yaml.PROCESSING").as_deref(),
        Some("Failed: 1 Passed: 0")
    );
    // The batch stopped: the next config never started.
    assert!(!stderr.contains("b_after.yaml: iteration"), "{stderr}");
    assert_eq!(s.marker("b_after.yaml.PROCESSING"), None);
    assert!(s.runs(&[("suite_config", "b_after.yaml")]).is_empty());
}

#[test]
fn an_invalid_flag_value_fails_before_anything_runs() {
    let s = Scratch::new();
    let db = s.db("db.sqlite");
    s.write("a.yaml", &small_config(&db, 100, 1, ""));
    s.write(
        "b.yaml",
        &small_config(&db, 100, 1, "      ycsb_threads_per_client: lots\n")
            .replace("      ycsb_threads_per_client: 1\n", ""),
    );
    let o = s.run(&[]);
    assert_final(&o, false);
    let stderr = text(&o.stderr);
    assert!(stderr.contains("b.yaml:"), "{stderr}");
    assert!(
        stderr.contains("ycsb_threads_per_client = \"lots\""),
        "{stderr}"
    );
    assert!(stderr.contains("accepted"), "{stderr}");
    assert!(s.runs(&[]).is_empty());
    assert_eq!(s.marker("a.yaml.PROCESSING"), None);
    assert_eq!(s.marker("a.yaml.FINISHED"), None);

    // --flag values are checked the same way, naming --flag.
    let t = Scratch::new();
    t.write("a.yaml", &small_config(&t.db("db.sqlite"), 100, 1, ""));
    let o = t.run(&["--flag", "ycsb_timelimit=soon"]);
    assert_final(&o, false);
    assert!(
        text(&o.stderr).contains("--flag: ycsb_timelimit = \"soon\""),
        "{}",
        both(&o)
    );
}

#[test]
fn unused_flags_are_warned_once_each_and_kept_as_labels() {
    let s = Scratch::new();
    let db = s.db("db.sqlite");
    let extra = "      frobnicate: 7\n      ycsb_recrod_count: 5\n";
    s.write("a.yaml", &small_config(&db, 100, 1, extra));
    s.write("b.yaml", &small_config(&db, 100, 1, extra));
    s.write(
        "runner.yaml",
        "runner:\n  unordered_tests:\n    num_iterations: 1\n    concurrency: 1\n  pkb_flags:\n    bigquery_table: p:d.t\n",
    );
    let o = s.run(&["--flag", "cli_only=x"]);
    assert_final(&o, true);
    let stderr = text(&o.stderr);
    for (flag, origins) in [
        ("frobnicate", "(a.yaml:12, b.yaml:12)"),
        ("bigquery_table", "(runner.yaml:6)"),
        ("cli_only", "(--flag)"),
    ] {
        assert_eq!(stderr.matches(flag).count(), 1, "{flag}\n{stderr}");
        assert!(
            stderr.contains(&format!("  {flag} {origins}")),
            "{flag}\n{stderr}"
        );
    }
    assert!(
        stderr
            .contains("ycsb_recrod_count (a.yaml:13, b.yaml:13) (did you mean ycsb_record_count?)"),
        "{stderr}"
    );
    for r in s.runs(&[]) {
        assert_eq!(r.meta.labels["frobnicate"], "7");
        assert_eq!(r.meta.labels["bigquery_table"], "p:d.t");
        assert_eq!(r.meta.labels["cli_only"], "x");
    }
}

/// Every recorded value of a histogram with its count, read bucket by
/// bucket (independently of hdrhistogram's `add`).
fn buckets(h: &hdrhistogram::Histogram<u64>, into: &mut BTreeMap<u64, u64>) {
    for v in h.iter_recorded() {
        *into.entry(v.value_iterated_to()).or_default() += v.count_since_last_iteration();
    }
}

#[test]
fn client_processes_load_disjoint_keys_and_merge_exactly() {
    let s = Scratch::new();
    let db_path = s.root.join("db.sqlite");
    let db = format!("sqlite:{}", db_path.display());
    s.write(
        "multi.yaml",
        &format!(
            "benchmarks:\n- cloud_bigtable_ycsb:\n    flags:\n      num_vms: 3\n      \
             sojourn_db: {db}\n      ycsb_record_count: 1000\n      ycsb_preload_threads: 2\n      \
             ycsb_threads_per_client: 2\n      ycsb_operation_count: 1500\n      ycsb_timelimit: 0\n      \
             ycsb_run_parameters: seed=42\n      ycsb_workload_files: workloada\n      \
             ycsb_field_count: 1\n"
        ),
    );
    let o = s.run(&[]);
    assert_final(&o, true);
    // The clients' stderr comes through the suite's.
    assert_all_stored(&text(&o.stderr));

    // Loads: each client its own share of the keys, none failed, every
    // row there once.
    let loads = s.runs(&[("suite_config", "multi.yaml"), ("stage", "load")]);
    assert_eq!(loads.len(), 3);
    let mut inserted: Vec<u64> = loads
        .iter()
        .map(|r| r.totals.as_ref().unwrap().operations)
        .collect();
    inserted.sort();
    assert_eq!(inserted, [333, 333, 334]);
    let conn = rusqlite::Connection::open(&db_path).unwrap();
    let rows: i64 = conn
        .query_row("SELECT COUNT(*) FROM usertable", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1000);

    // Runs: three clients of one stage, started at one instant.
    let runs = s.runs(&[("suite_config", "multi.yaml"), ("stage", "run")]);
    assert_eq!(runs.len(), 3);
    let uri = &runs[0].meta.run_uri;
    assert!(runs.iter().all(|r| &r.meta.run_uri == uri));
    // The benchmark's load and run share it, as PKB's stages do.
    assert!(loads.iter().all(|r| &r.meta.run_uri == uri));
    assert!(loads.iter().all(|r| r.meta.stage_index == 0));
    assert!(runs.iter().all(|r| r.meta.stage_index == 1));
    let mut idx: Vec<u32> = runs.iter().map(|r| r.meta.client_index).collect();
    idx.sort();
    assert_eq!(idx, [0, 1, 2]);
    assert!(runs.iter().all(|r| r.meta.client_count == 3));
    // Each run's start is its first operation: all within moments of the
    // common release instant.
    let starts: Vec<SystemTime> = runs.iter().map(|r| r.meta.started_at).collect();
    let spread = starts
        .iter()
        .map(|t| t.duration_since(*starts.iter().min().unwrap()).unwrap())
        .max()
        .unwrap();
    assert!(
        spread < Duration::from_millis(500),
        "client starts spread over {spread:?}"
    );
    let mut seeds: Vec<u64> = runs.iter().map(|r| r.meta.seed).collect();
    seeds.sort();
    assert_eq!(seeds, [42, 43, 44]);

    // The merged histograms equal every client's samples put together.
    let store = s.store();
    let merged = store.load_merged(runs[0].meta.id.as_str()).unwrap();
    let clients: Vec<_> = runs
        .iter()
        .map(|r| store.load(r.meta.id.as_str()).unwrap())
        .collect();
    let mut total_ops = 0;
    for kind in [OpKind::Read, OpKind::Update] {
        let mut want_service = BTreeMap::new();
        let mut want_response = BTreeMap::new();
        let mut want_ok = 0;
        for c in &clients {
            let st = c.total.op(kind).expect("each client read and updated");
            buckets(&st.ok.service, &mut want_service);
            buckets(&st.ok.response, &mut want_response);
            want_ok += st.count();
        }
        let m = merged.total.op(kind).unwrap();
        let (mut got_service, mut got_response) = (BTreeMap::new(), BTreeMap::new());
        buckets(&m.ok.service, &mut got_service);
        buckets(&m.ok.response, &mut got_response);
        assert_eq!(got_service, want_service, "{kind:?} service");
        assert_eq!(got_response, want_response, "{kind:?} response");
        assert_eq!(m.count(), want_ok);
        assert_eq!(m.ok.service.len(), want_ok);
        total_ops += want_ok;
    }
    assert_eq!(total_ops, 4500);
    assert_eq!(merged.summary.totals.as_ref().unwrap().operations, 4500);
    // `last`, and the id of any one client, name the whole run, merged.
    for selector in ["last", runs[1].meta.id.as_str()] {
        let whole = store.load_merged(selector).unwrap();
        assert_eq!(whole.summary.totals.as_ref().unwrap().operations, 4500);
    }
    let shown = ok(&s.results_cmd(&["show", "last"]));
    let shown = parse_summary(&shown);
    assert_eq!(
        get(&shown, "READ", "Operations") + get(&shown, "UPDATE", "Operations"),
        4500.0
    );
    // The views give one row per run (and operation), not one per client.
    let perf = s.query(&format!(
        "SELECT operation, operations, vm_count, actual_throughput FROM performance \
         WHERE run_uri = '{uri}' AND stage = 'run' ORDER BY operation"
    ));
    assert_eq!(perf.len(), 2, "{perf:?}");
    let ops: u64 = perf
        .iter()
        .map(|r| r.split(',').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(ops, 4500);
    let whole = merged.summary.totals.as_ref().unwrap().throughput;
    for r in &perf {
        let cols: Vec<&str> = r.split(',').collect();
        assert_eq!(cols[2], "3");
        assert!(
            (cols[3].parse::<f64>().unwrap() - whole).abs() < 1e-6 * whole,
            "{r}"
        );
    }
    let cost = s.query(&format!(
        "SELECT actual_throughput FROM cost WHERE run_uri = '{uri}' AND stage = 'run'"
    ));
    assert_eq!(cost.len(), 1, "{cost:?}");

    // PKB's samples of the merged run: the totals over the clients.
    let merged_samples = samples(&merged, &PkbOptions::default());
    let value = |metric: &str| {
        merged_samples
            .iter()
            .find(|x| x.metric == metric)
            .unwrap_or_else(|| panic!("no {metric} sample"))
            .value
    };
    assert_eq!(
        value("read Operations") + value("update Operations"),
        4500.0
    );
    let labels = &merged_samples[0].labels;
    assert!(labels.contains("|vm_count:3|"), "{labels}");
    assert!(labels.contains("|threads_per_client_vm:2|"), "{labels}");
    assert!(
        labels.contains("|throughput_merge:all_operations_over_longest_client_time|"),
        "{labels}"
    );

    // The printed summary is the merged one.
    let summary = parse_summary(&text(&o.stdout));
    let reads = get(&summary, "READ", "Operations") + get(&summary, "UPDATE", "Operations");
    assert_eq!(reads, 4500.0);
    assert_eq!(
        get(&summary, "READ", "Return=OK"),
        merged.total.op(OpKind::Read).unwrap().count() as f64
    );
}

/// One iteration of a benchmark is one run URI, as PKB gives one to a
/// benchmark run: its load and every run stage of the staircase share it,
/// each stage's clients merge with each other and with no other stage's,
/// and the URI exports every stage.
#[test]
fn a_benchmarks_stages_share_one_run_uri_and_merge_apart() {
    let s = Scratch::new();
    let db = s.db("db.sqlite");
    s.write(
        "stairs.yaml",
        &format!(
            "benchmarks:\n- cloud_bigtable_ycsb:\n    flags:\n      num_vms: 2\n      \
             sojourn_db: {db}\n      ycsb_record_count: 200\n      ycsb_preload_threads: 1\n      \
             ycsb_threads_per_client: 1,2\n      ycsb_operation_count: 300\n      \
             ycsb_timelimit: 0\n      ycsb_workload_files: workloadc\n      \
             ycsb_field_count: 1\n"
        ),
    );
    let o = s.run(&[]);
    assert_final(&o, true);
    let all = s.runs(&[("suite_config", "stairs.yaml")]);
    assert_eq!(all.len(), 6, "2 clients each of a load and two run stages");
    let uri = &all[0].meta.run_uri;
    assert!(all.iter().all(|r| &r.meta.run_uri == uri));
    let mut stages: Vec<(String, u32, u64)> = all
        .iter()
        .map(|r| (r.meta.phase.clone(), r.meta.stage_index, r.meta.threads))
        .collect();
    stages.sort();
    assert_eq!(
        stages,
        [
            ("load".to_string(), 0, 1),
            ("load".to_string(), 0, 1),
            ("run".to_string(), 1, 1),
            ("run".to_string(), 1, 1),
            ("run".to_string(), 2, 2),
            ("run".to_string(), 2, 2),
        ]
    );
    // Each run stage merges its own two clients, whichever is named.
    let store = s.store();
    for r in all.iter().filter(|r| r.meta.phase == "run") {
        let whole = store.load_merged(r.meta.id.as_str()).unwrap();
        assert_eq!(whole.meta().client_count, 2);
        assert_eq!(whole.meta().stage_index, r.meta.stage_index);
        assert_eq!(whole.meta().threads, 2 * r.meta.threads);
        let ops = whole.summary.totals.as_ref().unwrap().operations;
        let own: u64 = all
            .iter()
            .filter(|c| c.meta.stage_index == r.meta.stage_index)
            .map(|c| c.totals.as_ref().unwrap().operations)
            .sum();
        assert_eq!(ops, own);
    }
    // The views: one row per run stage, with the threads it ran.
    let perf = s.query(&format!(
        "SELECT threads_per_vm, vm_count, operation FROM performance \
         WHERE run_uri = '{uri}' AND stage = 'run' ORDER BY threads_per_vm"
    ));
    assert_eq!(perf, ["1,2,read", "2,2,read"]);
    let cost = s.query(&format!(
        "SELECT stage FROM cost WHERE run_uri = '{uri}' ORDER BY stage"
    ));
    assert_eq!(cost, ["load", "run", "run"]);
    // The URI exports all three stages; `show` asks for one of them.
    let samples = ok(&s.results_cmd(&["export", uri, "--format", "pkb"]));
    let throughput: Vec<&str> = samples
        .lines()
        .filter(|l| l.contains("\"overall Throughput\""))
        .collect();
    assert_eq!(throughput.len(), 3, "{samples}");
    assert_eq!(
        throughput
            .iter()
            .filter(|l| l.contains("|stage:load|"))
            .count(),
        1
    );
    for threads in ["-threads 1 ", "-threads 2 "] {
        assert!(
            throughput
                .iter()
                .any(|l| l.contains("|stage:run|") && l.contains(threads)),
            "no run stage with {threads}: {samples}"
        );
    }
    assert!(throughput
        .iter()
        .all(|l| l.contains(&format!("\"run_uri\": \"{uri}\""))
            || l.contains(&format!("\"run_uri\":\"{uri}\""))));
    let shown = s.results_cmd(&["show", uri]);
    assert!(!shown.status.success());
    assert!(
        text(&shown.stderr).contains("3 stages"),
        "{}",
        text(&shown.stderr)
    );
    // Each stage said where it went in the words `results list` uses: its
    // selector, its run URI (the URI column) and its clients' ids (RUN).
    let said = text(&o.stderr);
    let listed = ok(&s.results_cmd(&["list"]));
    for stage in 0..3u32 {
        let line = said
            .lines()
            .find(|l| {
                l.contains(&format!(
                    "recorded as {uri}/{stage} (run URI {uri}, stage {stage}; client runs "
                ))
            })
            .unwrap_or_else(|| panic!("stage {stage}: {said}"));
        let ids = line.split("client runs ").nth(1).unwrap();
        let ids: Vec<&str> = ids.split(')').next().unwrap().split(", ").collect();
        assert_eq!(ids.len(), 2, "{line}");
        for id in ids {
            assert!(
                listed
                    .lines()
                    .any(|l| l.starts_with(id) && l.contains(uri.as_str())),
                "{id} not in the RUN column:\n{listed}"
            );
        }
    }
}

/// Every client samples the server's counters around its share; the
/// merged run keeps the widest change, which (the last client to finish
/// sampled after every operation, each client before the common start)
/// counts every client's reads exactly.
#[cfg(feature = "redis")]
#[test]
fn client_processes_sample_the_server_and_the_merge_counts_every_read() {
    let Some(server) = sojourn_testkit::redis_server::RedisServer::start(None) else {
        return;
    };
    let s = Scratch::new();
    s.write(
        "multi.yaml",
        &format!(
            "benchmarks:\n- redis_ycsb:\n    flags:\n      num_vms: 2\n      \
             sojourn_db: {}\n      ycsb_record_count: 300\n      \
             ycsb_threads_per_client: 2\n      ycsb_operation_count: 400\n      \
             ycsb_timelimit: 0\n      ycsb_workload_files: workloadc\n      \
             ycsb_field_count: 1\n",
            server.url()
        ),
    );
    let o = s.run(&[]);
    assert_final(&o, true);
    let runs = s.runs(&[("suite_config", "multi.yaml"), ("stage", "run")]);
    assert_eq!(runs.len(), 2);
    let store = s.store();
    for r in &runs {
        let client = store.load(r.meta.id.as_str()).unwrap();
        let calls = client.server.expect("each client's counters").deltas["calls_hgetall"];
        // At least its own reads; at most every client's.
        assert!((400.0..=800.0).contains(&calls), "{calls}");
    }
    let merged = store.load_merged(runs[0].meta.id.as_str()).unwrap();
    assert_eq!(merged.total.op(OpKind::Read).unwrap().count(), 800);
    assert_eq!(merged.server.unwrap().deltas["calls_hgetall"], 800.0);
    let stderr = text(&o.stderr);
    assert!(stderr.contains("run: server: "), "{stderr}");
    assert_all_stored(&stderr);
}

#[test]
fn client_processes_stop_when_the_suite_is_killed() {
    let s = Scratch::new();
    s.write(
        "long.yaml",
        "benchmarks:\n- b_ycsb:\n    flags:\n      num_vms: 2\n      sojourn_db: \"null:\"\n      \
         ycsb_skip_load_stage: true\n      ycsb_threads_per_client: 1\n      \
         ycsb_run_parameters: target=50\n      ycsb_timelimit: 600\n      \
         ycsb_workload_files: workloadc\n",
    );
    let mut child = s
        .command(&[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Both clients have begun their runs (bounded wait)...
    let deadline = Instant::now() + Duration::from_secs(60);
    while s
        .results()
        .exists()
        .then(|| s.runs(&[]))
        .map_or(0, |r| r.len())
        < 2
    {
        assert!(child.try_wait().unwrap().is_none(), "the suite ended early");
        assert!(Instant::now() < deadline, "the clients never began");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: SIGKILL to our own child process.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) },
        0
    );
    child.wait().unwrap();
    // ...and, their suite gone, they stop and keep what they measured,
    // well before their 600 s time limit.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let runs = s.runs(&[]);
        if runs.iter().all(|r| r.status == RunStatus::Interrupted) {
            assert_eq!(runs.len(), 2);
            break;
        }
        assert!(
            runs.iter().all(|r| r.status != RunStatus::Failed),
            "{runs:#?}"
        );
        assert!(
            Instant::now() < deadline,
            "clients still running: {runs:#?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(s.marker("long.yaml.PROCESSING"), None);
}
