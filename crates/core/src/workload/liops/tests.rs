//! Tests of the LIOPS workload: its settings, load order, operations and
//! in-server loop.

use std::time::Duration;

use crate::generator::rng_for;
use crate::properties::Properties;
use crate::workload::phase::Phase;

use super::worker::*;
use super::*;

fn props(pairs: &[&str]) -> Properties {
    let mut p = Properties::new();
    for kv in pairs {
        p.set_arg(kv).unwrap();
    }
    p
}

#[test]
fn defaults_are_pgio_conf() {
    let c = LiopsConfig::from_properties(&Properties::new()).unwrap();
    assert_eq!((c.update_pct, c.schemas, c.threads_per_schema), (0, 4, 1));
    assert_eq!(
        (c.work_unit, c.update_work_unit, c.scale),
        (255, 8, 131_072)
    );
    assert_eq!(c.tables(), ["pgio1", "pgio2", "pgio3", "pgio4"]);
    assert_eq!(c.run_sessions(), 4);
}

#[test]
fn a_load_counts_rows_not_batches() {
    // 2 tables of 2,500 rows in batches of 1,000: per table 1,000 +
    // 1,000 + 500.
    let c = LiopsConfig::from_properties(&props(&[
        "SCALE=2500",
        "NUM_SCHEMAS=2",
        "WORK_UNIT=10",
        "liops.batch=1000",
    ]))
    .unwrap();
    assert_eq!(c.load_batches(), 6);
    assert_eq!(c.rows_in_batches(6), 5000);
    assert_eq!(c.rows_in_batches(0), 0);
    assert_eq!(c.rows_in_batches(4), 4000);
    assert_eq!(c.rows_in_batches(5), 4500);
    // PGIO's own sizes: one batch per table.
    let c = LiopsConfig::from_properties(&props(&["SCALE=2000", "NUM_SCHEMAS=4"])).unwrap();
    assert_eq!((c.load_batches(), c.rows_in_batches(4)), (4, 8000));
}

#[test]
fn scale_reads_rows_or_sizes() {
    assert_eq!(parse_scale("1000000"), Ok(1_000_000));
    assert_eq!(parse_scale("1G"), Ok(131_072));
    assert_eq!(parse_scale("64m"), Ok(8192));
    assert_eq!(parse_scale("1TB"), Ok(134_217_728));
    assert_eq!(parse_scale("8K"), Ok(1));
    for bad in ["", "G", "1X", "-5", "0", "4K", "99999999999T"] {
        let e = parse_scale(bad).unwrap_err();
        assert!(e.contains("expected a row count"), "{bad}: {e}");
    }
}

#[test]
fn bad_properties_name_the_key_and_what_is_accepted() {
    for (kv, key, says) in [
        ("UPDATE_PCT=101", "UPDATE_PCT", "0 to 100"),
        (
            "UPDATE_PCT=abc",
            "UPDATE_PCT",
            "a whole number from 0 to 100",
        ),
        (
            "UPDATE_PCT=-1",
            "UPDATE_PCT",
            "a whole number from 0 to 100",
        ),
        ("NUM_SCHEMAS=0", "NUM_SCHEMAS", "1 to 1000"),
        ("NUM_THREADS=x", "NUM_THREADS", "from 1 to 10000"),
        ("liops.batch=0", "liops.batch", "from 1 to 1000000"),
        (
            "CREATE_BASE_TABLE=yes",
            "CREATE_BASE_TABLE",
            "true or false",
        ),
        ("SCALE=200", "SCALE", "more rows than WORK_UNIT"),
        ("RUN_TIME=0", "RUN_TIME", "above 0"),
        ("liops.table=1x", "liops.table", "not starting with a digit"),
        ("liops.table=a;b", "liops.table", "letters, digits"),
    ] {
        let e = LiopsConfig::from_properties(&props(&[kv])).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(key) && text.contains(says), "{kv}: {text}");
    }
}

#[test]
fn permutation_is_a_bijection_that_scatters_neighbours() {
    for n in [1u64, 2, 3, 7, 1000, 4097] {
        let p = Permutation::new(n, 42);
        let mut seen = vec![false; n as usize];
        for i in 0..n {
            let x = p.at(i);
            assert!(x < n && !seen[x as usize], "n={n} i={i} x={x}");
            seen[x as usize] = true;
        }
    }
    // Consecutive positions rarely hold consecutive keys.
    let p = Permutation::new(100_000, 7);
    let adjacent = (0..99_999)
        .filter(|&i| p.at(i).abs_diff(p.at(i + 1)) == 1)
        .count();
    assert!(adjacent < 20, "{adjacent} neighbours stayed neighbours");
    assert_ne!(
        (0..10).map(|i| p.at(i)).collect::<Vec<_>>(),
        (0..10)
            .map(|i| Permutation::new(100_000, 8).at(i))
            .collect::<Vec<_>>()
    );
}

#[test]
fn load_batches_cover_every_key_of_every_table_once() {
    let cfg = LiopsConfig::from_properties(&props(&[
        "NUM_SCHEMAS=2",
        "SCALE=1000",
        "WORK_UNIT=10",
        "liops.batch=300",
    ]))
    .unwrap();
    let shared = LiopsShared::new(cfg.clone(), 3);
    assert_eq!(cfg.load_batches(), 8);
    let mut rng = rng_for(1, 1);
    let mut keys = vec![Vec::new(); 2];
    let mut rows = Vec::new();
    for b in 0..cfg.load_batches() {
        let t = shared.batch(b, &mut rng, &mut rows);
        keys[t].extend(rows.iter().map(|r| r.key));
    }
    for k in &mut keys {
        assert_ne!(k[..5], [1, 2, 3, 4, 5], "the load order is shuffled");
        k.sort_unstable();
        assert_eq!(*k, (1..=1000).collect::<Vec<u64>>());
    }
}

#[test]
fn updates_follow_the_quota_and_ranges_stay_inside_the_table() {
    for pct in [0u32, 1, 20, 50, 100] {
        let cfg = LiopsConfig::from_properties(&props(&[
            &format!("UPDATE_PCT={pct}"),
            "SCALE=500",
            "WORK_UNIT=100",
            "UPDATE_WORK_UNIT=8",
        ]))
        .unwrap();
        let shared = LiopsShared::new(cfg, 1);
        let mut w = shared.worker(Phase::Run, 5, 0);
        let ops: Vec<LiopsOp> = (0..1000).map(|_| w.next_operation()).collect();
        let updates = ops
            .iter()
            .filter(|o| matches!(o, LiopsOp::Update { .. }))
            .count();
        assert_eq!(updates, 10 * pct as usize, "UPDATE_PCT={pct}");
        for o in ops {
            match o {
                LiopsOp::Select { lo, hi } => {
                    assert!(lo >= 1 && hi <= 500 && hi - lo == 100, "{o:?}")
                }
                LiopsOp::Update { lo, hi } => {
                    assert!(lo >= 1 && hi <= 500 && hi - lo == 8, "{o:?}")
                }
            }
        }
    }
}

#[test]
fn the_loop_is_the_clients_unless_set() {
    let c = LiopsConfig::from_properties(&Properties::new()).unwrap();
    assert_eq!(c.loop_in, LoopIn::Client);
    assert!(c.refuse_server_loop("mysql://h/db").is_ok());
    for v in ["server", "SERVER", " server "] {
        let c = LiopsConfig::from_properties(&props(&[&format!("liops.loop={v}")])).unwrap();
        assert_eq!(c.loop_in, LoopIn::Server, "{v}");
    }
    let c = LiopsConfig::from_properties(&props(&["liops.loop=client"])).unwrap();
    assert_eq!(c.loop_in, LoopIn::Client);
    let e = LiopsConfig::from_properties(&props(&["liops.loop=both"]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("liops.loop") && e.contains("client") && e.contains("server"),
        "{e}"
    );
}

#[test]
fn a_backend_without_a_server_loop_names_the_property_and_the_choice() {
    let c = LiopsConfig::from_properties(&props(&["liops.loop=server"])).unwrap();
    let e = c
        .refuse_server_loop("mysql://u@h/db")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("liops.loop = 'server'")
            && e.contains("mysql://u@h/db has no in-server loop")
            && e.contains("accepted here: liops.loop=client"),
        "{e}"
    );
}

#[test]
fn the_server_loop_takes_no_rate() {
    let p = props(&["liops.loop=server", "target=100"]);
    let c = LiopsConfig::from_properties(&p).unwrap();
    let e = c
        .check_server_loop(&p, Some("target"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("liops.loop = 'server'") && e.contains("target = '100'"),
        "{e}"
    );
    c.check_server_loop(&p, None).unwrap();
    // The client loop paces its statements.
    let p = props(&["target=100"]);
    let c = LiopsConfig::from_properties(&p).unwrap();
    c.check_server_loop(&p, Some("target")).unwrap();
}

#[test]
fn operationcount_is_shared_out_over_the_sessions_exactly() {
    let c = LiopsConfig::from_properties(&props(&["NUM_SCHEMAS=2", "NUM_THREADS=2"])).unwrap();
    let shares: Vec<u64> = (0..4).map(|i| c.share_of(10, i)).collect();
    assert_eq!(shares, [3, 3, 2, 2]);
    assert_eq!((0..4).map(|i| c.share_of(3, i)).sum::<u64>(), 3);
    let shared = LiopsShared::with_server_loop(
        c,
        9,
        ServerRun {
            duration: Some(Duration::from_secs(2)),
            warmup: Duration::ZERO,
            operation_count: Some(10),
        },
    );
    let w = shared.worker(Phase::Run, 9, 1);
    let spec = w.server.as_ref().unwrap();
    assert_eq!(spec.max_statements, Some(3));
    assert!((-1.0..1.0).contains(&spec.seed));
    assert_ne!(
        shared.worker(Phase::Run, 9, 0).server.unwrap().seed,
        spec.seed
    );
    // The load sends its batches from the client either way.
    assert!(shared.worker(Phase::Load, 9, 1).server.is_none());
}

#[test]
fn an_outcome_is_consistent_when_its_times_count_its_statements() {
    let timed = |update, ok, count| ServerTimed {
        update,
        ok,
        ns: 1000,
        count,
    };
    let mut o = ServerLoopOutcome {
        loop_iterations: 10,
        sql_selects: 6,
        sql_updates: 3,
        times: vec![
            timed(false, true, 4),
            timed(false, true, 2),
            timed(true, true, 3),
        ],
    };
    assert!(!o.consistent(), "one statement untimed");
    o.times.push(timed(true, false, 1));
    assert!(o.consistent());
    o.sql_updates = 4;
    assert!(!o.consistent());
}

#[test]
fn sessions_are_dealt_to_tables_in_turn() {
    let cfg = LiopsConfig::from_properties(&props(&["NUM_SCHEMAS=3", "NUM_THREADS=2"])).unwrap();
    assert_eq!(cfg.run_sessions(), 6);
    let shared = LiopsShared::new(cfg, 0);
    let tables: Vec<String> = (0..6)
        .map(|i| shared.worker(Phase::Run, 0, i).table().to_string())
        .collect();
    assert_eq!(
        tables,
        ["pgio1", "pgio2", "pgio3", "pgio1", "pgio2", "pgio3"]
    );
}
