//! Fuzzing the parsers of the libraries a user feeds, in-process: property
//! files (read, then planned as `sojourn run` plans them), database URLs
//! with their properties, `--slo`, `--label`, PKB label strings and the
//! redaction of anything echoed. No input may panic or allocate beyond a
//! bound (see `sojourn_testkit::fuzz`). The suite's YAML is fuzzed by the
//! binary's own unit tests, where its reader lives.
//!
//! A short run here; a long one by hand:
//! `SOJOURN_FUZZ_ITERATIONS=200000 SOJOURN_FUZZ_SEED=$RANDOM cargo test -p sojourn --test fuzz`

mod util;

use std::path::Path;

use sojourn_backends::OpenOptions;
use sojourn_core::capacity::parse_slos;
use sojourn_core::output::pkb::parse_labels;
use sojourn_core::plan::Plan;
use sojourn_core::properties::Properties;
use sojourn_core::redact;
use sojourn_core::workload::Phase;
use sojourn_testkit::fuzz::{CountingAlloc, Fuzz};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Inputs per target in the test suite.
const ITERATIONS: u64 = 3000;

/// The shipped workload files: real property files to start from.
fn workloads() -> Vec<Vec<u8>> {
    let dir = util::repo_root().join("workloads");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_file() {
            out.push(std::fs::read(&path).unwrap());
        }
    }
    out.extend([
        b"fieldcount=1000000\nfieldlength=256\n".to_vec(),
        b"recordcount=1000000000000\nrequestdistribution=zipfian\n".to_vec(),
        b"operationcount=1\nthreadcount=100000\ntarget=1e9\n".to_vec(),
        b"hdrhistogram.percentiles=50,99,99.99999\nmeasurementtype=timeseries\n".to_vec(),
        b"workload=vote\nvote.articles=1000\n".to_vec(),
        b"workload=keyvalue\nnum_unique_keys=1000000000000\n".to_vec(),
        b"workload=liops\nSCALE=1G\nNUM_SCHEMAS=4\n".to_vec(),
    ]);
    assert!(out.len() > 8);
    out
}

/// Whether `out` holds a URL whose user-info still has the seeds'
/// password (`scheme://user:pw@`), as opposed to the fuzzer's broken
/// remains of one, which are no longer a URL.
fn shows_password(out: &str) -> bool {
    out.match_indices("://").any(|(i, _)| {
        let rest = &out[i + 3..];
        let end = rest.find(['/', '?', '#', ' ', '\n']).unwrap_or(rest.len());
        rest[..end]
            .split_once(":pw@")
            .is_some_and(|(user, _)| user.chars().all(|c| c.is_ascii_alphanumeric()))
    })
}

#[test]
fn property_files_read_and_plan_without_panicking() {
    let seeds = workloads();
    let seeds: Vec<&[u8]> = seeds.iter().map(Vec::as_slice).collect();
    let mut f = Fuzz::new(&seeds, ITERATIONS);
    let (mut read, mut planned) = (0, 0);
    f.run("reading and planning a property file", |text| {
        let mut p = Properties::new();
        if p.load_str(text, Path::new("fuzzed.properties")).is_ok() {
            read += 1;
            // As `sojourn run` does: the plan, and the unknown keys it names.
            if Plan::from_properties(&p, Phase::Run, &["redis.", "db."]).is_ok() {
                planned += 1;
            }
            let _ = Plan::unknown_keys(&p, &["redis.", "db."]);
        }
    });
    // The fuzzer reached past the reader into the plan.
    assert!(read > 100 && planned > 10, "read {read}, planned {planned}");
}

#[test]
fn urls_and_their_properties_open_without_panicking() {
    let seeds: &[&[u8]] = &[
        b"postgres://bench:pw@127.0.0.1:5432/ycsb?sslmode=require&connections=4",
        b"postgresql://u@[::1]/d?host=/tmp&port=5433",
        b"mysql://root:pw@127.0.0.1:3306/ycsb?ssl-mode=REQUIRED",
        b"redis://:pw@127.0.0.1:6379/0?mode=string",
        b"rediss://127.0.0.1:6380?insecure=true",
        b"memcached://127.0.0.1:11211",
        b"sqlite:/tmp/never/created.sqlite?journal_mode=wal",
        b"memory:?max_ops_per_sec=2000&stall_at=10&stall_ms=3",
        b"null:",
        b"jdbc:postgresql://127.0.0.1/ycsb",
        b"bigtable://127.0.0.1:8086/project/instance/table",
        b"redis",
        b"jdbc",
    ];
    let props_seeds: &[&[u8]] = &[
        b"redis.host=127.0.0.1\nredis.port=6379\nredis.password=pw\nredis.mode=hash\n",
        b"db.url=postgres://u:p@h/d\ndb.user=u\ndb.passwd=p\nconnections=4\n",
        b"redis.command_group=string\nredis.timeout=30000\nfieldcount=1\n",
        b"timeout.ms=100\npool.size=8\nredis.cluster=true\n",
    ];
    let mut urls = Fuzz::new(seeds, ITERATIONS);
    let mut props = Fuzz::new(props_seeds, ITERATIONS);
    let scratch = tempfile::tempdir().unwrap();
    let default_sqlite = scratch.path().join("default.sqlite");
    let mut opened = 0;
    urls.run("opening a URL", |url| {
        let text = String::from_utf8_lossy(&props.input()).into_owned();
        let mut p = Properties::new();
        let _ = p.load_str(&text, Path::new("fuzzed.properties"));
        let options = OpenOptions {
            props: &p,
            default_sqlite: &default_sqlite,
            workers: 4,
        };
        match sojourn_backends::open(url, &options) {
            Ok(_) => opened += 1,
            // An error shows the URL: never its password.
            Err(e) => {
                let shown = e.to_string();
                assert!(!shows_password(&shown), "{shown}");
            }
        }
    });
    assert!(opened > 100, "opened {opened}");
    // Configuring touches nothing: no file was created.
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
}

#[test]
fn slos_parse_without_panicking() {
    let seeds: &[&[u8]] = &[
        b"read.p99<10ms,update.p99.9<50ms,all.p50<1ms",
        b"*.p99.999<2s, insert.p50<100us , read-modify-write.p90<1500ns",
        b"scan.p95<1s,delete.p99<250us",
    ];
    let mut f = Fuzz::new(seeds, ITERATIONS);
    let mut parsed = 0;
    f.run("parsing an SLO", |text| {
        if parse_slos(text).is_ok() {
            parsed += 1;
        }
    });
    // Some inputs stayed valid, so the fuzzer reached past the first check.
    assert!(parsed * 200 > f.iterations, "parsed {parsed}");
}

#[test]
fn labels_and_echoes_parse_without_panicking_or_showing_a_password() {
    let seeds: &[&[u8]] = &[
        b"experiment=latency_test",
        b"dsn=postgres://u:pw@h:5432/x?password=pw",
        b"|vm_count:3|threads:16|target:1000|password:***|",
        b"note=host=h password=pw dbname=d sslmode=require",
        b"-p db.passwd=pw --label token=abc redis://:pw@h",
    ];
    let mut f = Fuzz::new(seeds, ITERATIONS);
    let mut parsed = 0;
    f.run("parsing a label or a PKB label string", |text| {
        if sojourn_session::parse_label(text).is_ok() {
            parsed += 1;
        }
        let _ = parse_labels(text);
        // Whatever is echoed goes through these: bounded by the input, and
        // the password of a URL that is still whole never shown.
        for out in [
            redact::text(text),
            redact::redact_url(text),
            redact::argument(text),
        ] {
            assert!(
                out.len() <= 2 * text.len() + 16,
                "{} from {}",
                out.len(),
                text.len()
            );
            assert!(!shows_password(&out), "{out}");
        }
    });
    assert!(parsed > 100, "parsed {parsed}");
}
