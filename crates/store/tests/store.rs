//! The SQLite store end to end: a run written as the CLI writes it reads
//! back equal, histograms bucket for bucket; filters; merging client
//! processes exactly; concurrent writers; a store from schema version 1
//! opens and migrates; a run whose process died is shown failed;
//! `query` stays read-only.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use sojourn_core::executor::ThreadsWhy;
use sojourn_core::histograms::Stats;
use sojourn_core::op::OpKind;
use sojourn_store::{
    Filter, IntervalDetail, RunMeta, RunStatus, Store, StoreError, Value, SCHEMA_VERSION,
};

fn temp_store() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("results.sqlite");
    (dir, path.to_string_lossy().into_owned())
}

#[test]
fn a_run_reads_back_as_it_was_recorded() {
    let (_dir, path) = temp_store();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let run = synthetic(1, 5, 1);
    let warnings = vec!["achieved 90% of the target".to_string()];
    record(&store, &run, &warnings);

    let loaded = store.load(run.meta.id.as_str()).unwrap();
    assert_eq!(loaded.summary.meta, run.meta);
    assert_eq!(loaded.summary.status, RunStatus::Completed);
    assert_eq!(loaded.summary.error, None);
    assert_eq!(loaded.warnings, warnings);
    assert_eq!(loaded.summary.intervals, 5);
    assert!(loaded.summary.ended_at.is_some());

    let t = loaded.summary.totals.as_ref().unwrap();
    let o = &run.outcome;
    assert_eq!(t.operations, o.total.ops_done);
    assert_eq!(t.operations_all, o.all.ops_done);
    assert_eq!(t.scheduled, o.scheduled);
    assert_eq!(t.seed, o.seed);
    assert_eq!(t.stop_reason, "operation_count");
    assert!((t.throughput - o.throughput()).abs() < 1e-9);
    assert!((t.measured.as_secs_f64() - 4.0).abs() < 1e-9);
    assert!((t.cpu.user_s - o.cpu.user_s).abs() < 1e-12);
    assert!(t.offered.is_some());
    assert_eq!(t.runtime_threads, o.runtime_threads as u64);
    assert_eq!(t.thread_use, Some(o.thread_use));

    // The summary's histograms, bucket for bucket, failed ones included.
    assert_same_stats(&loaded.total, &o.total, "total");
    for (k, s) in o.total.kinds() {
        let l = loaded.total.op(k).unwrap();
        let (lf, of) = (l.failed.as_ref().unwrap(), s.failed.as_ref().unwrap());
        assert_eq!(lf.service, of.service, "{k:?} failed service");
        assert_eq!(lf.response, of.response, "{k:?} failed response");
    }
    assert_eq!(loaded.total.lag, o.total.lag);
    assert_eq!(loaded.total.ops_done, o.total.ops_done);

    // The time series, interval by interval.
    assert_eq!(loaded.intervals.len(), run.intervals.len());
    for (i, (l, s)) in loaded.intervals.iter().zip(&run.per_interval).enumerate() {
        assert_same_stats(&l.stats, s, &format!("interval {i}"));
        assert_eq!(l.ops_done, s.ops_done);
        assert_eq!(l.warmup, i == 0);
        assert_eq!(l.start, Duration::from_secs(i as u64));
        // Interval lag figures are stored; their confidence intervals are not.
        let expect = run.intervals[i].lag.clone().map(|mut lag| {
            lag.ci95_us = Default::default();
            lag
        });
        assert_eq!(l.lag, expect);
        assert_eq!(l.cpu, run.intervals[i].cpu);
    }
    // The figures stored beside the histograms, with or without decoding.
    let light = store
        .load_with(run.meta.id.as_str(), IntervalDetail::Figures)
        .unwrap();
    assert_same_stats(&light.total, &o.total, "total without interval histograms");
    for (i, (full, l)) in loaded.intervals.iter().zip(&light.intervals).enumerate() {
        assert_eq!(full.ops, l.ops, "interval {i}");
        assert_eq!(l.stats.kinds().count(), 0);
        assert_eq!(l.stats.ops_done, full.ops_done);
        for (op, k) in full.ops.iter().zip(&run.intervals[i].kinds) {
            assert_eq!(op.kind, k.kind);
            assert_eq!(op.statuses, k.statuses);
            assert_eq!(op.service.p99_us, k.service.p99_us);
            assert_eq!(op.response.p99_9_us, k.response.p99_9_us);
            assert_eq!(op.response.max_us, k.response.max_us);
        }
    }
    // Intervals outside the warm-up add up to the summary's successful
    // operations exactly.
    let mut sum = Stats::default();
    for iv in loaded.intervals.iter().filter(|iv| !iv.warmup) {
        sum.add(&iv.stats);
    }
    assert_eq!(
        sum.op(OpKind::Read).unwrap().ok.service,
        loaded.total.op(OpKind::Read).unwrap().ok.service
    );

    // Names that resolve: the id, a prefix, the run URI, `last`.
    for name in [
        run.meta.id.as_str(),
        &run.meta.id.as_str()[..13],
        run.meta.run_uri.as_str(),
        "last",
    ] {
        assert_eq!(store.resolve(name).unwrap(), run.meta.id, "{name}");
    }
    assert!(matches!(
        store.load("no-such-run"),
        Err(StoreError::NoSuchRun(_))
    ));
    // Three characters of an existing id are too few to name it by, and
    // the error says how many are.
    let e = store.resolve(&run.meta.id.as_str()[..3]).unwrap_err();
    assert!(matches!(e, StoreError::ShortPrefix(_)), "{e}");
    assert!(e.to_string().contains("at least 4 characters"), "{e}");
    // Finishing moves the start to the executor's first operation.
    let mut later = synthetic(5, 1, 0);
    later.outcome.started_at = later.meta.started_at + Duration::from_millis(250);
    record(&store, &later, &[]);
    assert_eq!(
        store
            .load(later.meta.id.as_str())
            .unwrap()
            .meta()
            .started_at,
        later.outcome.started_at
    );
}

#[test]
fn list_filters_by_label_workload_backend_phase_and_time() {
    let (_dir, path) = temp_store();
    let store = Store::open(&path).unwrap();
    let a = synthetic(1, 2, 0);
    let mut b = synthetic(2, 2, 0);
    b.meta
        .labels
        .insert("experiment".into(), "throughput_test".into());
    b.meta.workloads = vec!["workloadc".into()];
    b.meta.backend = "redis://cache:6379".into();
    b.meta.started_at = a.meta.started_at + Duration::from_secs(60);
    b.outcome.started_at = b.meta.started_at;
    let mut c = synthetic(3, 2, 0);
    c.meta.phase = "load".into();
    c.meta.started_at = a.meta.started_at + Duration::from_secs(120);
    c.outcome.started_at = c.meta.started_at;
    for r in [&a, &b, &c] {
        record(&store, r, &[]);
    }
    let ids = |f: Filter| -> Vec<String> {
        store
            .list(&f)
            .unwrap()
            .into_iter()
            .map(|s| s.meta.id.0)
            .collect()
    };
    let (ia, ib, ic) = (
        a.meta.id.0.clone(),
        b.meta.id.0.clone(),
        c.meta.id.0.clone(),
    );
    assert_eq!(
        ids(Filter::default()),
        vec![ia.clone(), ib.clone(), ic.clone()]
    );
    assert_eq!(
        ids(Filter {
            labels: vec![("experiment".into(), "throughput_test".into())],
            ..Filter::default()
        }),
        vec![ib.clone()]
    );
    assert_eq!(
        ids(Filter {
            workload: Some("workloada".into()),
            ..Filter::default()
        }),
        vec![ia.clone(), ic.clone()]
    );
    assert_eq!(
        ids(Filter {
            backend: Some("redis".into()),
            ..Filter::default()
        }),
        vec![ib.clone()]
    );
    assert_eq!(
        ids(Filter {
            phase: Some("load".into()),
            ..Filter::default()
        }),
        vec![ic.clone()]
    );
    assert_eq!(
        ids(Filter {
            since: Some(a.meta.started_at + Duration::from_secs(30)),
            ..Filter::default()
        }),
        vec![ib.clone(), ic.clone()]
    );
    assert_eq!(
        ids(Filter {
            limit: Some(2),
            ..Filter::default()
        }),
        vec![ib, ic]
    );
    // Labels and properties come back with the summaries.
    let all = store.list(&Filter::default()).unwrap();
    assert_eq!(all[0].meta.labels, a.meta.labels);
    assert_eq!(all[0].meta.properties, a.meta.properties);
}

#[test]
fn client_processes_merge_exactly() {
    let (_dir, path) = temp_store();
    let store = Store::open(&path).unwrap();
    let mut parts = Vec::new();
    let uri = "0badcafe".to_string();
    for i in 0..3u32 {
        let mut r = synthetic(10 + i as u64, 4, 0);
        r.meta.run_uri = uri.clone();
        r.meta.client_index = i;
        r.meta.client_count = 3;
        record(&store, &r, &[]);
        parts.push(r);
    }
    let merged = store.load_merged(&uri).unwrap();
    assert_eq!(merged.meta().client_count, 3);
    assert_eq!(merged.meta().threads, 24);
    assert_eq!(merged.meta().target, Some(9000.0));
    let mut expected = Stats::default();
    for p in &parts {
        expected.add(&p.outcome.total);
    }
    assert_same_stats(&merged.total, &expected, "merged total");
    assert_eq!(merged.total.lag, expected.lag);
    // Interval i of the merged run is the sum of every client's interval i.
    assert_eq!(merged.intervals.len(), 4);
    for i in 0..4 {
        let mut e = Stats::default();
        for p in &parts {
            e.add(&p.per_interval[i]);
        }
        assert_same_stats(&merged.intervals[i].stats, &e, &format!("interval {i}"));
    }
    // Figures of merged intervals come from the merged histograms...
    let e0 = sojourn_core::histograms::LatencySummary::of(
        &merged.intervals[0]
            .stats
            .op(OpKind::Read)
            .unwrap()
            .ok
            .service,
    );
    assert_eq!(merged.intervals[0].ops[0].kind, OpKind::Read);
    assert_eq!(merged.intervals[0].ops[0].service.p99_us, e0.p99_us);
    // ...and without histograms, percentiles are not made up.
    let light = store
        .load_merged_with(&uri, IntervalDetail::Figures)
        .unwrap();
    let op = &light.intervals[0].ops[0];
    assert!(op.service.p99_us.is_nan());
    assert_eq!(
        op.count(),
        parts
            .iter()
            .map(|p| p.per_interval[0].op(OpKind::Read).unwrap().count())
            .sum::<u64>()
    );
    assert_same_stats(
        &light.total,
        &expected,
        "merged total without interval histograms",
    );
    let t = merged.summary.totals.unwrap();
    assert_eq!(
        t.operations,
        parts.iter().map(|p| p.outcome.total.ops_done).sum::<u64>()
    );
    // The clients agree on why; the busiest is the busiest of any client.
    let busiest = parts
        .iter()
        .map(|p| p.outcome.thread_use.busiest)
        .fold(0.0, f64::max);
    assert!(parts.iter().any(|p| p.outcome.thread_use.busiest < busiest));
    assert_eq!(
        t.thread_use.map(|u| (u.why, u.busiest)),
        Some((ThreadsWhy::Set, busiest))
    );
    // A run URI names all three; `resolve` wants one.
    assert_eq!(store.resolve_all(&uri).unwrap().len(), 3);
    assert!(matches!(
        store.resolve(&uri),
        Err(StoreError::Ambiguous { count: 3, .. })
    ));
}

#[test]
fn concurrent_writers_lose_nothing() {
    let (_dir, path) = temp_store();
    // Created once so the writers race on rows, not on the schema.
    Store::open(&path).unwrap();
    let writers = 6;
    let runs_each = 3;
    let intervals = 20;
    std::thread::scope(|s| {
        for w in 0..writers {
            let path = path.clone();
            s.spawn(move || {
                // Each writer has its own connection, as a separate client
                // process would.
                let store = Store::open(&path).unwrap();
                for r in 0..runs_each {
                    let mut run = synthetic(w * 100 + r, intervals, 0);
                    run.meta.labels.insert("writer".into(), w.to_string());
                    record(&store, &run, &[format!("writer {w} run {r}")]);
                }
            });
        }
    });
    let store = Store::open(&path).unwrap();
    let all = store.list(&Filter::default()).unwrap();
    assert_eq!(all.len() as u64, writers * runs_each);
    for s in &all {
        assert_eq!(s.status, RunStatus::Completed);
        assert_eq!(s.intervals, intervals);
        let loaded = store.load(s.meta.id.as_str()).unwrap();
        assert_eq!(loaded.intervals.len() as u64, intervals);
        assert_eq!(loaded.warnings.len(), 1);
    }
    let q = store.query("SELECT COUNT(*) FROM interval_ops").unwrap();
    // Every interval has a READ and an UPDATE row.
    assert_eq!(
        q.rows[0][0],
        Value::Integer((writers * runs_each * intervals * 2) as i64)
    );
}

#[test]
fn a_run_whose_process_died_is_shown_failed() {
    let (_dir, path) = temp_store();
    let store = Store::open(&path).unwrap();
    // A pid that existed and has ended.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = child.id();
    child.wait().unwrap();

    let mut dead = synthetic(1, 3, 0);
    dead.meta.pid = dead_pid;
    let id = store.begin_run(&dead.meta).unwrap();
    for iv in &dead.intervals[..2] {
        store.write_interval(&id, iv).unwrap();
    }
    let mut elsewhere = synthetic(2, 1, 0);
    elsewhere.meta.host = "another-client-machine".into();
    elsewhere.meta.pid = dead_pid;
    store.begin_run(&elsewhere.meta).unwrap();
    let alive = synthetic(3, 1, 0);
    store.begin_run(&alive.meta).unwrap();

    let listed = store.list(&Filter::default()).unwrap();
    let status = |id: &str| listed.iter().find(|s| s.meta.id.0 == id).unwrap().status;
    assert_eq!(status(dead.meta.id.as_str()), RunStatus::Failed);
    // Another host's process cannot be checked from here; ours is alive.
    assert_eq!(status(elsewhere.meta.id.as_str()), RunStatus::Running);
    assert_eq!(status(alive.meta.id.as_str()), RunStatus::Running);

    let loaded = store.load(dead.meta.id.as_str()).unwrap();
    assert_eq!(loaded.intervals.len(), 2);
    assert!(loaded
        .summary
        .error
        .as_deref()
        .unwrap()
        .contains(&dead_pid.to_string()));
    // The end time is the end of the last stored interval.
    let ended = loaded.summary.ended_at.unwrap();
    assert_eq!(
        ended.duration_since(dead.meta.started_at).unwrap(),
        Duration::from_secs(2)
    );
    // What it measured before dying is still there.
    let partial = loaded.totals_or_intervals();
    let mut e = Stats::default();
    e.add(&dead.per_interval[0]);
    e.add(&dead.per_interval[1]);
    assert_same_stats(&partial, &e, "partial");

    // A failed phase after begin: marked failed with its reason, and a
    // finished run is not overwritten.
    store
        .fail_run(&alive.meta.id, "the database went away")
        .unwrap();
    let l = store.load(alive.meta.id.as_str()).unwrap();
    assert_eq!(l.summary.status, RunStatus::Failed);
    assert_eq!(l.summary.error.as_deref(), Some("the database went away"));
    let done = synthetic(4, 1, 0);
    record(&store, &done, &[]);
    store.fail_run(&done.meta.id, "too late").unwrap();
    assert_eq!(
        store.load(done.meta.id.as_str()).unwrap().summary.status,
        RunStatus::Completed
    );
}

/// Schema version 1 as sojourn 0.1 shipped it, written out by hand: a
/// migration must bring such a store up to date with its runs intact.
const V1_SCHEMA: &str = r#"
CREATE TABLE schema_version (version BIGINT NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE runs (
    id TEXT PRIMARY KEY, run_uri TEXT NOT NULL, started_at TEXT NOT NULL,
    started_unix DOUBLE PRECISION NOT NULL, ended_at TEXT, ended_unix DOUBLE PRECISION,
    phase TEXT NOT NULL, workload TEXT NOT NULL, backend TEXT NOT NULL,
    threads BIGINT NOT NULL, target DOUBLE PRECISION, tool_version TEXT NOT NULL,
    host TEXT NOT NULL, pid BIGINT NOT NULL, command_line TEXT NOT NULL,
    status TEXT NOT NULL, error TEXT, elapsed_s DOUBLE PRECISION,
    measured_s DOUBLE PRECISION, operations BIGINT, operations_all BIGINT,
    throughput DOUBLE PRECISION, offered DOUBLE PRECISION, scheduled BIGINT,
    abandoned BIGINT, stop_reason TEXT, seed BIGINT, runtime_threads BIGINT,
    cpu_user_s DOUBLE PRECISION, cpu_system_s DOUBLE PRECISION, lag_hist BLOB
);
CREATE TABLE run_properties (run_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, key));
CREATE TABLE run_labels (run_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, key));
CREATE TABLE run_warnings (run_id TEXT NOT NULL, seq BIGINT NOT NULL, message TEXT NOT NULL, PRIMARY KEY (run_id, seq));
CREATE TABLE run_ops (
    run_id TEXT NOT NULL, op TEXT NOT NULL, operations BIGINT NOT NULL,
    ok BIGINT NOT NULL, batched_ok BIGINT NOT NULL, not_found BIGINT NOT NULL,
    error BIGINT NOT NULL, not_implemented BIGINT NOT NULL, unexpected_state BIGINT NOT NULL,
    bad_request BIGINT NOT NULL, forbidden BIGINT NOT NULL, service_unavailable BIGINT NOT NULL,
    service_mean_us DOUBLE PRECISION, service_min_us DOUBLE PRECISION, service_max_us DOUBLE PRECISION,
    service_p50_us DOUBLE PRECISION, service_p90_us DOUBLE PRECISION, service_p95_us DOUBLE PRECISION,
    service_p99_us DOUBLE PRECISION, service_p99_9_us DOUBLE PRECISION, service_p99_99_us DOUBLE PRECISION,
    response_mean_us DOUBLE PRECISION, response_min_us DOUBLE PRECISION, response_max_us DOUBLE PRECISION,
    response_p50_us DOUBLE PRECISION, response_p90_us DOUBLE PRECISION, response_p95_us DOUBLE PRECISION,
    response_p99_us DOUBLE PRECISION, response_p99_9_us DOUBLE PRECISION, response_p99_99_us DOUBLE PRECISION,
    service_hist BLOB NOT NULL, response_hist BLOB NOT NULL,
    failed_service_hist BLOB, failed_response_hist BLOB,
    PRIMARY KEY (run_id, op)
);
CREATE TABLE intervals (
    run_id TEXT NOT NULL, seq BIGINT NOT NULL, start_s DOUBLE PRECISION NOT NULL,
    length_s DOUBLE PRECISION NOT NULL, ops_done BIGINT NOT NULL,
    cpu_user_s DOUBLE PRECISION NOT NULL, cpu_system_s DOUBLE PRECISION NOT NULL,
    warmup BIGINT NOT NULL, lag_count BIGINT, lag_mean_us DOUBLE PRECISION,
    lag_min_us DOUBLE PRECISION, lag_max_us DOUBLE PRECISION, lag_p50_us DOUBLE PRECISION,
    lag_p90_us DOUBLE PRECISION, lag_p95_us DOUBLE PRECISION, lag_p99_us DOUBLE PRECISION,
    lag_p99_9_us DOUBLE PRECISION, lag_p99_99_us DOUBLE PRECISION,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE interval_ops (
    run_id TEXT NOT NULL, seq BIGINT NOT NULL, op TEXT NOT NULL,
    ok BIGINT NOT NULL, batched_ok BIGINT NOT NULL, not_found BIGINT NOT NULL,
    error BIGINT NOT NULL, not_implemented BIGINT NOT NULL, unexpected_state BIGINT NOT NULL,
    bad_request BIGINT NOT NULL, forbidden BIGINT NOT NULL, service_unavailable BIGINT NOT NULL,
    service_mean_us DOUBLE PRECISION, service_p50_us DOUBLE PRECISION, service_p99_us DOUBLE PRECISION,
    service_p99_9_us DOUBLE PRECISION, service_max_us DOUBLE PRECISION,
    response_mean_us DOUBLE PRECISION, response_p50_us DOUBLE PRECISION, response_p99_us DOUBLE PRECISION,
    response_p99_9_us DOUBLE PRECISION, response_max_us DOUBLE PRECISION,
    service_hist BLOB NOT NULL, response_hist BLOB NOT NULL,
    PRIMARY KEY (run_id, seq, op)
);
"#;

/// A store that cannot be written (here: another connection holds the
/// write lock past the wait, as a full disk or a read-only mount would
/// refuse the write) is still shown: the runs and what they measured read
/// back, and the error that stopped the housekeeping comes with them.
#[test]
fn a_store_that_cannot_be_written_is_still_read() {
    let (_dir, path) = temp_store();
    let store = Store::open(&path).unwrap();
    let done = synthetic(1, 3, 0);
    record(&store, &done, &[]);
    // A run left `running` by a process that ended: opening the store
    // would mark it failed, which is a write.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = child.id();
    child.wait().unwrap();
    let mut dead = synthetic(2, 1, 0);
    dead.meta.pid = dead_pid;
    store.begin_run(&dead.meta).unwrap();
    drop(store);

    let locker = rusqlite::Connection::open(&path).unwrap();
    locker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let wait = Duration::from_millis(200);
    assert!(Store::open_waiting(&path, wait).is_err());
    let (shown, write_error) = Store::open_to_show(&path, wait).unwrap();
    let e = write_error.expect("the write was refused").to_string();
    assert!(e.contains("locked") || e.contains("busy"), "{e}");
    let runs = shown.list(&Filter::default()).unwrap();
    assert_eq!(runs.len(), 2);
    let loaded = shown.load(done.meta.id.as_str()).unwrap();
    assert_same_stats(
        &loaded.totals_or_intervals(),
        &done.outcome.total,
        "read-only",
    );
    // Nothing was written: the dead run is still `running` until a
    // store that can be written marks it.
    assert_eq!(
        shown.load(dead.meta.id.as_str()).unwrap().summary.status,
        RunStatus::Running
    );
    locker.execute_batch("ROLLBACK").unwrap();
    let (writable, none) = Store::open_to_show(&path, wait).unwrap();
    assert!(none.is_none());
    assert_eq!(
        writable.load(dead.meta.id.as_str()).unwrap().summary.status,
        RunStatus::Failed
    );
}

#[test]
fn a_version_1_store_opens_and_migrates() {
    let (dir, _) = temp_store();
    let path = dir.path().join("v1.sqlite");
    let run = synthetic(7, 1, 0);
    let read = run.outcome.total.op(OpKind::Read).unwrap();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(V1_SCHEMA).unwrap();
        conn.execute(
            "INSERT INTO runs (id, run_uri, started_at, started_unix, ended_at, ended_unix, \
             phase, workload, backend, threads, target, tool_version, host, pid, command_line, \
             status, elapsed_s, measured_s, operations, operations_all, throughput, scheduled, \
             abandoned, stop_reason, seed, runtime_threads, cpu_user_s, cpu_system_s) \
             VALUES ('r1', 'cafe0001', '2025-11-21T11:15:56.000Z', 1763723756.0, \
             '2025-11-21T11:15:57.000Z', 1763723757.0, 'run', 'workloadc', 'memory:', 4, NULL, \
             '0.1.0', 'old-host', 1, 'sojourn run', 'completed', 1.0, 1.0, 200, 200, 200.0, 0, \
             0, 'operation_count', 5, 1, 0.1, 0.1)",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO run_labels VALUES ('r1', 'experiment', 'old_test')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO run_properties VALUES ('r1', 'fieldcount', '1')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO run_ops (run_id, op, operations, ok, batched_ok, not_found, error, \
             not_implemented, unexpected_state, bad_request, forbidden, service_unavailable, \
             service_p50_us, service_p99_us, service_p99_9_us, service_hist, response_hist) \
             VALUES ('r1', 'read', ?1, ?1, 0, 0, 0, 0, 0, 0, 0, 0, 1.5, 2.5, 3.5, ?2, ?3)",
            rusqlite::params![
                read.ok.service.len() as i64,
                sojourn_core::hist_codec::encode(&read.ok.service),
                sojourn_core::hist_codec::encode(&read.ok.response),
            ],
        )
        .unwrap();
    }
    let store = Store::open(path.to_str().unwrap()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let loaded = store.load("r1").unwrap();
    assert_eq!(loaded.summary.status, RunStatus::Completed);
    assert_eq!(loaded.meta().client_count, 1);
    assert_eq!(loaded.meta().measurement_interval, "op");
    assert_eq!(loaded.meta().percentiles, vec![95.0, 99.0]);
    assert_eq!(
        loaded.meta().labels,
        BTreeMap::from([("experiment".to_string(), "old_test".to_string())])
    );
    let l = loaded.total.op(OpKind::Read).unwrap();
    assert_eq!(l.ok.service, read.ok.service);
    // The views added by version 2 work over the old rows.
    let q = store
        .query("SELECT experiment, operation, fieldcount, vm_count FROM performance")
        .unwrap();
    assert_eq!(
        q.rows,
        vec![vec![
            Value::Text("old_test".into()),
            Value::Text("read".into()),
            Value::Integer(1),
            Value::Integer(1),
        ]]
    );
    // Reopening does nothing more.
    drop(store);
    assert_eq!(
        Store::open(path.to_str().unwrap())
            .unwrap()
            .schema_version()
            .unwrap(),
        SCHEMA_VERSION
    );
}

#[test]
fn a_store_from_a_newer_sojourn_is_refused() {
    let (_dir, path) = temp_store();
    Store::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE schema_version SET version = 99", [])
        .unwrap();
    drop(conn);
    match Store::open(&path) {
        Err(e @ StoreError::TooNew { found: 99, .. }) => {
            assert!(e.to_string().contains("upgrade sojourn"), "{e}")
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a store from a newer version opened"),
    }
}

#[test]
fn queries_are_read_only() {
    let (_dir, path) = temp_store();
    let store = Store::open(&path).unwrap();
    let run = synthetic(1, 3, 0);
    record(&store, &run, &[]);
    for sql in [
        "DELETE FROM runs",
        "DROP TABLE runs",
        "UPDATE runs SET status = 'failed'",
        "INSERT INTO run_labels VALUES ('x', 'y', 'z')",
        "PRAGMA query_only = 0",
    ] {
        let e = store.query(sql);
        assert!(
            matches!(e, Err(StoreError::ReadOnly(_))),
            "{sql} was accepted: {e:?}"
        );
    }
    // The same store still records runs afterwards.
    record(&store, &synthetic(2, 1, 0), &[]);
    let ro = Store::open_read_only(&path).unwrap();
    // A statement that does not parse is an error, not a write.
    assert!(matches!(
        ro.query("SELECT FROM WHERE"),
        Err(StoreError::Sqlite { .. })
    ));
    let q = ro
        .query(&format!(
            "SELECT experiment, operation, target_throughput, p99_latency_ms, fieldlength, \
             recordcount, readallfields, requestdistribution, threads_per_vm, vm_count \
             FROM performance WHERE run_id = '{}' ORDER BY operation",
            run.meta.id
        ))
        .unwrap();
    assert_eq!(q.columns[0], "experiment");
    assert_eq!(q.rows.len(), 2);
    let read_p99_us = sojourn_core::histograms::LatencySummary::of(
        &run.outcome.total.op(OpKind::Read).unwrap().ok.service,
    )
    .p99_us;
    assert_eq!(q.rows[0][0], Value::Text("latency_test".into()));
    assert_eq!(q.rows[0][1], Value::Text("read".into()));
    assert_eq!(q.rows[0][2], Value::Real(3000.0));
    assert_eq!(q.rows[0][3], Value::Real(read_p99_us / 1000.0));
    assert_eq!(q.rows[0][4], Value::Integer(1024));
    assert_eq!(q.rows[0][5], Value::Integer(1000));
    assert_eq!(q.rows[0][6], Value::Text("false".into()));
    assert_eq!(q.rows[0][7], Value::Text("zipfian".into()));
    assert_eq!(q.rows[0][8], Value::Integer(8));
    assert_eq!(q.rows[0][9], Value::Integer(1));
    // The cost view: the walkthrough's formula with one SSD node.
    let q = ro
        .query(&format!(
            "SELECT baseline_table_gb, baseline_monthly_cost_usd FROM cost WHERE run_id = '{}'",
            run.meta.id
        ))
        .unwrap();
    let gb = (1024.0 + 39.0) * 1.0 * 1000.0 / 1073741824.0;
    let Value::Real(g) = q.rows[0][0] else {
        panic!("{q:?}")
    };
    let Value::Real(c) = q.rows[0][1] else {
        panic!("{q:?}")
    };
    assert!((g - gb).abs() < 1e-12);
    assert!((c - (0.65 * 24.0 * 30.0 + gb * 0.17)).abs() < 1e-9);
    // Read-only stores refuse writes through the API too.
    assert!(matches!(
        ro.begin_run(&RunMeta::new("run")),
        Err(StoreError::ReadOnly(_))
    ));
}

#[test]
fn locations_are_checked() {
    let e = Store::open("mysql://root:hunter2@db/results")
        .err()
        .unwrap();
    let msg = e.to_string();
    assert!(msg.contains("file path"), "{msg}");
    assert!(!msg.contains("hunter2"), "{msg}");
    let e = Store::open_read_only("/nonexistent/results.sqlite")
        .err()
        .unwrap();
    assert!(e.to_string().contains("no such file"), "{e}");
}

#[test]
fn server_counters_round_trip_and_merge() {
    let (_dir, path) = temp_store();
    let store = Store::open(&path).unwrap();
    let plain = synthetic(3, 3, 0);
    record(&store, &plain, &[]);
    assert!(store.load(plain.meta.id.as_str()).unwrap().server.is_none());

    let uri = "5e4e4c0d".to_string();
    let mut a = synthetic(4, 3, 0);
    a.meta.run_uri = uri.clone();
    a.meta.client_count = 2;
    with_server(&mut a, 1000.0);
    record(&store, &a, &[]);
    let loaded = store.load(a.meta.id.as_str()).unwrap();
    assert_eq!(loaded.server, a.outcome.server);
    let ops = a.outcome.all.ops_done as f64;
    // SQL sees the per-operation figure too: the change over the
    // operations of the phase.
    let q = store
        .query(&format!(
            "SELECT per_op, delta, operations FROM run_server_counters \
             WHERE run_id = '{}' AND name = 'blks_hit'",
            a.meta.id.as_str()
        ))
        .unwrap();
    assert_eq!(q.rows.len(), 1);
    assert!(ops > 0.0);
    assert_eq!(
        q.rows[0],
        vec![
            Value::Real(1000.0 / ops),
            Value::Real(1000.0),
            Value::Integer(ops as i64)
        ]
    );

    // Two clients of one server sampled the same counters: the merged run
    // counts the server's work once, over both clients' operations.
    let mut b = synthetic(5, 3, 0);
    b.meta.run_uri = uri.clone();
    b.meta.client_index = 1;
    b.meta.client_count = 2;
    with_server(&mut b, 1200.0);
    record(&store, &b, &[]);
    let merged = store.load_merged(&uri).unwrap();
    let s = merged.server.expect("merged counters");
    assert_eq!(s.deltas["blks_hit"], 1200.0);
    assert_eq!(s.operations as f64, ops + b.outcome.all.ops_done as f64);
}

/// A store written by the previous schema (version 4, dumped as SQL from
/// a store where two client processes of one run merged) keeps its merged
/// run through the migration that widened the merge key with the stage
/// index: the views still give the run one row, and the run reads back
/// whole.
#[test]
fn a_version_4_store_keeps_its_merged_runs() {
    let (dir, _) = temp_store();
    let path = dir.path().join("v4.sqlite");
    {
        let dump = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/v4-two-clients.sql"),
        )
        .unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&dump).unwrap();
        let v: i64 = conn
            .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, 4);
    }
    let store = Store::open(path.to_str().unwrap()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let q = store
        .query(
            "SELECT operation, operations, vm_count, experiment FROM performance \
             WHERE run_uri = 'feed0004'",
        )
        .unwrap();
    assert_eq!(
        q.rows,
        vec![vec![
            Value::Text("read".into()),
            Value::Integer(40),
            Value::Integer(2),
            Value::Text("v4".into()),
        ]]
    );
    let q = store
        .query("SELECT stage_index, clients FROM merged_runs")
        .unwrap();
    assert_eq!(q.rows, vec![vec![Value::Integer(0), Value::Integer(2)]]);
    let whole = store.load_merged("feed0004").unwrap();
    assert_eq!(whole.meta().client_count, 2);
    assert_eq!(whole.meta().stage_index, 0);
    assert_eq!(whole.summary.totals.as_ref().unwrap().operations, 40);
    // Stored before the reason was kept: none is made up.
    assert_eq!(whole.summary.totals.as_ref().unwrap().thread_use, None);
}

/// Why operations failed, in the database's words, reads back as written
/// and merges over client processes: counts added per cause, the earliest
/// first text kept. A merged run judges whether a percentile rests on too
/// few operations on all its clients' operations, not on each client's.
#[test]
fn failure_reasons_round_trip_and_merge() {
    use sojourn_core::backend::Status;
    use sojourn_core::output::Warning;
    let (_dir, path) = temp_store();
    let store = Store::open(&path).unwrap();
    let at = |s: u64| std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + s);
    const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
    let uri = "f00dfeed".to_string();
    let mut parts = Vec::new();
    for i in 0..2u32 {
        let mut r = synthetic(40 + i as u64, 2, 0);
        r.meta.run_uri = uri.clone();
        r.meta.client_index = i;
        r.meta.client_count = 2;
        for n in 0..3 + u64::from(i) {
            r.outcome
                .total
                .record(OpKind::Read, Status::Error, 1_000, 1_000);
            r.outcome.total.note_reason(
                OpKind::Read,
                Status::Error,
                WRONGTYPE,
                at(10 - u64::from(i) + n),
            );
        }
        r.outcome.total.note_reason(
            OpKind::Read,
            Status::Error,
            &format!("ERROR 1062 (23000): Duplicate entry 'user{i}' for key 'PRIMARY'"),
            at(20 + u64::from(i)),
        );
        // Each client alone has too few operations for its percentiles.
        let mut warnings: Vec<String> = Warning::few_samples(&r.outcome.total, &r.meta.percentiles)
            .iter()
            .map(|w| w.to_string())
            .collect();
        assert!(!warnings.is_empty());
        warnings.push(format!("client-only note {i}"));
        record(&store, &r, &warnings);
        let back = store.load(r.meta.id.as_str()).unwrap();
        assert_eq!(
            back.total.op(OpKind::Read).unwrap().reasons.sorted(),
            r.outcome.total.op(OpKind::Read).unwrap().reasons.sorted(),
            "client {i} reads back as written"
        );
        parts.push(r);
    }
    let merged = store.load_merged(&uri).unwrap();
    let reasons = &merged.total.op(OpKind::Read).unwrap().reasons;
    let v = reasons.sorted();
    assert_eq!(v.len(), 2, "{v:?}");
    assert_eq!((v[0].first.as_str(), v[0].count), (WRONGTYPE, 7));
    assert_eq!(v[0].first_at, at(9), "the earliest first, from client 1");
    assert_eq!(
        v[1].count, 2,
        "duplicate keys of both clients are one cause"
    );
    assert_eq!(
        v[1].first,
        "ERROR 1062 (23000): Duplicate entry 'user0' for key 'PRIMARY'"
    );
    let mut whole = Stats::default();
    for p in &parts {
        whole.add(&p.outcome.total);
    }
    assert!(
        merged
            .warnings
            .iter()
            .any(|w| w == "client 1: client-only note 1"),
        "{:?}",
        merged.warnings
    );
    let few: Vec<&String> = merged
        .warnings
        .iter()
        .filter(|w| Warning::is_few_samples(w))
        .collect();
    let expected: Vec<String> = Warning::few_samples(&whole, &parts[0].meta.percentiles)
        .iter()
        .map(|w| w.to_string())
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(
        few,
        expected.iter().collect::<Vec<_>>(),
        "judged on the merged operations, not each client's"
    );
}
