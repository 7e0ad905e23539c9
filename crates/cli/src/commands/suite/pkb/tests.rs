//! The mapping of PKB's flags, checked flag by flag.

use std::collections::BTreeSet;

use sojourn_session::share::{split, split_rate};

use super::*;
use crate::commands::suite::folder::Flag;

fn flags(pairs: &[(&str, &str)]) -> Flags {
    pairs
        .iter()
        .enumerate()
        .map(|(i, (k, v))| {
            (
                k.to_string(),
                Flag {
                    value: v.to_string(),
                    origin: FlagOrigin::File {
                        file: "t.yaml".into(),
                        line: i + 1,
                    },
                },
            )
        })
        .collect()
}

fn plan(pairs: &[(&str, &str)]) -> Result<BenchPlan> {
    let dir = tempfile::tempdir().unwrap();
    let mut next = 100u64;
    let mut seed = || {
        next += 1000;
        next
    };
    map(
        &flags(pairs),
        &mut MapContext {
            dir: dir.path(),
            suite: "s",
            file: "t.yaml",
            benchmark: "cloud_bigtable_ycsb",
            db: None,
            seed: &mut seed,
        },
    )
}

fn prop(r: &Recipe, key: &str) -> Option<String> {
    r.properties().unwrap().get(key).map(str::to_string)
}

#[test]
fn walkthrough_flags_map_onto_properties() {
    let p = plan(&[
        ("machine_type", "n1-highcpu-16"),
        ("num_vms", "4"),
        ("bigtable_node_count", "3"),
        ("ycsb_field_count", "1"),
        ("ycsb_field_length", "1024"),
        ("ycsb_record_count", "1001"),
        (
            "ycsb_run_parameters",
            "target=6000,readallfields=false,requestdistribution=zipfian",
        ),
        ("ycsb_threads_per_client", "32"),
        ("ycsb_operation_count", "2147483647"),
        ("ycsb_timelimit", "600"),
        ("ycsb_workload_files", "workloada"),
        ("metadata", "experiment:throughput_test"),
        ("sojourn_db", "null:"),
    ])
    .unwrap();
    assert_eq!(p.labels["vm_count"], "4");
    assert_eq!(p.db_url, "null:");
    assert_eq!(p.labels["experiment"], "throughput_test");
    assert_eq!(p.labels["machine_type"], "n1-highcpu-16");
    assert_eq!(p.labels["bigtable_node_count"], "3");
    let unused: Vec<&str> = p.unused.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(unused, ["bigtable_node_count", "machine_type"]);

    let load = p.load.as_ref().unwrap();
    assert_eq!(load.clients.len(), 4);
    // 1001 records over 4 clients: 251 + 250 + 250 + 250, contiguous.
    let ranges: Vec<(String, String)> = load
        .clients
        .iter()
        .map(|c| {
            (
                prop(c, "insertstart").unwrap(),
                prop(c, "insertcount").unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ranges,
        [
            ("0".into(), "251".into()),
            ("251".into(), "250".into()),
            ("501".into(), "250".into()),
            ("751".into(), "250".into())
        ]
    );
    assert_eq!(prop(&load.clients[0], "threadcount").unwrap(), "32");
    assert_eq!(prop(&load.clients[0], "fieldcount").unwrap(), "1");
    assert_eq!(prop(&load.clients[0], "fieldlength").unwrap(), "1024");
    assert_eq!(prop(&load.clients[0], "recordcount").unwrap(), "1001");

    assert_eq!(p.runs.len(), 1);
    let run = &p.runs[0];
    assert_eq!(run.labels["stage"], "run");
    assert_eq!(run.labels["workload_name"], "workloada");
    assert_eq!(run.labels["threads_per_client_vm"], "32");
    assert_eq!(run.labels["clients"], "128");
    // target=6000 is per VM: 4 clients offer 24000 in total.
    assert_eq!(run.target_total, Some(24000.0));
    for c in &run.clients {
        assert_eq!(prop(c, "target").unwrap(), "6000");
        assert_eq!(prop(c, "operationcount").unwrap(), "2147483647");
        assert_eq!(prop(c, "maxexecutiontime").unwrap(), "600");
        assert_eq!(prop(c, "readallfields").unwrap(), "false");
        assert_eq!(prop(c, "requestdistribution").unwrap(), "zipfian");
    }
    // Every client draws its own stream.
    let seeds: BTreeSet<String> = run
        .clients
        .iter()
        .map(|c| prop(c, "seed").unwrap())
        .collect();
    assert_eq!(seeds.len(), 4);
}

#[test]
fn staircase_with_rates_and_total_target() {
    let p = plan(&[
        ("ycsb_threads_per_client", "1:100,8:250"),
        ("ycsb_client_vms", "2"),
        ("ycsb_workload_files", "workloadc,workloadb"),
        ("ycsb_skip_load_stage", "true"),
        ("sojourn_db", "null:"),
    ])
    .unwrap();
    assert!(p.load.is_none());
    assert_eq!(p.runs.len(), 4);
    let got: Vec<(usize, u64, Option<f64>)> = p
        .runs
        .iter()
        .map(|s| (s.workload_index, s.threads_per_client, s.target_total))
        .collect();
    assert_eq!(
        got,
        [
            (0, 1, Some(200.0)),
            (0, 8, Some(500.0)),
            (1, 1, Some(200.0)),
            (1, 8, Some(500.0))
        ]
    );
    assert_eq!(prop(&p.runs[1].clients[1], "target").unwrap(), "250");
    // PKB's default time limit and field count apply.
    assert_eq!(
        prop(&p.runs[0].clients[0], "maxexecutiontime").unwrap(),
        "1800"
    );
    assert_eq!(prop(&p.runs[0].clients[0], "fieldcount").unwrap(), "10");

    let p = plan(&[
        ("ycsb_target_qps", "1001"),
        ("num_vms", "2"),
        ("ycsb_skip_load_stage", "true"),
        ("sojourn_db", "null:"),
    ])
    .unwrap();
    let t: Vec<String> = p.runs[0]
        .clients
        .iter()
        .map(|c| prop(c, "target").unwrap())
        .collect();
    assert_eq!(t, ["501", "500"]);
    assert_eq!(p.runs[0].target_total, Some(1001.0));
    // Default workload files: workloada and workloadb.
    assert_eq!(p.runs.len(), 2);
}

#[test]
fn bad_values_name_the_flag_and_where_it_was_set() {
    let e = plan(&[("ycsb_field_count", "ten")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.yaml:1"), "{e}");
    assert!(e.contains("ycsb_field_count"), "{e}");
    assert!(e.contains("accepted"), "{e}");

    let e = plan(&[("ycsb_threads_per_client", "4:x")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("threads:qps_per_vm"), "{e}");

    let e = plan(&[("ycsb_workload_files", "workloadz")]).unwrap_err();
    let e = format!("{e:#}");
    assert!(e.contains("workloadz"), "{e}");
    assert!(e.contains("workloada"), "{e}");

    let e = format!(
        "{:#}",
        plan(&[("ycsb_run_parameters", "readproportion=2")]).unwrap_err()
    );
    assert!(e.contains("t.yaml:1 (ycsb_run_parameters)"), "{e}");
    assert!(e.contains("readproportion"), "{e}");

    let e = plan(&[("ycsb_dynamic_load", "true")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("sojourn capacity"), "{e}");
    assert!(plan(&[("ycsb_dynamic_load", "false")]).is_ok());

    let e = plan(&[("num_vms", "2"), ("sojourn_db", "memory:")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory:"), "{e}");

    let e = plan(&[
        ("ycsb_run_parameters", "target=5"),
        ("ycsb_threads_per_client", "2:10"),
    ])
    .unwrap_err()
    .to_string();
    assert!(e.contains("mutually exclusive"), "{e}");
}

#[test]
fn parameters_unknown_keys_and_zero_target() {
    let p = plan(&[
        (
            "ycsb_run_parameters",
            "target=0,threads=3,readalfields=false",
        ),
        ("ycsb_load_parameters", "threads=2"),
        ("ycsb_record_count", "10"),
        ("sojourn_db", "null:"),
    ])
    .unwrap();
    let run = &p.runs[0].clients[0];
    assert_eq!(prop(run, "target"), None);
    assert_eq!(prop(run, "threadcount").unwrap(), "3");
    assert_eq!(p.runs[0].target_total, None);
    assert_eq!(
        prop(&p.load.as_ref().unwrap().clients[0], "threadcount").unwrap(),
        "2"
    );
    assert!(
        p.unknown_properties
            .iter()
            .any(|u| u.contains("readalfields")),
        "{:?}",
        p.unknown_properties
    );
    // A seed in the parameters is the stage's: client i gets seed + i.
    let p = plan(&[
        ("ycsb_run_parameters", "seed=42"),
        ("num_vms", "3"),
        ("sojourn_db", "null:"),
        ("ycsb_skip_load_stage", "true"),
    ])
    .unwrap();
    let seeds: Vec<String> = p.runs[0]
        .clients
        .iter()
        .map(|c| prop(c, "seed").unwrap())
        .collect();
    assert_eq!(seeds, ["42", "43", "44"]);
}

#[test]
fn db_from_the_command_line_wins_and_folder_paths_are_relative_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut seed = || 1u64;
    let f = flags(&[
        ("sojourn_db", "sqlite:x.sqlite"),
        ("ycsb_skip_load_stage", "true"),
    ]);
    let mut ctx = MapContext {
        dir: dir.path(),
        suite: "s",
        file: "t.yaml",
        benchmark: "b_ycsb",
        db: None,
        seed: &mut seed,
    };
    let p = map(&f, &mut ctx).unwrap();
    assert_eq!(
        p.db_url,
        format!("sqlite:{}", dir.path().join("x.sqlite").display())
    );
    ctx.db = Some("null:");
    assert_eq!(map(&f, &mut ctx).unwrap().db_url, "null:");
    // On the command line (--flag), a relative path stays as given.
    let mut f = f.clone();
    f.get_mut("sojourn_db").unwrap().origin = FlagOrigin::CommandLine;
    ctx.db = None;
    assert_eq!(map(&f, &mut ctx).unwrap().db_url, "sqlite:x.sqlite");
}

#[test]
fn keyvalue_stages_run_on_one_client() {
    for (flag, skip) in [
        ("num_vms", "ycsb_skip_run_stage"),
        ("ycsb_client_vms", "ycsb_skip_load_stage"),
    ] {
        let e = plan(&[
            ("ycsb_workload_files", "keyvalue"),
            (flag, "2"),
            (skip, "true"),
            ("sojourn_db", "null:"),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(&format!("t.yaml:2 ({flag})")) && e.contains("set num_vms: 1"),
            "{e}"
        );
    }
    let p = plan(&[
        ("ycsb_workload_files", "keyvalue"),
        ("num_vms", "1"),
        ("sojourn_db", "null:"),
    ])
    .unwrap();
    // The writer and reader pools' connections, not the staircase's.
    assert_eq!(p.runs[0].threads_per_client, 10);
    assert_eq!(p.runs[0].plan.schema.table, "keyvalue");
    // PKB's defaults for YCSB's fieldcount and -threads are left out.
    for c in [&p.load.as_ref().unwrap().clients[0], &p.runs[0].clients[0]] {
        assert_eq!(prop(c, "fieldcount"), None);
        assert_eq!(prop(c, "threadcount"), None);
    }
    // The same keys given as flags are the user's, and refused.
    for (flag, key, counterpart) in [
        ("ycsb_record_count", "recordcount", "num_unique_keys"),
        ("ycsb_threads_per_client", "threadcount", "num_threads_read"),
        ("ycsb_field_count", "fieldcount", "value_size"),
    ] {
        let e = plan(&[
            ("ycsb_workload_files", "keyvalue"),
            (flag, "4"),
            ("sojourn_db", "null:"),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(&format!("t.yaml:2 ({flag}): {key} = '4'")) && e.contains(counterpart),
            "{e}"
        );
    }
}

#[test]
fn splits_and_suggestions() {
    assert_eq!(split(10, 3), [4, 3, 3]);
    assert_eq!(split(2, 4), [1, 1, 0, 0]);
    assert_eq!(split_rate(0.5, 2), [0.25, 0.25]);
    assert_eq!(suggestion("ycsb_recordcount"), Some("ycsb_record_count"));
    assert_eq!(suggestion("machine_type"), None);
}
