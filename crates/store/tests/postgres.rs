//! The store on a real PostgreSQL server (with the `postgres` feature):
//! the same schema and migrations, a run read back equal, filters, merging,
//! concurrent writers, a new store created by many connections at once
//! (its database too, where the user may create one; else the statement
//! to run said), the views, read-only queries, agents gone or alive, and a
//! spooled run imported. The server
//! runs on a loopback port of its own with its data in a temporary
//! directory; without PostgreSQL installed the tests fail saying how to
//! install it (`SOJOURN_TEST_LEAVE_OUT=postgres` leaves them out).
#![cfg(feature = "postgres")]

mod common;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use common::*;
use sojourn_core::histograms::Stats;
use sojourn_core::op::OpKind;
use sojourn_store::{Filter, RunStatus, Store, StoreError, Value, AGENT_GONE, SCHEMA_VERSION};
use sojourn_testkit::needs::{self, Need};
use sojourn_testkit::process::{output_within, TOOL_LIMIT};
use sojourn_testkit::servers::{versioned_dirs, Server};

/// PostgreSQL refuses to run as root; tests run as root in containers, so
/// the server then runs as `nobody`.
const NOBODY: u32 = 65534;

fn as_server_user(cmd: &mut Command, dir: &std::path::Path) {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let c = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
        // SAFETY: chown of a directory we created.
        unsafe { libc::chown(c.as_ptr(), NOBODY, NOBODY) };
        cmd.uid(NOBODY).gid(NOBODY);
    }
}

/// A PostgreSQL server and the URL of its database, or None when the run
/// leaves PostgreSQL out.
fn server() -> Option<(Server, String)> {
    if needs::left_out(Need::Postgres) {
        return None;
    }
    let extra: Vec<PathBuf> = versioned_dirs(std::path::Path::new("/usr/lib/postgresql"), "bin");
    let initdb = needs::binary(Need::Postgres, "initdb", &extra);
    let postgres = needs::binary(Need::Postgres, "postgres", &extra);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut init = Command::new(&initdb);
    init.args([
        "-D",
        data.to_str().unwrap(),
        "-U",
        "bench",
        "--auth=trust",
        "--no-sync",
    ])
    .env("LC_ALL", "C")
    .stdout(std::process::Stdio::null());
    as_server_user(&mut init, dir.path());
    let out = output_within(&mut init, None, TOOL_LIMIT);
    assert!(
        out.status.success(),
        "initdb: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let socket_dir = dir.path().to_path_buf();
    let server = Server::start("postgres", dir, |port| {
        let mut cmd = Command::new(&postgres);
        cmd.args([
            "-D",
            data.to_str().unwrap(),
            "-p",
            &port.to_string(),
            "-k",
            socket_dir.to_str().unwrap(),
            "-c",
            "listen_addresses=127.0.0.1",
            "-F",
        ]);
        as_server_user(&mut cmd, &socket_dir);
        cmd
    });
    let port = server.port;
    let url = format!("postgres://bench:not-a-real-secret@127.0.0.1:{port}/postgres");
    // The port listens before the server accepts sessions ("the database
    // system is starting up"); wait, bounded, until a session opens.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match Store::open_read_only(&url) {
            Ok(_) => break,
            Err(e)
                if std::time::Instant::now() < deadline
                    && e.to_string().contains("starting up") =>
            {
                std::thread::sleep(std::time::Duration::from_millis(50))
            }
            Err(e) => panic!("{e}\n{}", server.log()),
        }
    }
    Some((server, url))
}

#[test]
fn the_store_works_on_postgres() {
    let Some((_server, url)) = server() else {
        return;
    };
    let store = Store::open(&url).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert!(!store.location().contains("not-a-real-secret"));

    // Round trip.
    let mut run = synthetic(1, 5, 1);
    with_server(&mut run, 42.0);
    record(&store, &run, &["a warning".to_string()]);
    let loaded = store.load(run.meta.id.as_str()).unwrap();
    assert_eq!(loaded.server, run.outcome.server);
    assert_eq!(loaded.summary.meta, run.meta);
    assert_eq!(loaded.summary.status, RunStatus::Completed);
    assert_eq!(loaded.warnings, vec!["a warning".to_string()]);
    assert_same_stats(&loaded.total, &run.outcome.total, "total");
    assert_eq!(loaded.total.lag, run.outcome.total.lag);
    let read = loaded.total.op(OpKind::Read).unwrap();
    assert_eq!(
        read.failed.as_ref().unwrap().service,
        run.outcome
            .total
            .op(OpKind::Read)
            .unwrap()
            .failed
            .as_ref()
            .unwrap()
            .service
    );
    for (i, (l, s)) in loaded.intervals.iter().zip(&run.per_interval).enumerate() {
        assert_same_stats(&l.stats, s, &format!("interval {i}"));
    }
    assert_eq!(
        store.resolve(&run.meta.id.as_str()[..8]).unwrap(),
        run.meta.id
    );

    // Filters and merging of client processes.
    let mut parts = Vec::new();
    for i in 0..2u32 {
        let mut r = synthetic(20 + i as u64, 3, 0);
        r.meta.run_uri = "c0ffee00".into();
        r.meta.client_index = i;
        r.meta.client_count = 2;
        r.meta.labels.insert("experiment".into(), "multi".into());
        record(&store, &r, &[]);
        parts.push(r);
    }
    let multi = store
        .list(&Filter {
            labels: vec![("experiment".into(), "multi".into())],
            ..Filter::default()
        })
        .unwrap();
    assert_eq!(multi.len(), 2);
    let merged = store.load_merged("c0ffee00").unwrap();
    let mut expected = Stats::default();
    for p in &parts {
        expected.add(&p.outcome.total);
    }
    assert_same_stats(&merged.total, &expected, "merged");
    // The views: one row per operation of the whole run, not per client.
    let q = store
        .query(
            "SELECT operation, operations, vm_count FROM performance \
             WHERE run_uri = 'c0ffee00' ORDER BY operation",
        )
        .unwrap();
    let kinds: Vec<_> = merged.total.kinds().collect();
    assert_eq!(q.rows.len(), kinds.len(), "{:?}", q.rows);
    for ((kind, stats), row) in kinds.iter().zip(&q.rows) {
        assert_eq!(row[0], Value::Text(kind.name().to_string()));
        assert_eq!(row[1], Value::Integer(stats.count() as i64));
        assert_eq!(row[2], Value::Integer(2));
    }

    // Concurrent writers, each with its own connection.
    std::thread::scope(|s| {
        for w in 0..4u64 {
            let url = url.clone();
            s.spawn(move || {
                let store = Store::open(&url).unwrap();
                for r in 0..2 {
                    let mut run = synthetic(100 + w * 10 + r, 10, 0);
                    run.meta.labels.insert("writer".into(), w.to_string());
                    record(&store, &run, &[]);
                }
            });
        }
    });
    let q = store
        .query("SELECT COUNT(*) FROM runs r WHERE EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = r.id AND l.key = 'writer')")
        .unwrap();
    assert_eq!(q.rows[0][0], Value::Integer(8));

    // The views, with the same figures as on SQLite.
    let q = store
        .query(&format!(
            "SELECT experiment, operation, target_throughput, fieldlength, vm_count, \
             p99_latency_ms FROM performance WHERE run_id = '{}' ORDER BY operation",
            run.meta.id
        ))
        .unwrap();
    let p99 = sojourn_core::histograms::LatencySummary::of(
        &run.outcome.total.op(OpKind::Read).unwrap().ok.service,
    )
    .p99_us;
    assert_eq!(
        q.rows[0],
        vec![
            Value::Text("latency_test".into()),
            Value::Text("read".into()),
            Value::Real(3000.0),
            Value::Integer(1024),
            Value::Integer(1),
            Value::Real(p99 / 1000.0),
        ]
    );
    let q = store
        .query(&format!(
            "SELECT baseline_monthly_cost_usd, SUM(CAST(1 AS BIGINT)) AS one FROM cost WHERE run_id = '{}' \
             GROUP BY baseline_monthly_cost_usd",
            run.meta.id
        ))
        .unwrap();
    let gb = (1024.0 + 39.0) * 1000.0 / 1073741824.0;
    let Value::Real(c) = q.rows[0][0] else {
        panic!("{q:?}")
    };
    assert!((c - (0.65 * 24.0 * 30.0 + gb * 0.17)).abs() < 1e-9);
    // SUM of integers is NUMERIC in PostgreSQL; it still reads back.
    assert_eq!(q.rows[0][1], Value::Real(1.0));

    // Read-only: refused before running, and by the server.
    assert!(matches!(
        store.query("DELETE FROM runs"),
        Err(StoreError::ReadOnly(_))
    ));
    let e = store
        .query("WITH gone AS (DELETE FROM runs RETURNING id) SELECT COUNT(*) FROM gone")
        .unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");
    let ro = Store::open_read_only(&url).unwrap();
    assert_eq!(ro.list(&Filter::default()).unwrap().len(), 11);
    // The store still writes after a refused query.
    record(&store, &synthetic(9, 1, 0), &[]);
}

#[test]
fn a_new_store_opened_by_many_at_once_on_postgres_keeps_every_run() {
    let Some((_server, url)) = server() else {
        return;
    };
    let connections = 8;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let admin = rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
    });
    let server_url = url.rsplit_once('/').unwrap().0;
    for round in 0..5 {
        // A database of its own each time: the schema is created by
        // whichever connection gets there first.
        let db = format!("fresh{round}");
        rt.block_on(admin.batch_execute(&format!("CREATE DATABASE {db}")))
            .unwrap();
        let url = format!("{server_url}/{db}");
        let start = std::sync::Barrier::new(connections);
        let errors: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..connections)
                .map(|c| {
                    let (start, url) = (&start, &url);
                    s.spawn(move || -> Result<(), StoreError> {
                        let run = synthetic((round * connections + c) as u64, 2, 0);
                        start.wait();
                        let store = Store::open(url)?;
                        try_record(&store, &run, &[])
                    })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|h| h.join().unwrap().err().map(|e| e.to_string()))
                .collect()
        });
        assert!(errors.is_empty(), "round {round}: {errors:#?}");
        let store = Store::open(&url).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        let runs = store.list(&Filter::default()).unwrap();
        assert_eq!(runs.len(), connections, "round {round}");
        assert!(runs.iter().all(|r| r.status == RunStatus::Completed));
    }
}

#[test]
fn a_spooled_run_imports_into_postgres() {
    let Some((_server, url)) = server() else {
        return;
    };
    let store = Store::open(&url).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut run = synthetic(11, 4, 1);
    with_server(&mut run, 7.0);
    // The store took the start and one interval; a spool file the rest.
    store.begin_run(&run.meta).unwrap();
    store
        .write_interval(&run.meta.id, &run.intervals[0])
        .unwrap();
    let spool = sojourn_store::Spool::create(dir.path(), &run.meta, 1).unwrap();
    for iv in &run.intervals[1..] {
        spool.store().write_interval(&run.meta.id, iv).unwrap();
    }
    spool
        .store()
        .finish_run(&run.meta.id, &run.outcome, RunStatus::Completed, &[])
        .unwrap();
    spool.close().unwrap();
    let done = store.import_spool(dir.path());
    assert!(done.failed.is_empty(), "{:?}", done.failed);
    assert_eq!(done.imported.len(), 1);

    let loaded = store.load(run.meta.id.as_str()).unwrap();
    assert_eq!(loaded.summary.meta, run.meta);
    assert_eq!(loaded.summary.status, RunStatus::Completed);
    assert_eq!(loaded.server, run.outcome.server);
    assert_same_stats(&loaded.total, &run.outcome.total, "total");
    assert_eq!(loaded.intervals.len(), 4);
    for (i, (l, s)) in loaded.intervals.iter().zip(&run.per_interval).enumerate() {
        assert_same_stats(&l.stats, s, &format!("interval {i}"));
    }
}

#[test]
fn a_stalled_postgres_store_is_given_up_on_after_its_wait() {
    let Some(pg) = sojourn_testkit::postgres_server::Postgres::start() else {
        return;
    };
    let wait = std::time::Duration::from_millis(500);
    let store = Store::open_waiting(&pg.url(), wait).unwrap();
    let run = synthetic(12, 2, 0);
    // A server that stops answering (every process of it frozen) holds
    // the run's records no longer than the store's wait.
    pg.pause();
    let asked = std::time::Instant::now();
    let e = store.begin_run(&run.meta).unwrap_err();
    let waited = asked.elapsed();
    pg.resume();
    assert!(e.to_string().contains("no answer within"), "{e}");
    assert!(waited >= wait, "{waited:?}");
    // Once it answers again, the same connection stores the run.
    record(&store, &run, &[]);
    assert_eq!(
        store.load(run.meta.id.as_str()).unwrap().summary.status,
        RunStatus::Completed
    );
}

/// A store on a server that takes TLS connections only: `sslmode` as the
/// PostgreSQL backend reads it (`verify-full` with the server's CA
/// certificate connects; a clear connection is refused by the server;
/// `verify-ca` without `sslrootcert` is refused before connecting, naming
/// it), and the store's password from its own variable, which wins over
/// `$PGPASSWORD` (an agent's may be the measured database's).
#[test]
fn a_store_over_tls_with_a_password_of_its_own() {
    use sojourn_testkit::postgres_server::{self as pg, Postgres};
    let Some(server) = Postgres::start_tls() else {
        return;
    };
    let ca = server.ca_cert();
    let plain = server.url_without_password();
    let url = format!("{plain}?sslmode=verify-full&sslrootcert={}", ca.display());
    // SAFETY: this test's own variables; the other tests give their
    // stores' passwords in the URL and read neither.
    unsafe {
        std::env::set_var("PGPASSWORD", "not-the-store's");
        std::env::set_var("SOJOURN_RESULTS_PASSWORD", pg::PASSWORD);
    }
    let store = Store::open(&url).unwrap_or_else(|e| panic!("{e}"));
    let run = synthetic(4, 1, 0);
    record(&store, &run, &[]);
    assert_eq!(store.list(&Filter::default()).unwrap().len(), 1);
    let e = Store::open(&format!("{plain}?sslmode=disable"))
        .err()
        .expect("a clear connection to a TLS-only server");
    assert!(
        e.to_string().contains("no encryption") || e.to_string().contains("pg_hba"),
        "{e}"
    );
    let e = Store::open(&format!("{plain}?sslmode=verify-ca"))
        .err()
        .expect("verify-ca without a CA");
    assert!(e.to_string().contains("sslrootcert=PATH"), "{e}");
    let e = Store::open(&format!("{plain}?sslmode=strict"))
        .err()
        .expect("an unknown sslmode");
    assert!(e.to_string().contains("verify-full"), "{e}");
    assert!(!e.to_string().contains(pg::PASSWORD), "{e}");
}

/// A store whose database the server does not have yet is created on
/// first open, owned by the store's user, by eight openers at once as by
/// agents started together (each finds the one that the first made);
/// opening to read creates nothing; a user who may not create databases
/// is told the one statement a superuser runs, and never the password.
#[test]
fn a_missing_store_database_is_created_or_the_statement_to_run_said() {
    use sojourn_testkit::postgres_server::Postgres;
    let Some(pg) = Postgres::start() else {
        return;
    };
    pg.psql(
        "CREATE ROLE maker LOGIN CREATEDB PASSWORD 'maker-s3cret';\n\
         CREATE ROLE plain LOGIN PASSWORD 'plain-s3cret';\n",
    );
    let url = |user: &str, db: &str| {
        format!(
            "postgres://{user}:{user}-s3cret@127.0.0.1:{}/{db}",
            pg.port()
        )
    };
    let exists = |db: &str| {
        pg.psql(&format!(
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '{db}'"
        ))
        .trim()
        .to_string()
    };
    // A name that must be quoted as an identifier.
    let store_url = url("maker", "Results-1");
    let openers: Vec<_> = (0..8)
        .map(|_| {
            let u = store_url.clone();
            std::thread::spawn(move || Store::open(&u).map(|s| s.schema_version().unwrap()))
        })
        .collect();
    for o in openers {
        let opened = o.join().unwrap();
        assert_eq!(opened.unwrap_or_else(|e| panic!("{e}")), SCHEMA_VERSION);
    }
    assert_eq!(exists("Results-1"), "maker");
    let store = Store::open(&store_url).unwrap();
    record(&store, &synthetic(5, 1, 0), &[]);
    assert_eq!(store.list(&Filter::default()).unwrap().len(), 1);

    // Reading never creates (`results query` on a store not there).
    let e = Store::open_read_only(&url("maker", "absent"))
        .err()
        .expect("no such database to read");
    assert!(e.to_string().contains("does not exist"), "{e}");
    assert_eq!(exists("absent"), "");

    // No CREATEDB: the statement to run as a superuser, and that
    // statement makes the store work.
    let e = Store::open(&url("plain", "results"))
        .err()
        .expect("plain may not create databases");
    let said = e.to_string();
    assert!(
        said.contains("database \"results\" does not exist, and user \"plain\" may not create it")
            && said.contains("as a superuser, run CREATE DATABASE results OWNER plain;"),
        "{said}"
    );
    assert!(!said.contains("plain-s3cret"), "{said}");
    assert_eq!(exists("results"), "");
    pg.psql("CREATE DATABASE results OWNER plain;");
    let store = Store::open(&url("plain", "results")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
}

/// The coordination tables on a real server: agents register and
/// heartbeat; a posted phase's shares are claimed once each, never two of
/// one phase by one agent, never by an agent of another version; shares
/// move through their states only for the incarnation that holds them;
/// a share given up is lost (or cancelled when unclaimed); a stage kept
/// whole without a client says what is missing, and a client index with
/// two runs counts once.
#[test]
fn agents_meet_through_the_store() {
    use sojourn_store::{AgentInfo, PostedPhase, ShareReport, ShareState};
    let Some((_server, url)) = server() else {
        return;
    };
    let store = Store::open(&url).unwrap();
    let agent = |name: &str, version: &str| AgentInfo {
        name: name.into(),
        incarnation: format!("{name}-1"),
        host: format!("{name}.example"),
        pid: 1,
        cores: 2,
        version: version.into(),
    };
    let (a, b, old) = (
        agent("a", "0.1.0"),
        agent("b", "0.1.0"),
        agent("old", "0.0.9"),
    );
    for x in [&a, &b, &old] {
        store.register_agent(x).unwrap();
    }
    let hb = store.agent_heartbeat(&a, "idle", Some(-250.0)).unwrap();
    assert!(!hb.stop_requested && !hb.replaced);
    let listed = store.agents().unwrap();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[0].clock_offset_us, Some(-250.0));
    assert!(listed[0].heartbeat_age_s < 5.0, "{listed:?}");
    let specs: Vec<String> = (0..3).map(|i| format!("{{\"share\":{i}}}")).collect();
    store
        .post_phase(&PostedPhase {
            id: "ph1",
            coordinator: "laptop 42",
            version: "0.1.0",
            run_uri: "abcd0123",
            stage_index: 1,
            phase: "run",
            specs: &specs,
        })
        .unwrap();
    // Another version claims nothing, and sees the phase it leaves.
    assert_eq!(store.claim_share(&old).unwrap(), None);
    assert_eq!(
        store.foreign_phases("0.0.9").unwrap(),
        [("ph1".to_string(), "0.1.0".to_string())]
    );
    let ca = store.claim_share(&a).unwrap().unwrap();
    assert_eq!(
        (ca.index, ca.shares, ca.spec.as_str()),
        (0, 3, "{\"share\":0}")
    );
    // One share of a phase per agent.
    assert_eq!(store.claim_share(&a).unwrap(), None);
    let cb = store.claim_share(&b).unwrap().unwrap();
    assert_eq!(cb.index, 1);
    // Only the holder moves a share.
    assert!(!store.share_ready("ph1", 0, "b-1").unwrap());
    assert!(store.share_ready("ph1", 0, "a-1").unwrap());
    assert!(store.share_ready("ph1", 1, "b-1").unwrap());
    let start = store.start_phase("ph1", 0.5).unwrap();
    let now = store.server_clock().unwrap();
    assert!((start - now - 0.5).abs() < 0.4, "{start} {now}");
    let signal = store.phase_signal("ph1").unwrap();
    assert_eq!(
        (signal.state.as_str(), signal.start_unix),
        ("running", Some(start))
    );
    assert!(store.share_running("ph1", 0, "a-1").unwrap());
    // Two runs of client 0 (a restarted agent's first, failed; its
    // share's), one of client 1 that completed.
    let mut runs = Vec::new();
    for (client, complete) in [(0u32, false), (0, true), (1, true)] {
        let mut r = common::synthetic(40 + runs.len() as u64, 2, 0);
        r.meta.run_uri = "abcd0123".into();
        r.meta.phase = "run".into();
        r.meta.stage_index = 1;
        r.meta.client_index = client;
        r.meta.client_count = 3;
        if complete {
            record(&store, &r, &[]);
        } else {
            let id = store.begin_run(&r.meta).unwrap();
            store.fail_run(&id, "killed").unwrap();
        }
        runs.push(r);
    }
    fn report(id: &str) -> ShareReport<'_> {
        ShareReport {
            run_id: id,
            start_lateness_us: Some(120.0),
            clock_offset_us: Some(-250.0),
        }
    }
    assert!(store
        .share_done("ph1", 0, "a-1", &report(runs[1].meta.id.as_str()))
        .unwrap());
    // Share 2 was never claimed; share 1's agent went silent.
    assert!(store
        .give_up_share("ph1", 2, "no agent claimed it")
        .unwrap());
    assert!(store
        .give_up_share("ph1", 1, "agent b went silent")
        .unwrap());
    assert!(!store
        .share_done("ph1", 1, "b-1", &report(runs[2].meta.id.as_str()))
        .unwrap());
    let shares = store.phase_shares("ph1").unwrap();
    let states: Vec<ShareState> = shares.iter().map(|s| s.state).collect();
    assert_eq!(
        states,
        [ShareState::Done, ShareState::Lost, ShareState::Cancelled]
    );
    assert_eq!(shares[0].start_lateness_us, Some(120.0));
    assert_eq!(shares[1].agent.as_deref(), Some("b"));
    assert!(shares[1].agent_age_s.is_some());
    // The stage kept whole from what is there, saying what is missing;
    // the failed first run of client 0 never counts.
    let missing = "client 2 of 3: no agent claimed it";
    store
        .keep_whole(
            "abcd0123",
            "run",
            1,
            &[runs[1].meta.id.clone(), runs[2].meta.id.clone()],
            3,
            Some(missing),
        )
        .unwrap();
    let whole = store.load_merged("abcd0123").unwrap();
    let ops: u64 = [&runs[1], &runs[2]]
        .iter()
        .map(|r| r.outcome.total.kinds().map(|(_, s)| s.count()).sum::<u64>())
        .sum();
    assert_eq!(
        whole.total.kinds().map(|(_, s)| s.count()).sum::<u64>(),
        ops
    );
    assert!(
        whole
            .warnings
            .iter()
            .any(|w| w == &format!("partial run: {missing}")),
        "{:?}",
        whole.warnings
    );
    store.end_phase("ph1", "done", Some(missing)).unwrap();
    assert_eq!(store.phase_signal("ph1").unwrap().state, "done");
    // A stop request reaches the agent's next heartbeat; a newer
    // incarnation of its name replaces it.
    let alive = std::time::Duration::from_secs(600);
    assert_eq!(store.request_agents_stop(Some("a"), alive).unwrap(), 1);
    assert!(
        store
            .agent_heartbeat(&a, "idle", None)
            .unwrap()
            .stop_requested
    );
    let mut again = a.clone();
    again.incarnation = "a-2".into();
    store.register_agent(&again).unwrap();
    assert!(store.agent_heartbeat(&a, "idle", None).unwrap().replaced);
    assert!(
        !store
            .agent_heartbeat(&again, "idle", None)
            .unwrap()
            .stop_requested
    );
    // An agent that exits is gone, and a stop neither asks nor counts it;
    // saying so for an incarnation replaced since changes nothing.
    store.agent_gone(&a).unwrap();
    let state = |name: &str, within| {
        let listed = store.agents().unwrap();
        let ag = listed.iter().find(|x| x.name == name).unwrap();
        ag.state_within(within).to_string()
    };
    assert_eq!(state("a", alive), "idle");
    store.agent_gone(&again).unwrap();
    assert_eq!(state("a", alive), AGENT_GONE);
    assert_eq!(store.request_agents_stop(Some("a"), alive).unwrap(), 0);
    assert_eq!(store.request_agents_stop(None, alive).unwrap(), 2, "b, old");
    // One whose heartbeat is older than the liveness limit is gone too.
    let never = std::time::Duration::ZERO;
    assert_eq!(state("b", never), AGENT_GONE);
    assert_eq!(store.request_agents_stop(None, never).unwrap(), 0);
    // A SQLite store is no meeting point.
    let dir = tempfile::tempdir().unwrap();
    let local = Store::open(dir.path().join("r.sqlite").to_str().unwrap()).unwrap();
    let e = local.require_shared().unwrap_err().to_string();
    assert!(e.contains("PostgreSQL results store"), "{e}");
}
