//! The vote workload end to end: the `sojourn` binary loads and runs it
//! against real PostgreSQL and MariaDB (both SQL variants) and Redis; the
//! votes the database holds are the votes the summary counts, the
//! precomputed counts agree with the Vote rows, a precomputed run over
//! tables loaded for join is refused, Noria's lines follow the
//! summary, the runs are stored and reported, the shipped suite runs, and a
//! backend without the workload says which ones have it. `sojourn vote`
//! runs Noria's own command lines on MariaDB, memcached alone and MariaDB
//! behind memcached (the hybrid), with the cache's hits and misses and
//! Noria's four histograms.
#![cfg(all(feature = "postgres", feature = "mysql", feature = "redis"))]

mod util;

use std::path::Path;

use sojourn_core::backend::Status;
use sojourn_core::op::OpKind;
use sojourn_store::{Filter, RunStatus, Store};
use sojourn_testkit::mariadb_server::{self as my, Mariadb};
use sojourn_testkit::memcached_server::MemcachedServer;
use sojourn_testkit::postgres_server::{self as pg, Postgres};
use sojourn_testkit::redis_server::RedisServer;
use util::*;

const ARTICLES: u64 = 20;

/// `sojourn bench` of the shipped vote workload, scaled down; returns the
/// summary and the whole stdout.
fn bench(data: &Path, url: &str, password: Option<&str>, variant: &str) -> (Summary, String) {
    let articles = format!("vote.articles={ARTICLES}");
    let variant = format!("vote.variant={variant}");
    let results = data.join("results.sqlite");
    let out = sojourn(
        data,
        &[
            "bench",
            url,
            "-P",
            "workloads/vote",
            "--drop",
            "-p",
            &articles,
            "-p",
            "vote.write_every=3",
            "-p",
            &variant,
            "-p",
            "operationcount=600",
            "--threads",
            "3",
            "--seed",
            "11",
            "--results",
            &results.to_string_lossy(),
        ],
    );
    let stdout = ok(&out);
    let stderr = text(&out.stderr);
    if let Some(password) = password {
        assert!(
            !stdout.contains(password) && !stderr.contains(password),
            "password in output:\n{stdout}\n{stderr}"
        );
    }
    let s = parse_summary(&stdout);
    // Each connection votes on every third of its operations.
    let votes = get(&s, "INSERT", "Return=OK");
    assert!((150.0..=200.0).contains(&votes), "{votes} votes\n{stdout}");
    assert_eq!(get(&s, "READ", "Return=OK") + votes, 600.0, "{stdout}");
    let (generated, actual) = assert_noria_table(&stdout);
    // Closed loop offers exactly what completes.
    assert_eq!(generated, actual, "{stdout}");
    (s, stdout)
}

/// Noria's lines, after the YCSB summary, with a row per op and
/// percentile; returns their generated and actual rates, having checked
/// the actual one against the summary's throughput (the same operations
/// over the same time, the run having no warm-up).
fn assert_noria_table(stdout: &str) -> (f64, f64) {
    let overall = stdout.find("[OVERALL]").expect("summary");
    let generated = stdout.find("# generated ops/s: ").expect("generated");
    assert!(generated > overall, "{stdout}");
    let rate = |label: &str| -> f64 {
        let line = stdout.lines().find(|l| l.starts_with(label)).unwrap();
        line[label.len()..].trim().parse().unwrap()
    };
    let actual = rate("# actual ops/s:");
    assert!(actual > 0.0);
    let throughput = get(&parse_summary(stdout), "OVERALL", "Throughput(ops/sec)");
    // Printed with two decimals.
    assert!(
        (actual - throughput).abs() <= 0.005 + 1e-9 * throughput,
        "actual {actual} against the summary's {throughput}\n{stdout}"
    );
    assert!(stdout.contains("# op\tpct\tsojourn\tremote\n"), "{stdout}");
    for op in ["write", "read"] {
        for pct in ["50", "95", "99", "100"] {
            let prefix = format!("{op}\t{pct}\t");
            let line = stdout
                .lines()
                .find(|l| l.starts_with(&prefix))
                .unwrap_or_else(|| panic!("no {prefix:?} row in\n{stdout}"));
            let cols: Vec<u64> = line
                .split('\t')
                .skip(2)
                .map(|c| c.parse().unwrap())
                .collect();
            // Response time includes service time.
            assert!(cols.len() == 2 && cols[0] >= cols[1], "{line}");
        }
    }
    // The Noria lines never look like summary lines to a YCSB parser.
    for line in stdout[generated..].lines() {
        assert!(!line.starts_with('['), "{line}");
    }
    (rate("# generated ops/s:"), actual)
}

/// The run is stored (load and run) under the workload name `vote`, and
/// `sojourn report` shows it.
fn assert_stored(data: &Path) {
    let results = data.join("results.sqlite");
    let store = Store::open(&results.to_string_lossy()).unwrap();
    let runs = store.list(&Filter::default()).unwrap();
    let phases: Vec<&str> = runs.iter().map(|r| r.meta.phase.as_str()).collect();
    assert_eq!(runs.len(), 2, "{phases:?}");
    for r in &runs {
        assert_eq!(r.status, RunStatus::Completed);
        assert_eq!(r.meta.workloads, vec!["vote".to_string()]);
    }
    let load = runs.iter().find(|r| r.meta.phase == "load").unwrap();
    assert_eq!(load.totals.as_ref().unwrap().operations, ARTICLES);
    let report = report_csv_of_last(&results);
    assert!(report.contains("vote"), "{report}");
    assert!(
        report.contains("insert") && report.contains("read"),
        "{report}"
    );
}

#[test]
fn postgres_both_variants() {
    let Some(pg) = Postgres::start() else { return };
    for variant in ["join", "precomputed"] {
        let dir = tempfile::tempdir().unwrap();
        let (s, _) = bench(dir.path(), &pg.url(), Some(pg::PASSWORD), variant);
        let votes = get(&s, "INSERT", "Return=OK") as u64;
        assert_eq!(
            pg.psql("SELECT count(*) FROM vote").trim(),
            votes.to_string()
        );
        assert_eq!(
            pg.psql("SELECT count(*) FROM article").trim(),
            ARTICLES.to_string()
        );
        if variant == "join" {
            // Tables created for join cannot serve precomputed reads: the
            // run is refused before it starts, saying what to do.
            let err = refused(
                dir.path(),
                &[
                    "run",
                    &pg.url(),
                    "-P",
                    "workloads/vote",
                    "-p",
                    "vote.variant=precomputed",
                    "--no-store",
                ],
            );
            assert!(
                err.contains("vote.variant=join") && err.contains("--drop"),
                "{err}"
            );
            assert!(!err.contains(pg::PASSWORD), "{err}");
        }
        if variant == "precomputed" {
            assert_eq!(
                pg.psql(
                    "SELECT count(*) FROM article a WHERE a.votes <> \
                     (SELECT count(*) FROM vote v WHERE v.article_id = a.id)"
                )
                .trim(),
                "0"
            );
        }
        assert_stored(dir.path());
    }
}

#[test]
fn mariadb_both_variants() {
    let Some(db) = Mariadb::start() else { return };
    for variant in ["join", "precomputed"] {
        let dir = tempfile::tempdir().unwrap();
        let (s, _) = bench(dir.path(), &db.url(), Some(my::PASSWORD), variant);
        let votes = get(&s, "INSERT", "Return=OK") as u64;
        assert_eq!(
            db.sql("SELECT count(*) FROM Vote").trim(),
            votes.to_string()
        );
        if variant == "precomputed" {
            assert_eq!(
                db.sql(
                    "SELECT count(*) FROM Article a WHERE a.votes <> \
                     (SELECT count(*) FROM Vote v WHERE v.article_id = a.id)"
                )
                .trim(),
                "0"
            );
        }
        assert_stored(dir.path());
    }
}

#[test]
fn redis_counters() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // On the empty server a run is refused in words for a database that
    // has no tables.
    let e = refused(
        dir.path(),
        &["run", &server.url(), "-P", "workloads/vote", "--no-store"],
    );
    assert!(
        e.contains("holds no data for the vote workload's articles: run `sojourn load`"),
        "{e}"
    );
    assert!(!e.contains("table"), "{e}");
    let (s, _) = bench(dir.path(), &server.url(), None, "join");
    let votes = get(&s, "INSERT", "Return=OK") as u64;
    let counted: u64 = (1..=ARTICLES)
        .map(|id| {
            let v = server.command(&["HGET", &format!("article:{id}"), "votes"]);
            if v == "nil" {
                0
            } else {
                v.trim().parse::<u64>().unwrap()
            }
        })
        .sum();
    assert_eq!(counted, votes);
    assert_stored(dir.path());
}

/// Under a target, Noria's "generated" rate is what the schedule offered,
/// whatever the database completed: one connection with one vote in
/// flight cannot keep up with 200,000 a second (5 µs a round trip), so the
/// offered rate is the target and the actual one far below it.
#[test]
fn under_a_target_generated_is_the_offered_rate() {
    let Some(server) = RedisServer::start(None) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = server.url();
    let articles = format!("vote.articles={ARTICLES}");
    let common = ["-P", "workloads/vote", "-p", &articles, "--no-store"];
    let load: Vec<&str> = ["load", &url].iter().chain(&common).copied().collect();
    ok(&sojourn(dir.path(), &load));
    let run: Vec<&str> = ["run", &url]
        .iter()
        .chain(&common)
        .copied()
        .chain([
            "-p",
            "operationcount=100000000",
            "-p",
            "maxexecutiontime=1",
            "--threads",
            "1",
            "--target",
            "200000",
            "--arrival",
            "uniform",
        ])
        .collect();
    let stdout = ok(&sojourn(dir.path(), &run));
    let (generated, actual) = assert_noria_table(&stdout);
    assert!(
        (generated / 200_000.0 - 1.0).abs() < 0.1,
        "generated {generated}\n{stdout}"
    );
    assert!(actual < generated / 2.0, "actual {actual}\n{stdout}");
}

#[test]
fn a_backend_without_the_workload_names_those_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let err = refused(
        dir.path(),
        &[
            "bench",
            "memory:",
            "--workload",
            "vote",
            "-p",
            "operationcount=10",
            "--no-store",
        ],
    );
    assert!(
        err.contains("memory:") && err.contains("does not run the vote workload"),
        "{err}"
    );
    assert!(err.contains("PostgreSQL") && err.contains("MySQL/MariaDB") && err.contains("Redis"));
}

#[test]
fn shipped_suite_runs_against_postgres() {
    let Some(pg) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("noria-vote");
    std::fs::create_dir(&suite).unwrap();
    for f in ["runner.yaml", "load.yaml", "uniform.yaml", "skewed.yaml"] {
        std::fs::copy(repo_root().join("suites/noria-vote").join(f), suite.join(f)).unwrap();
    }
    let results = dir.path().join("results.sqlite");
    let out = bin()
        .arg("suite")
        .arg(&suite)
        .args(["--db", &pg.url()])
        .arg("--results")
        .arg(&results)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--no-progress")
        .args([
            "--flag",
            "ycsb_timelimit=1",
            "--flag",
            "ycsb_threads_per_client=2",
        ])
        .args(["--flag", "sojourn_parameters=vote.articles=50"])
        .run_to_end();
    let stdout = ok(&out);
    assert!(
        stdout.contains("All tests have passed"),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert_eq!(pg.psql("SELECT count(*) FROM article").trim(), "50");
    let store = Store::open(&results.to_string_lossy()).unwrap();
    let runs = store.list(&Filter::default()).unwrap();
    let mut experiments: Vec<&str> = runs
        .iter()
        .map(|r| r.meta.labels["experiment"].as_str())
        .collect();
    experiments.sort();
    assert_eq!(experiments, ["load", "skewed", "uniform"]);
    for r in &runs {
        assert_eq!(r.status, RunStatus::Completed, "{r:#?}");
        if r.meta.phase == "run" {
            // The staircase's mean (500 to 6,000 by 500), its first step
            // run for the 1 s the flag leaves it.
            assert_eq!(r.meta.target, Some(3250.0));
            let ops = r.totals.as_ref().unwrap().operations;
            assert!(ops > 100, "{ops} operations in 1 s at 500/s");
            let stored = store.load(r.meta.id.as_str()).unwrap();
            assert_eq!(stored.segments.len(), 12);
            assert_eq!(stored.segments[0].stats.ops_done, ops);
            assert_eq!(stored.segments[0].segment.mean_rate(), 500.0);
        }
    }
    // Every vote the runs recorded is a row.
    let votes: u64 = runs
        .iter()
        .filter(|r| r.meta.phase == "run")
        .map(|r| {
            let stored = store.load(r.meta.id.as_str()).unwrap();
            stored
                .total
                .op(OpKind::Insert)
                .map_or(0, |o| o.count_of(Status::Ok))
        })
        .sum();
    assert!(votes > 0);
    assert_eq!(
        pg.psql("SELECT count(*) FROM vote").trim(),
        votes.to_string()
    );
}

/// memcached's replies to one text-protocol request (read to `END` or to
/// the one-line reply).
fn memcached(port: u16, request: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    while !(reply.ends_with(b"END\r\n") || reply.ends_with(b"DELETED\r\n")) {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "memcached closed: {}", text(&reply));
        reply.extend_from_slice(&buf[..n]);
    }
    text(&reply)
}

/// The `VALUE` blocks of a `get` reply as (key, value).
fn memcached_values(reply: &str) -> Vec<(String, String)> {
    let mut lines = reply.split("\r\n");
    let mut out = Vec::new();
    while let Some(line) = lines.next() {
        if let Some(header) = line.strip_prefix("VALUE ") {
            let key = header.split(' ').next().unwrap().to_string();
            out.push((key, lines.next().unwrap().to_string()));
        }
    }
    out
}

/// Noria's cache line: (hits, misses).
fn cache_line(stdout: &str) -> (u64, u64) {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("# cache hits: "))
        .unwrap_or_else(|| panic!("no cache line in\n{stdout}"));
    let (hits, rest) = line.split_once(", misses: ").unwrap();
    let misses = rest.split(' ').next().unwrap();
    (hits.parse().unwrap(), misses.parse().unwrap())
}

/// Every article's precomputed count equals its Vote rows, and the
/// rows are the votes the summary counted.
fn assert_votes_in_mariadb(db: &Mariadb, s: &Summary) -> u64 {
    let votes = get(s, "INSERT", "Return=OK") as u64;
    assert!(votes > 0);
    assert_eq!(
        db.sql("SELECT count(*) FROM Vote").trim(),
        votes.to_string()
    );
    assert_eq!(
        db.sql(
            "SELECT count(*) FROM Article a WHERE a.votes <> \
             (SELECT count(*) FROM Vote v WHERE v.article_id = a.id)"
        )
        .trim(),
        "0"
    );
    votes
}

/// Noria's own command lines, only the program name and addresses
/// changed: `vote ... mysql`, `vote ... memcached` and `vote ... hybrid`.
#[test]
fn noria_command_lines_on_mysql_memcached_and_hybrid() {
    let Some(db) = Mariadb::start() else { return };
    let Some(mc) = MemcachedServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let histogram = dir.path().join("vote.hdr");
    let histogram_arg = histogram.to_string_lossy().to_string();
    let results = dir.path().join("results.sqlite");
    let results_arg = results.to_string_lossy().to_string();
    let mysql_address = format!("{}:{}@127.0.0.1:{}", my::USER, my::PASSWORD, db.port());
    let mc_address = format!("127.0.0.1:{}", mc.port());
    let articles = ARTICLES.to_string();
    let noria = |threads: &str, backend: &[&str]| -> (Summary, String) {
        let mut args = vec![
            "vote",
            "--target",
            "3000",
            "--write-every",
            "3",
            "--runtime",
            "1",
            "--articles",
            &articles,
            "--threads",
            threads,
            "--seed",
            "7",
            "--histogram",
            &histogram_arg,
            "--results",
            &results_arg,
        ];
        args.extend_from_slice(backend);
        let out = sojourn(dir.path(), &args);
        let stdout = ok(&out);
        let stderr = text(&out.stderr);
        assert!(
            !stdout.contains(my::PASSWORD) && !stderr.contains(my::PASSWORD),
            "password in output:\n{stdout}\n{stderr}"
        );
        // What the translation changes is said.
        assert!(stderr.contains("note: --write-every 3"), "{stderr}");
        assert_noria_table(&stdout);
        (parse_summary(&stdout), stdout)
    };

    // MySQL with precomputed counts, as Noria ran it.
    let mysql = [
        "mysql",
        "--address",
        &mysql_address,
        "--database",
        my::DATABASE,
    ];
    let (s, _) = noria("2", &mysql);
    let mysql_votes = assert_votes_in_mariadb(&db, &s);
    let mysql_reads = get(&s, "READ", "Return=OK") as u64;

    // memcached alone: every read is a get of two items, all of them hits;
    // the counts in memcached are the votes sent.
    let (s, stdout) = noria("2", &["memcached", "--address", &mc_address]);
    let votes = get(&s, "INSERT", "Return=OK") as u64;
    let memcached_reads = get(&s, "READ", "Return=OK") as u64;
    assert!(votes > 0 && memcached_reads > 0);
    let keys: Vec<String> = (1..=ARTICLES).map(|id| format!("votes:{id}")).collect();
    let counted: u64 = memcached_values(&memcached(
        mc.port(),
        &format!("get {}\r\n", keys.join(" ")),
    ))
    .iter()
    .map(|(_, v)| v.parse::<u64>().unwrap())
    .sum();
    assert_eq!(counted, votes);
    assert_eq!(cache_line(&stdout), (2 * memcached_reads, 0), "{stdout}");

    // MySQL behind memcached, one connection so that no read's write-back
    // can race a vote: reads hit until a vote deletes the entry, the next
    // read misses and writes the count back, and every entry left in the
    // cache holds its article's count in the database.
    let hybrid = [
        "hybrid",
        "--mysql-address",
        &mysql_address,
        "--memcached-address",
        &mc_address,
        "--database",
        my::DATABASE,
    ];
    let (s, stdout) = noria("1", &hybrid);
    let hybrid_votes = assert_votes_in_mariadb(&db, &s);
    let reads = get(&s, "READ", "Return=OK") as u64;
    let (hits, misses) = cache_line(&stdout);
    assert_eq!(hits + misses, reads, "{stdout}");
    assert!(hits > 0 && misses > 0, "{stdout}");
    assert!(misses <= hybrid_votes, "a miss follows a vote: {stdout}");
    let keys: Vec<String> = (1..=ARTICLES).map(|id| format!("vc:{id}")).collect();
    let cached = memcached_values(&memcached(
        mc.port(),
        &format!("get {}\r\n", keys.join(" ")),
    ));
    assert!(!cached.is_empty());
    for (key, value) in cached {
        let id = key.strip_prefix("vc:").unwrap();
        let count = value.split(' ').next().unwrap();
        let in_db = db.sql(&format!("SELECT votes FROM Article WHERE id = {id}"));
        assert_eq!(count, in_db.trim(), "{key} = {value}");
        assert!(value.ends_with(&format!("Article #{id}")), "{value}");
    }

    // Four histograms a run, appended, in Noria's order: sojourn-write,
    // sojourn-read, remote-write, remote-read, each counting its
    // operations.
    let bytes = std::fs::read(&histogram).unwrap();
    let mut reader = &bytes[..];
    let mut counts = Vec::new();
    while !reader.is_empty() {
        let h: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut reader)
            .unwrap();
        counts.push(h.len());
    }
    let run_counts = |votes: u64, reads: u64| [votes, reads, votes, reads];
    assert_eq!(counts.len(), 12, "{counts:?}");
    assert_eq!(counts[..4], run_counts(mysql_votes, mysql_reads));
    assert_eq!(counts[4..8], run_counts(counted, memcached_reads));
    assert_eq!(counts[8..], run_counts(hybrid_votes, reads));

    // Each run is stored.
    let store = Store::open(&results_arg).unwrap();
    let runs = store.list(&Filter::default()).unwrap();
    assert_eq!(runs.iter().filter(|r| r.meta.phase == "run").count(), 3);
}

#[test]
fn noria_backends_sojourn_does_not_run_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (line, named) in [
        (&["vote", "localsoup", "--shards", "2"][..], "`localsoup`"),
        (&["vote", "--target", "10", "mssql"], "`mssql`"),
        (&["vote", "memcached", "--fast"], "--fast"),
    ] {
        let e = refused(dir.path(), line);
        assert!(e.contains(named), "{e}");
    }
    // A cache in front of a cache is refused, naming the property.
    let e = refused(
        dir.path(),
        &[
            "run",
            "memcached://127.0.0.1:1",
            "--workload",
            "vote",
            "-p",
            "vote.cache=redis://127.0.0.1:2",
            "-p",
            "operationcount=1",
            "--no-store",
        ],
    );
    assert!(
        e.contains("vote.cache") && e.contains("SQL database"),
        "{e}"
    );
    // A cache of another kind is refused, its password masked.
    let e = refused(
        dir.path(),
        &[
            "run",
            "mysql://127.0.0.1:1/db",
            "--workload",
            "vote",
            "-p",
            "vote.cache=http://u:s3cret@127.0.0.1:2",
            "-p",
            "operationcount=1",
            "--no-store",
        ],
    );
    assert!(
        e.contains("vote.cache") && e.contains("memcached://host[:port] or redis://"),
        "{e}"
    );
    assert!(!e.contains("s3cret"), "{e}");
    let e = refused(dir.path(), &["vote", "localsoup"]);
    assert!(
        e.contains("localsoup") && e.contains("mysql, memcached, hybrid, redis and postgresql"),
        "{e}"
    );
}
