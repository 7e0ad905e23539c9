//! Bad input: every kind gets a clear error naming the file and line, flag
//! or value and what would be accepted, a non-zero exit, and never a panic.

mod util;

use std::io::Write;

use util::*;

fn fails(args: &[&str], expect: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = sojourn(dir.path(), args);
    let err = text(&out.stderr);
    assert!(
        !out.status.success(),
        "{args:?} should fail; stderr:\n{err}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
    for e in expect {
        assert!(err.contains(e), "{args:?}: stderr lacks {e:?}:\n{err}");
    }
}

#[test]
fn bad_value_in_a_file_names_file_line_and_accepted_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.properties");
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, "# a workload\nreadproportion=1\nrecordcount=many").unwrap();
    fails(
        &["run", "null:", "-P", path.to_str().unwrap()],
        &["bad.properties:3", "recordcount", "many"],
    );
    let path2 = dir.path().join("dist.properties");
    std::fs::write(&path2, "recordcount=10\nrequestdistribution=zipfan\n").unwrap();
    fails(
        &["run", "null:", "-P", path2.to_str().unwrap()],
        &["dist.properties:2", "zipfan", "zipfian", "latest"],
    );
}

#[test]
fn impossible_combinations_are_refused_before_running() {
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "readproportion=0",
            "-p",
            "updateproportion=0",
        ],
        &["proportion"],
    );
    fails(
        &[
            "load",
            "null:",
            "-P",
            "workloada",
            "-p",
            "insertstart=900",
            "-p",
            "insertcount=200",
        ],
        &["insertstart", "recordcount"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-p", "operationcount=-5"],
        &["operationcount", "-5"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-p", "recordcount=-1"],
        &["recordcount"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-target", "0"],
        &["--target", "target"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-target", "-100"],
        &["target"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-threads", "0"],
        &["threadcount"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-p", "threadcount=-3"],
        &["threadcount", "1 to 100000"],
    );
    // Refused, not aborted on allocation.
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "fieldcount=100000000",
        ],
        &["fieldcount", "1 to 1000000"],
    );
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "fieldcount=1000",
            "-p",
            "fieldlength=1000000",
        ],
        &["fieldlength", "256 MiB"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-p", "operationcount=0"],
        &["operationcount", "maxexecutiontime"],
    );
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "dataintegrity=true",
            "-p",
            "fieldlengthdistribution=uniform",
        ],
        &["dataintegrity", "constant"],
    );
}

/// A warm-up that covers the whole run would measure nothing.
#[test]
fn a_warmup_as_long_as_the_run_is_refused() {
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "--warmup",
            "10",
            "-p",
            "maxexecutiontime=2",
        ],
        &["warmup", "maxexecutiontime", "nothing would be measured"],
    );
}

/// A typo is often why a value is missing: the hint comes with the error.
#[test]
fn an_unknown_property_is_named_when_the_plan_then_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typo.properties");
    std::fs::write(&path, "recordcount=10\noperationcout=100\n").unwrap();
    fails(
        &["run", "null:", "-P", path.to_str().unwrap()],
        &[
            "operationcount",
            "typo.properties:2",
            "did you mean 'operationcount'",
        ],
    );
}

/// A backend property no backend reads (a typo, or a YCSB binding's
/// setting sojourn does not implement) is named, with the likeliest meant
/// one; those a backend reads pass in silence.
#[test]
fn unknown_backend_properties_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloadc",
            "-p",
            "operationcount=300",
            "-p",
            "redis.hots=h",
            "-p",
            "db.batchsize=10",
            "-p",
            "redis.host=h",
            "-p",
            "redis.command_group=string",
            "-p",
            "db.driver=org.postgresql.Driver",
        ],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("unknown property 'redis.hots' (did you mean 'redis.host'?)"),
        "{err}"
    );
    assert!(err.contains("unknown property 'db.batchsize'"), "{err}");
    for read in ["'redis.host'", "'redis.command_group'", "'db.driver'"] {
        assert!(!err.contains(&format!("unknown property {read}")), "{err}");
    }
}

#[test]
fn missing_files_unknown_databases_and_malformed_arguments() {
    fails(
        &["run", "null:", "-P", "no/such/workload"],
        &["no/such/workload"],
    );
    // The OS's reason once, not once per link of the error chain.
    let dir = tempfile::tempdir().unwrap();
    let err = text(&sojourn(dir.path(), &["run", "null:", "-P", "/no/such/file"]).stderr);
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
    fails(
        &["run", "--db", "nosuchdb://x", "-P", "workloada"],
        &["nosuchdb", "sqlite:"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-p", "recordcount"],
        &["recordcount", "key=value"],
    );
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "hdrhistogram.percentiles=95,abc",
        ],
        &["abc"],
    );
}

#[test]
fn run_on_an_empty_table_says_to_load_first() {
    fails(&["run", "-P", "workloada"], &["empty", "sojourn load"]);
}

#[test]
fn unknown_property_warns_with_the_nearest_name_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "readproportoin=0.5",
        ],
    );
    ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("readproportoin") && err.contains("readproportion"),
        "{err}"
    );
}

#[test]
fn passwords_never_appear_in_output() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "db.passwd=hunter2",
            "-p",
            "db.url=postgres://me:hunter2@127.0.0.1/db",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    ok(&out);
    let all = format!(
        "{}{}{}",
        text(&out.stdout),
        text(&out.stderr),
        std::fs::read_to_string(&json).unwrap()
    );
    assert!(!all.contains("hunter2"), "{all}");
}
