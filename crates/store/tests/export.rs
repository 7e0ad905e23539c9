//! Exports of a stored run: PKB samples (keys, metric names, labels that
//! the walkthrough's BigQuery regexes parse, the same numbers as the YCSB
//! summary), HdrHistogram interval logs that decode back to the stored
//! histograms, the CSV/JSON tables, and the JSON report of a stored LIOPS
//! run with the live run's figures, PGIO's among them.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine as _;
use common::*;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use regex::Regex;
use sojourn_core::backend::Status;
use sojourn_core::histograms::Stats;
use sojourn_core::op::OpKind;
use sojourn_core::output::json::Report;
use sojourn_core::output::ycsb;
use sojourn_core::output::{hdrlog, pkb, table};
use sojourn_core::plan::MeasurementInterval;
use sojourn_store::{RunRecord, Store};

const PKB_KEYS: [&str; 11] = [
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

fn stored(seed: u64) -> (tempfile::TempDir, RunRecord, Synthetic) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let store = Store::open(path.to_str().unwrap()).unwrap();
    let mut run = synthetic(seed, 4, 1);
    // As a suite keeps PKB's `ycsb_version` flag.
    run.meta
        .labels
        .insert("ycsb_version".to_string(), "0.17.0".to_string());
    record(&store, &run, &[]);
    let loaded = store.load(run.meta.id.as_str()).unwrap();
    (dir, loaded, run)
}

/// The YCSB summary of a stored run, as `results show` prints it.
fn summary_text(run: &RunRecord) -> String {
    let t = run.summary.totals.as_ref().unwrap();
    ycsb::summary_of(
        &run.total,
        t.measured,
        t.throughput,
        MeasurementInterval::Both,
        &run.meta().percentiles,
    )
}

/// `[GROUP], NAME, VALUE` lines of a summary.
fn summary_value(text: &str, group: &str, name: &str) -> f64 {
    let prefix = format!("[{group}], {name}, ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
        .parse()
        .unwrap()
}

#[test]
fn pkb_samples_have_pkb_keys_in_order_and_parse_as_ndjson() {
    let (_dir, run, _) = stored(1);
    let samples = pkb::samples(&run, &pkb::PkbOptions::default());
    let mut out = Vec::new();
    pkb::write_ndjson(&samples, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with('\n'));
    let mut uris = std::collections::HashSet::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let obj = v.as_object().unwrap();
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort();
        let mut want = PKB_KEYS.to_vec();
        want.sort();
        assert_eq!(keys, want, "{line}");
        // In PKB's order in the text itself.
        let positions: Vec<usize> = PKB_KEYS
            .iter()
            .map(|k| line.find(&format!("\"{k}\":")).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{line}");
        // BigQuery's autodetected types.
        assert!(obj["value"].is_number() && obj["timestamp"].is_number());
        assert!(obj["official"].is_boolean());
        for k in [
            "metric",
            "unit",
            "test",
            "owner",
            "run_uri",
            "sample_uri",
            "labels",
        ] {
            assert!(obj[k].is_string(), "{k} in {line}");
        }
        assert_eq!(obj["run_uri"], run.meta().run_uri.as_str());
        assert_eq!(obj["product_name"], "PerfKitBenchmarker");
        assert_eq!(obj["test"], "sqlite_ycsb");
        assert!(uris.insert(obj["sample_uri"].as_str().unwrap().to_string()));
    }
    let metrics: Vec<&str> = samples.iter().map(|s| s.metric.as_str()).collect();
    for m in [
        "overall RunTime",
        "overall Throughput",
        "read Operations",
        "read Return=OK",
        "read Return=NOT_FOUND",
        "read AverageLatency",
        "read MinLatency",
        "read MaxLatency",
        "read 95thPercentileLatency",
        "read 99.9PercentileLatency",
        "read p50 latency",
        "read p75 latency",
        "read p90 latency",
        "read p95 latency",
        "read p99 latency",
        "read p99.9 latency",
        "update p99 latency",
        "update-failed p99 latency",
        "intended-read p99 latency",
    ] {
        assert!(metrics.contains(&m), "no {m} in {metrics:?}");
    }
    let unit = |m: &str| &samples.iter().find(|s| s.metric == m).unwrap().unit;
    assert_eq!(unit("overall RunTime"), "ms");
    assert_eq!(unit("overall Throughput"), "ops/sec");
    assert_eq!(unit("read p99 latency"), "ms");
    assert_eq!(unit("read Operations"), "");
}

#[test]
fn walkthrough_regexes_read_the_labels_and_numbers_match_the_summary() {
    let (_dir, run, synth) = stored(2);
    let samples = pkb::samples(&run, &pkb::PkbOptions::default());
    let find = |metric: &str| samples.iter().find(|s| s.metric == metric).unwrap();
    let read = find("read p99 latency");
    let labels = &read.labels;

    // The performance query's patterns, as BigQuery sees them.
    let extract = |pattern: &str| -> Option<String> {
        Regex::new(pattern)
            .unwrap()
            .captures(labels)
            .map(|c| c[1].to_string())
    };
    assert_eq!(extract(r"\|stage:(\w+)\|").as_deref(), Some("run"));
    assert_eq!(
        extract(r"\|experiment:([^|]+)\|").as_deref(),
        Some("latency_test")
    );
    assert_eq!(
        extract(r"\|experiment:(.*?)\|").as_deref(),
        Some("latency_test")
    );
    assert_eq!(
        extract(r"\|workload_name:([^|]+)\|").as_deref(),
        Some("workloada")
    );
    assert_eq!(extract(r"\|workload_index:([^|]+)\|").as_deref(), Some("0"));
    assert_eq!(extract(r"\|operation:([^|]+)\|").as_deref(), Some("read"));
    let target: i64 = extract(r"-target (\d+)").unwrap().parse().unwrap();
    let vms: i64 = extract(r"\|vm_count:(\w+)\|").unwrap().parse().unwrap();
    assert_eq!(target * vms, 3000);
    assert_eq!(extract(r"\|fieldlength:(\w+)\|").as_deref(), Some("1024"));
    assert_eq!(extract(r"\|fieldcount:(\w+)\|").as_deref(), Some("1"));
    assert_eq!(extract(r"\|recordcount:(\w+)\|").as_deref(), Some("1000"));
    assert_eq!(extract(r"-p readallfields=(\w+)").as_deref(), Some("false"));
    assert_eq!(
        extract(r"-p requestdistribution=(\w+)").as_deref(),
        Some("zipfian")
    );
    assert_eq!(extract(r"-threads (\d+)").as_deref(), Some("8"));
    assert_eq!(
        extract(r"\|threads_per_client_vm:(\w+)\|").as_deref(),
        Some("8")
    );
    // A value holding `|`, `,` and `:` survives, escaped, and comes back.
    let note = extract(r"\|note:([^|]+)\|").unwrap();
    assert_eq!(pkb::unescape(&note), "a|b,c:d");
    // The server's CPU, for the cost query: unknown without counters, said
    // so; with them, in cores over the run's elapsed time.
    let cpu = |run: &RunRecord| {
        let s = pkb::samples(run, &pkb::PkbOptions::default());
        let c: Vec<_> = s
            .iter()
            .filter(|x| x.metric.starts_with("cpu_load"))
            .cloned()
            .collect();
        assert_eq!(c.len(), 2, "cpu_load_array and cpu_load_hottest_node_array");
        c
    };
    assert!(cpu(&run)[0]
        .labels
        .contains("|cpu_average_utilization:unknown|"));
    let mut with_server = run.clone();
    let elapsed = with_server
        .summary
        .totals
        .as_ref()
        .unwrap()
        .elapsed
        .as_secs_f64();
    with_server.server = Some(sojourn_core::backend::ServerStats {
        operations: 1,
        deltas: [("server_cpu_s".to_string(), elapsed / 4.0)].into(),
    });
    for s in cpu(&with_server) {
        assert!((s.value - 0.25).abs() < 1e-9, "{}", s.value);
        assert!(
            s.labels.contains("|cpu_average_utilization:0.2500|"),
            "{}",
            s.labels
        );
    }
    // What produced the numbers is not overridden by a label of that
    // name (a suite's `ycsb_version` flag); the label is kept beside it.
    assert!(extract(r"\|ycsb_version:([^|]+)\|")
        .unwrap()
        .starts_with("sojourn-"));
    assert_eq!(
        extract(r"\|requested_ycsb_version:([^|]+)\|").as_deref(),
        Some("0.17.0")
    );
    // Every label parses back to the metadata.
    let parsed = pkb::parse_labels(labels);
    let mut md = pkb::metadata(&run);
    md.insert("operation".into(), "read".into());
    assert_eq!(parsed, md);
    assert!(parsed["command_line"].contains("-p hdrhistogram.percentiles=95,99,99.9"));

    // The numbers are the summary's, in ms.
    let text = summary_text(&run);
    let ms = |group: &str, name: &str| summary_value(&text, group, name) / 1000.0;
    assert_eq!(
        find("read p99 latency").value,
        ms("READ", "99thPercentileLatency(us)")
    );
    assert_eq!(
        find("read 99thPercentileLatency").value,
        ms("READ", "99thPercentileLatency(us)")
    );
    assert_eq!(
        find("read 99.9PercentileLatency").value,
        ms("READ", "99.9PercentileLatency(us)")
    );
    assert_eq!(
        find("update p95 latency").value,
        ms("UPDATE", "95thPercentileLatency(us)")
    );
    assert_eq!(
        find("read AverageLatency").value,
        ms("READ", "AverageLatency(us)")
    );
    assert_eq!(find("read MaxLatency").value, ms("READ", "MaxLatency(us)"));
    assert_eq!(
        find("intended-read p99 latency").value,
        ms("Intended-READ", "99thPercentileLatency(us)")
    );
    assert_eq!(
        find("overall Throughput").value,
        summary_value(&text, "OVERALL", "Throughput(ops/sec)")
    );
    assert_eq!(
        find("overall RunTime").value,
        summary_value(&text, "OVERALL", "RunTime(ms)")
    );
    assert_eq!(
        find("read Operations").value,
        summary_value(&text, "READ", "Operations")
    );
    // And the histogram's own p50 (which the YCSB summary does not print).
    let h = &synth.outcome.total.op(OpKind::Read).unwrap().ok.service;
    assert_eq!(
        find("read p50 latency").value,
        (h.value_at_percentile(50.0) / 1000) as f64 / 1000.0
    );
}

#[test]
fn hdrlog_lines_decode_to_the_stored_histograms() {
    let (_dir, run, synth) = stored(3);
    let mut out = Vec::new();
    hdrlog::write(std::slice::from_ref(&run), &mut out).unwrap();
    let text = String::from_utf8(out.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("#[Logged with sojourn"));
    assert_eq!(lines[1], "#[Histogram log format version 1.3]");
    let start = unix_secs(run.meta().started_at);
    assert!(lines[2].starts_with(&format!("#[StartTime: {start:.3} (seconds since epoch), ")));
    assert_eq!(
        lines[3],
        format!("#[BaseTime: {start:.3} (seconds since epoch)]")
    );
    assert_eq!(
        lines[4],
        "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
    );
    let payload_re =
        Regex::new(r"^Tag=[a-z-]+-(service|response),\d+\.\d{3},\d+\.\d{3},\d+\.\d{3},HISTF")
            .unwrap();
    // The payload is standard base64 of a compressed V2 histogram, whose
    // cookie base64-encodes to "HISTF".
    for l in &lines[5..] {
        assert!(payload_re.is_match(l), "{l}");
    }

    // Parse with the hdrhistogram crate's own log reader.
    let mut seen: BTreeMap<(u64, String), Histogram<u64>> = BTreeMap::new();
    for entry in IntervalLogIterator::new(&out) {
        match entry.unwrap() {
            LogEntry::Interval(ilh) => {
                let tag = ilh.tag().unwrap().as_str().to_string();
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(ilh.encoded_histogram())
                    .unwrap();
                let h: Histogram<u64> = Deserializer::new()
                    .deserialize(&mut bytes.as_slice())
                    .unwrap();
                assert_eq!(ilh.duration(), Duration::from_secs(1));
                assert!((ilh.max() - h.max() as f64 / 1e6).abs() < 0.001);
                seen.insert((ilh.start_timestamp().as_secs(), tag), h);
            }
            LogEntry::StartTime(t) | LogEntry::BaseTime(t) => {
                assert!((t.as_secs_f64() - start).abs() < 0.001)
            }
        }
    }
    // Two tags per operation kind per interval, equal to what was stored.
    assert_eq!(seen.len(), synth.per_interval.len() * 2 * 2);
    for (i, s) in synth.per_interval.iter().enumerate() {
        for (kind, st) in s.kinds() {
            let name = kind.name();
            assert_eq!(
                seen[&(i as u64, format!("{name}-service"))],
                st.ok.service,
                "interval {i} {name}"
            );
            assert_eq!(
                seen[&(i as u64, format!("{name}-response"))],
                st.ok.response
            );
        }
    }
}

#[test]
fn csv_and_json_tables_hold_the_summary_figures() {
    let (_dir, run, synth) = stored(4);
    let mut csv = Vec::new();
    table::write_csv(std::slice::from_ref(&run), &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], table::OpRow::COLUMNS.join(","));
    assert_eq!(lines.len(), 3, "{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    let read: Vec<&str> = lines[1].split(',').collect();
    let col = |name: &str| read[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(col("operation"), "read");
    let h = &synth.outcome.total.op(OpKind::Read).unwrap().ok.service;
    assert_eq!(
        col("service_p99_us").parse::<f64>().unwrap(),
        h.value_at_quantile(0.99) as f64 / 1000.0
    );
    let mut json = Vec::new();
    table::write_json(std::slice::from_ref(&run), &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["operation"], "update");
    assert_eq!(
        rows[0]["operations"],
        synth.outcome.total.op(OpKind::Read).unwrap().count()
    );
}

#[test]
fn json_report_of_a_stored_liops_run_has_the_live_runs_pgio_figures() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("results.sqlite").to_str().unwrap()).unwrap();
    let mut run = synthetic(9, 3, 0);
    run.meta.workloads = vec!["pgio.conf".into()];
    run.meta.backend = "postgres://u:***@127.0.0.1:5433/yb?sslmode=disable".into();
    run.meta.properties = [
        ("workload", "liops"),
        ("WORK_UNIT", "100"),
        ("UPDATE_WORK_UNIT", "8"),
        ("SCALE", "3000"),
        ("NUM_SCHEMAS", "2"),
        ("NUM_THREADS", "2"),
        ("DBNAME", "other"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    // 500 selects and 100 updates that touched their ranges, one select
    // that found rows missing.
    let mut total = Stats::default();
    for n in 0..500u64 {
        let v = 200_000 + n * 9_973;
        total.record(OpKind::Scan, Status::Ok, v, v + 1_000);
        if n % 5 == 0 {
            total.record(OpKind::Update, Status::Ok, 2 * v, 2 * v + 1_000);
        }
        total.ops_done += 1;
    }
    total.record(
        OpKind::Scan,
        Status::UnexpectedState,
        90_000_000,
        90_000_000,
    );
    run.outcome.total = total;
    with_server(&mut run, 3000.0);
    if let Some(s) = run.outcome.server.as_mut() {
        s.deltas.insert("blks_read".into(), 31.0);
    }
    record(&store, &run, &[]);
    let live = RunRecord::of_outcome(run.meta.clone(), &run.outcome, Vec::new());
    let stored = store.load(run.meta.id.as_str()).unwrap();
    let live = serde_json::to_value(Report::of(&live)).unwrap();
    let stored = serde_json::to_value(Report::of(&stored)).unwrap();
    assert_eq!(stored["liops"], live["liops"]);
    let pgio = &live["liops"]["pgio"];
    assert_eq!(pgio["loop_iterations"], 601);
    assert_eq!(pgio["sql_selects"], 500);
    assert_eq!(pgio["sql_updates"], 100);
    assert_eq!(pgio["select_blk_touch_cnt"], 500 * 100);
    assert_eq!(pgio["update_blk_touch_cnt"], 100 * 8);
    let h = &run.outcome.total.op(OpKind::Scan).unwrap().ok.service;
    // Seconds to 10 ns, as PGIO's numeric(12,8).
    let max_s = pgio["sql_select_max_tm"].as_f64().unwrap();
    assert_eq!(max_s, (h.max() as f64 / 10.0).round() / 1e8);
    assert!((max_s - h.max() as f64 / 1e9).abs() <= 5e-9, "{max_s}");
    // The database connected to, over the phase's 3 s.
    assert_eq!(pgio["dbname"], "yb");
    assert_eq!(pgio["run_time_s"], 3);
    assert_eq!(pgio["RIOPS"], 10);
    assert_eq!(pgio["CACHE_HITS_per_sec"], 1000);
    assert_eq!(
        (pgio["schemas"].clone(), pgio["threads_per_schema"].clone()),
        (2.into(), 2.into())
    );
}
