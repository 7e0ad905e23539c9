//! Secrets never leak: every command that stores or prints (load, run,
//! capacity, suite, `results list/show/export` in every format, `report`
//! in every format, `compare`) against a real `redis-server` that wants a
//! password, with a secret planted in every place one can go (the
//! database URL, the environment, properties, labels, suite flags from the
//! config, runner.yaml and the command line). Then every byte the commands
//! printed, every file they wrote and the whole data directory are searched
//! for each secret.
#![cfg(feature = "redis")]

mod util;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sojourn_testkit::redis_server::RedisServer;
use util::*;

/// The server's own password: in the URL, in `redis.password`, in
/// `REDIS_PASSWORD`.
const SERVER: &str = "SrvPw4Xq9";
/// In `--label` values, under a secret name and inside a URL.
const LABEL: &str = "LblPw7Zk2";
/// In `-p` properties that sojourn does not use, under secret names.
const PROPERTY: &str = "PropPw3Mv8";
/// In the suite's flags: the config, runner.yaml and `--flag`.
const FLAG: &str = "FlagPw5Jt1";
/// In an environment variable sojourn reads (`PGPASSWORD`).
const ENV: &str = "EnvPw6Rc4";
const ALL: [&str; 5] = [SERVER, LABEL, PROPERTY, FLAG, ENV];

/// Every command's output, with the command for the failure message.
struct Seen {
    data: PathBuf,
    outputs: Vec<(String, String)>,
}

impl Seen {
    /// Run sojourn with `args` (and `env`) in the data directory; it must
    /// succeed. Its stdout and stderr are kept for the search.
    fn ok(&mut self, args: &[&str], env: &[(&str, &str)]) -> String {
        let mut c = bin();
        c.args(args)
            .arg("--data-dir")
            .arg(&self.data)
            .env("PGPASSWORD", ENV);
        for (k, v) in env {
            c.env(k, v);
        }
        let out = self.keep(args, c.run_to_end());
        ok(&out)
    }

    /// A command given whole (the suite's own flags), kept the same way.
    fn ok_command(&mut self, what: &str, mut c: Command) -> String {
        c.env("PGPASSWORD", ENV);
        let out = self.keep(&[what], c.run_to_end());
        ok(&out)
    }

    fn keep(&mut self, args: &[&str], out: Output) -> Output {
        self.outputs.push((
            args.join(" "),
            format!("{}{}", text(&out.stdout), text(&out.stderr)),
        ));
        out
    }

    /// A run id from the line `recorded as run ID in …`.
    fn last_id(&self) -> String {
        let (_, out) = self.outputs.last().unwrap();
        out.lines()
            .find_map(|l| l.strip_prefix("recorded as run "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("no run recorded:\n{out}"))
            .to_string()
    }
}

/// Every file under `dir`, recursively.
fn files(dir: &Path, into: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            files(&path, into);
        } else {
            into.push(path);
        }
    }
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn no_secret_reaches_any_output_store_or_file() {
    let Some(server) = RedisServer::start(Some(SERVER)) else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let data = scratch.path().join("data");
    let out = scratch.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let mut seen = Seen {
        data: data.clone(),
        outputs: Vec::new(),
    };
    let url = server.url();
    assert!(url.contains(SERVER), "the URL carries the password");
    let port = server.port().to_string();
    let host_port = [
        "-p",
        "redis.host=127.0.0.1",
        "-p",
        &format!("redis.port={port}"),
    ]
    .map(str::to_string);
    let secret_props = [
        "-p",
        &format!("db.passwd={PROPERTY}"),
        "-p",
        &format!("api.key={PROPERTY}"),
        "-p",
        &format!("auth={PROPERTY}"),
    ]
    .map(str::to_string);
    let labels = [
        "--label",
        "experiment=secrets",
        "--label",
        &format!("password={LABEL}"),
        "--label",
        &format!("dsn=postgres://u:{LABEL}@h/x"),
        "--label",
        &format!("note=host=h password={LABEL} dbname=d"),
    ]
    .map(str::to_string);
    let with = |head: &[&str], parts: &[&[String]]| -> Vec<String> {
        head.iter()
            .map(|s| s.to_string())
            .chain(parts.iter().flat_map(|p| p.iter().cloned()))
            .collect()
    };
    let run = |seen: &mut Seen, args: Vec<String>, env: &[(&str, &str)]| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        seen.ok(&a, env)
    };

    // The password in the URL, then in a property, then in the environment.
    let load = with(
        &["load", &url, "-P", "workloadc", "-p", "recordcount=200"],
        &[&secret_props, &labels],
    );
    run(&mut seen, load, &[]);
    let by_url = with(
        &["run", &url, "-P", "workloadc", "-p", "operationcount=300"],
        &[&secret_props, &labels],
    );
    run(&mut seen, by_url, &[]);
    let first = seen.last_id();
    let by_property = with(
        &[
            "run",
            "redis",
            "-P",
            "workloadc",
            "-p",
            "operationcount=300",
            "-p",
            &format!("redis.password={SERVER}"),
        ],
        &[&host_port, &secret_props, &labels],
    );
    run(&mut seen, by_property, &[]);
    let second = seen.last_id();
    let by_env = with(
        &[
            "run",
            "redis",
            "-P",
            "workloadc",
            "-p",
            "operationcount=300",
        ],
        &[&host_port, &labels],
    );
    run(&mut seen, by_env, &[("REDIS_PASSWORD", SERVER)]);

    // A short capacity search: a few steps stored with their labels.
    let capacity = with(
        &[
            "capacity",
            &url,
            "-P",
            "workloadc",
            "-p",
            "recordcount=200",
            "--slo",
            "read.p50<50ms",
            "--start",
            "500",
            "--step",
            "0.3",
            "--settle",
            "0.1",
            "--precision",
            "0.4",
            "--threads",
            "2",
        ],
        &[&secret_props, &labels],
    );
    run(&mut seen, capacity, &[]);

    // A suite: the URL and secret flags in the config, runner.yaml and on
    // the command line (unused flags are kept as labels).
    let suite = scratch.path().join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::write(
        suite.join("redis.yaml"),
        format!(
            "benchmarks:\n- redis_ycsb:\n    flags:\n      sojourn_db: {url}\n      \
             ycsb_record_count: 100\n      ycsb_operation_count: 200\n      \
             ycsb_timelimit: 0\n      ycsb_workload_files: workloadc\n      \
             ycsb_field_count: 1\n      cloud_password: {FLAG}\n      \
             some_cloud_flag: \"postgres://u:{FLAG}@10.0.0.1/db\"\n"
        ),
    )
    .unwrap();
    std::fs::write(
        suite.join("runner.yaml"),
        format!(
            "runner:\n  unordered_tests:\n    num_iterations: 1\n    concurrency: 1\n  \
             pkb_flags:\n    bigquery_token: {FLAG}\n"
        ),
    )
    .unwrap();
    let mut c = bin();
    c.arg("suite")
        .arg(&suite)
        .arg("--data-dir")
        .arg(&data)
        .arg("--no-progress")
        .args(["--flag", &format!("api_token={FLAG}")])
        .args([
            "--flag",
            &format!("cloud_dsn=redis://:{FLAG}@10.0.0.2:6379"),
        ]);
    seen.ok_command("suite", c);

    // memtier's and redis-benchmark's command lines, their password given
    // with -a (glued and apart) and memtier's JSON written.
    let port = server.port().to_string();
    let memtier_json = out.join("memtier.json");
    let mut c = bin();
    c.args([
        "memtier",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-n",
        "50",
        "-c",
        "2",
        "-t",
        "1",
    ])
    .arg(format!("-a{SERVER}"))
    .arg("--json-out-file")
    .arg(&memtier_json)
    .env("SOJOURN_DATA_DIR", &data);
    seen.ok_command("memtier", c);
    let mut c = bin();
    c.args([
        "redis-benchmark",
        "-p",
        &port,
        "-a",
        SERVER,
        "-t",
        "get",
        "-n",
        "50",
        "-q",
    ])
    .env("SOJOURN_DATA_DIR", &data);
    seen.ok_command("redis-benchmark", c);

    // Everything that reads the store back, in every format, to stdout and
    // to files.
    let file = |name: &str| out.join(name).to_string_lossy().into_owned();
    seen.ok(&["results", "list"], &[]);
    seen.ok(&["results", "list", "--label", "experiment=secrets"], &[]);
    seen.ok(&["results", "show", "last"], &[]);
    seen.ok(&["results", "show", &first], &[]);
    for format in ["pkb", "csv", "json", "report", "hdrlog"] {
        seen.ok(
            &["results", "export", &first, &second, "--format", format],
            &[],
        );
        seen.ok(
            &[
                "results",
                "export",
                "last",
                "--format",
                format,
                "-o",
                &file(&format!("export.{format}")),
            ],
            &[],
        );
    }
    seen.ok(
        &[
            "results",
            "query",
            "SELECT key, value FROM run_labels UNION ALL SELECT key, value FROM run_properties",
        ],
        &[],
    );
    for format in ["html", "md", "csv"] {
        seen.ok(
            &[
                "report",
                &first,
                &second,
                "--format",
                format,
                "-o",
                &file(&format!("report.{format}")),
            ],
            &[],
        );
        seen.ok(
            &[
                "report",
                "--label",
                "experiment=secrets",
                "--format",
                format,
            ],
            &[],
        );
    }
    seen.ok(&["compare", &first, &second], &[]);
    seen.ok(&["compare", &first, &second, "--format", "json"], &[]);

    // The search is not vacuous: the outputs do show the runs, their
    // labels and the masked values.
    let all_out: String = seen.outputs.iter().map(|(_, o)| o.as_str()).collect();
    assert!(all_out.contains("experiment=secrets"), "labels listed");
    assert!(all_out.contains("password:***") || all_out.contains("password=***"));
    assert!(
        all_out.contains("cloud_password"),
        "suite flags kept as labels"
    );
    assert!(all_out.contains("capacity"), "capacity ran");
    for (command, output) in &seen.outputs {
        for secret in ALL {
            assert!(
                !output.contains(secret),
                "{secret} printed by `sojourn {command}`:\n{output}"
            );
        }
    }
    let mut written = Vec::new();
    files(&data, &mut written);
    files(&out, &mut written);
    assert!(
        written.iter().any(|p| p.ends_with("results.sqlite")),
        "{written:?}"
    );
    for path in &written {
        let bytes = std::fs::read(path).unwrap();
        for secret in ALL {
            assert!(!contains(&bytes, secret), "{secret} in {}", path.display());
        }
    }
    // The store does hold what was searched (main file or its WAL).
    let store_bytes: Vec<u8> = written
        .iter()
        .filter(|p| p.to_string_lossy().contains("results.sqlite"))
        .flat_map(|p| std::fs::read(p).unwrap())
        .collect();
    assert!(contains(&store_bytes, "cloud_password"));
    assert!(contains(&store_bytes, "experiment"));
}
