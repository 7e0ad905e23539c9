//! The walkthrough's two BigQuery queries, run unchanged but for the
//! dialect, over what `sojourn results export --all --format pkb` writes
//! after a suite: the samples are loaded into DuckDB (close enough to
//! BigQuery's SQL: `read_json_auto`, `REGEXP_EXTRACT`, `ARRAY_AGG`) and the
//! rows checked against what the stages really ran and what `sojourn
//! results show` says they measured.

mod util;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use sojourn_testkit::needs::{find_binary, Need};
use util::*;

/// Load `samples` into DuckDB as the table `codelab` and run `query`;
/// every row as a JSON object.
fn duckdb(python: &Path, samples: &Path, query: &Path) -> Vec<BTreeMap<String, Value>> {
    let script = "import duckdb, sys\n\
        con = duckdb.connect()\n\
        con.execute(\"CREATE TABLE codelab AS SELECT * FROM read_json_auto(?, format='newline_delimited')\", [sys.argv[1]])\n\
        query = open(sys.argv[2]).read()\n\
        for (row,) in con.execute(f'SELECT CAST(to_json(q) AS VARCHAR) FROM ({query}\\n) q').fetchall():\n\
        \x20   print(row)\n";
    let out = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(samples)
        .arg(query)
        .run_to_end();
    ok(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn queries() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pkb-walkthrough/duckdb")
}

#[test]
fn the_walkthroughs_queries_read_one_row_per_stage_with_what_it_ran() {
    let Some(python) = find_binary(Need::Duckdb, "sojourn-duckdb", &[]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    std::fs::create_dir(&suite).unwrap();
    let db = format!("sqlite:{}", dir.path().join("db.sqlite").display());
    // Two configs: two client processes at 500 ops/s each, and one at 300.
    for (file, vms, target, workload) in [
        ("multi.yaml", 2, 500, "workloada"),
        ("single.yaml", 1, 300, "workloadb"),
    ] {
        std::fs::write(
            suite.join(file),
            format!(
                "benchmarks:\n- b_ycsb:\n    flags:\n      num_vms: {vms}\n      \
                 sojourn_db: \"{db}\"\n      ycsb_record_count: 500\n      \
                 ycsb_threads_per_client: 2\n      ycsb_operation_count: {ops}\n      \
                 ycsb_run_parameters: target={target}\n      ycsb_workload_files: {workload}\n      \
                 ycsb_field_count: 1\n      ycsb_timelimit: 0\n      ycsb_reload_database: true\n      \
                 metadata: experiment:{file}\n      bigtable_node_count: 3\n      \
                 bigtable_storage_type: ssd\n",
                ops = target * vms * 2,
            ),
        )
        .unwrap();
    }
    let data = dir.path().join("data");
    let o = bin()
        .arg("suite")
        .arg(&suite)
        .arg("--data-dir")
        .arg(&data)
        .arg("--no-progress")
        .run_to_end();
    ok(&o);
    let samples = dir.path().join("samples.json");
    let data_arg = data.to_str().unwrap();
    ok(&bin()
        .args(["results", "export", "--all", "--format", "pkb", "-o"])
        .arg(&samples)
        .args(["--data-dir", data_arg])
        .run_to_end());

    // Performance: one row per run stage and operation.
    let rows = duckdb(&python, &samples, &queries().join("performance.sql"));
    for (experiment, vms, target, ops) in [
        ("multi.yaml", 2, 1000, ["read", "update"]),
        ("single.yaml", 1, 300, ["read", "update"]),
    ] {
        let uri = rows
            .iter()
            .find(|r| r["experiment"] == experiment)
            .unwrap_or_else(|| panic!("no row of {experiment}: {rows:?}"))["run_uri"]
            .as_str()
            .unwrap()
            .to_string();
        let shown = parse_summary(&ok(&bin()
            // The URI is the benchmark's, as PKB's: its run is stage 1.
            .args([
                "results",
                "show",
                &format!("{uri}/1"),
                "--data-dir",
                data_arg,
            ])
            .run_to_end()));
        for op in ops {
            let of_op: Vec<_> = rows
                .iter()
                .filter(|r| r["experiment"] == experiment && r["operation"] == op)
                .collect();
            assert_eq!(of_op.len(), 1, "{experiment} {op}: {of_op:?}");
            let r = of_op[0];
            // What the stage ran: the total target, threads per client, clients.
            assert_eq!(r["target_throughput"], target, "{r:?}");
            assert_eq!(r["threads_per_vm"], 2, "{r:?}");
            assert_eq!(r["vm_count"], vms, "{r:?}");
            // What it measured, as `results show` prints it (whole µs).
            let group = op.to_ascii_uppercase();
            let p99_us = r["p99_latency_ms"].as_f64().unwrap() * 1000.0;
            let shown_p99 = get(&shown, &group, "99thPercentileLatency(us)");
            assert!(
                (p99_us - shown_p99).abs() <= 1.0,
                "{op}: {p99_us} vs {shown_p99}"
            );
        }
        let overall: Vec<_> = rows
            .iter()
            .filter(|r| r["experiment"] == experiment && r["operation"] == "overall")
            .collect();
        assert_eq!(overall.len(), 1);
        let throughput: f64 = overall[0]["actual_throughput"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let shown_throughput = get(&shown, "OVERALL", "Throughput(ops/sec)");
        assert!(
            (throughput - shown_throughput).abs() < 0.01,
            "{throughput} {shown_throughput}"
        );
    }

    // Cost: one row per run stage, the server's CPU said to be unknown
    // (an embedded database has no server process), the cost computed.
    let rows = duckdb(&python, &samples, &queries().join("cost.sql"));
    assert_eq!(rows.len(), 2, "{rows:?}");
    for r in &rows {
        assert_eq!(r["avg_cpu_all_nodes"], "unknown");
        assert_eq!(r["avg_cpu_hottest_node"], "unknown");
        assert_eq!(r["bigtable_node_count"], 3);
        assert_eq!(r["baseline_monthly_cost_usd"], "1404.00");
    }
}
