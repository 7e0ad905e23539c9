use super::*;
use clap::Parser;

/// The phase arguments of `sojourn run ARGS...`, as main parses them.
fn args(line: &[&str]) -> PhaseArgs {
    let argv = ["sojourn", "run"].iter().chain(line).map(OsString::from);
    let cli = crate::cli::Cli::try_parse_from(crate::argv::normalise_args(argv))
        .unwrap_or_else(|e| panic!("{line:?}: {e}"));
    match cli.command {
        crate::cli::Command::Run(a) => a,
        _ => unreachable!(),
    }
}

fn translated(line: &[&str]) -> Translation {
    translate(&args(line))
        .unwrap()
        .expect("a yb-sample-apps line")
}

fn refused(line: &[&str]) -> String {
    match translate(&args(line)) {
        Ok(_) => panic!("{line:?} was not refused"),
        Err(e) => e.to_string(),
    }
}

fn prop<'a>(t: &'a Translation, key: &str) -> &'a str {
    t.props.get_str(key, "(not set)")
}

#[test]
fn the_large_dataset_load_line() {
    let t = translated(&[
        "--workload",
        "CassandraKeyValue",
        "--nodes",
        "127.0.0.1:9042",
        "--nouuid",
        "--value_size",
        "256",
        "--num_threads_read",
        "0",
        "--num_threads_write",
        "256",
        "--num_unique_keys",
        "30000000000",
    ]);
    assert_eq!(t.db_url, "cassandra://127.0.0.1:9042/ybdemo_keyspace");
    for (k, v) in [
        ("workload", "keyvalue"),
        ("table", "CassandraKeyValue"),
        ("num_unique_keys", "30000000000"),
        ("num_threads_write", "256"),
        ("num_threads_read", "0"),
        ("value_size", "256"),
        ("nouuid", "true"),
        // yb-sample-apps' CassandraKeyValue defaults.
        ("num_writes", "2000000"),
        ("num_reads", "1500000"),
    ] {
        assert_eq!(prop(&t, k), v, "{k}");
    }
    assert_eq!(
        t.props.entry("num_reads").unwrap().origin,
        Origin::Flag("yb-sample-apps' CassandraKeyValue default")
    );
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    assert!(
        t.notes[0].contains("--num_writes 2000000 (10000)")
            && t.notes[0].contains("--num_reads 1500000 (100000)")
            && !t.notes[0].contains("value_size")
            && !t.notes[0].contains("uuid"),
        "{}",
        t.notes[0]
    );
    // The plan sojourn's own spelling builds from these properties.
    t.check_ends(Phase::Run).unwrap();
}

#[test]
fn defaults_and_urls_of_each_workload() {
    let t = translated(&[
        "--workload",
        "RedisKeyValue",
        "--nodes",
        "127.0.0.1:7000,localhost",
    ]);
    assert_eq!(t.db_url, "redis://127.0.0.1:7000,localhost:6379");
    assert_eq!(prop(&t, "redis.mode"), "string");
    assert_eq!(prop(&t, "num_threads_read"), "32");
    assert_eq!(prop(&t, "num_reads"), "-1");
    assert_eq!(prop(&t, "value_size"), "10", "val:999999 is 10 bytes");
    // A random UUID per line, as yb-sample-apps makes.
    let uuid = prop(&t, "uuid").to_string();
    check_uuid(&uuid).unwrap();
    assert_eq!(prop(&t, "nouuid"), "false");
    assert_ne!(
        prop(
            &translated(&["--workload", "RedisKeyValue", "--nodes", "h"]),
            "uuid"
        ),
        uuid
    );
    assert!(
        t.notes[0].contains(&format!("--uuid {uuid}")),
        "{:?}",
        t.notes
    );
    let e = t.check_ends(Phase::Run).unwrap_err().to_string();
    assert!(
        e.contains("--num_reads -1 (yb-sample-apps' RedisKeyValue default)")
            && e.contains("--run_time"),
        "{e}"
    );
    t.check_ends(Phase::Load).unwrap();

    let t = translated(&[
        "--workload",
        "sqlinserts",
        "--nodes",
        "[::1],db2:5432",
        "--username",
        "yb user",
        "--password",
        "p@ss:w/rd%",
        "--default_postgres_database",
        "yugabyte",
        "--run_time",
        "30",
    ]);
    assert_eq!(
        t.db_url,
        "postgres://yb%20user:p%40ss%3Aw%2Frd%25@[::1]:5433,db2:5432/yugabyte\
         ?load_balance_hosts=random"
    );
    assert_eq!(prop(&t, "table"), "PostgresqlKeyValue");
    assert_eq!(prop(&t, "maxexecutiontime"), "30");
    assert_eq!(prop(&t, "value_size"), "11");
    assert!(!sojourn_core::redact::redact_url(&t.db_url).contains("p%40ss"));
}

#[test]
fn flags_translate_to_the_workload_s_own_terms() {
    let t = translated(&[
        "--workload",
        "RedisKeyValue",
        "--nodes",
        "h:1",
        "--uuid",
        "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
        "--read_only",
        "--num_threads_read",
        "4",
        "--num_threads_write",
        "3",
        "--read_rate",
        "50",
        "--max_written_key",
        "999",
        "--num_reads",
        "-1",
        "--run_time",
        "2",
        "--num_threads",
        "64",
        "--use_ascii_values",
    ]);
    assert_eq!(prop(&t, "uuid"), "1b4e28ba-2fa1-11d2-883f-0016d3cca427");
    assert_eq!(prop(&t, "read_only"), "true");
    assert_eq!(prop(&t, "read_rate"), "200", "50 per reader, 4 readers");
    assert_eq!(prop(&t, "max_written_key"), "1000", "keys 0..=999");
    assert_eq!(prop(&t, "maxexecutiontime"), "2");
    assert_eq!(prop(&t, "write_rate"), "(not set)");
    let notes = t.notes.join("\n");
    assert!(notes.contains("--num_threads 64 is not read"), "{notes}");
    assert!(
        notes.contains("--num_threads_write 3 is not read"),
        "{notes}"
    );
    t.check_ends(Phase::Run).unwrap();
}

#[test]
fn refusals_name_the_flag() {
    let yb = ["--workload", "RedisKeyValue", "--nodes", "h:1"];
    let with = |more: &[&str]| refused(&[&yb[..], more].concat());
    let e = with(&["--local_reads", "--batch_size", "10", "--num_reads", "5"]);
    assert!(
        e.starts_with("--local_reads: a flag of yb-sample-apps that sojourn does not read")
            && e.contains("(nor --batch_size)")
            && e.contains("it reads --workload, --nodes, --num_unique_keys"),
        "{e}"
    );
    // Not one of yb-sample-apps' flags either, but in its spelling.
    let e = with(&["--num_reads_per_write", "3"]);
    assert!(e.starts_with("--num_reads_per_write: "), "{e}");
    assert!(with(&["-P", "workloads/keyvalue"]).contains("leave out -P"));
    let e = with(&["--db", "redis://u:secret@h"]);
    assert!(e.contains("leave out --db") && !e.contains("secret"), "{e}");
    assert!(with(&["--password", "x"]).contains("requires --username"));
    assert!(with(&["--read_only"]).contains("--nouuid"));
    assert!(with(&["--uuid", "nope"]).contains("8-4-4-4-12"));
    assert!(with(&["--read_rate", "0"]).contains("--read_rate 0"));
    let e = refused(&["--workload", "CassandraKeyValue"]);
    assert!(e.contains("needs --nodes"), "{e}");
    let e = refused(&["--workload", "SqlUpdates", "--nodes", "h"]);
    assert!(
        e.contains("CassandraKeyValue, RedisKeyValue and SqlInserts"),
        "{e}"
    );
    let e = refused(&["--workload", "keyvalue", "--num_reads", "5"]);
    assert!(e.starts_with("--num_reads is yb-sample-apps' flag"), "{e}");
    for nodes in ["h:x", "a,,b", ":80", "::1:80", "h:0"] {
        let e = refused(&["--workload", "RedisKeyValue", "--nodes", nodes]);
        assert!(e.starts_with(&format!("--nodes {nodes}: ")), "{e}");
    }
    let t = translated(&yb);
    let e = t.check_property("num_reads=5").unwrap_err().to_string();
    assert!(e.contains("give that instead"), "{e}");
    let e = t.check_property("value_size=64").unwrap_err().to_string();
    assert!(e.contains("yb-sample-apps' flags (its default: 10)"), "{e}");
    t.check_property("read_distribution=latest").unwrap();
    // Sojourn's own spelling has no translation.
    assert!(translate(&args(&["-P", "workloads/keyvalue"]))
        .unwrap()
        .is_none());
}

#[test]
fn unread_flags_are_marked_on_yb_lines_only() {
    let mark = |line: &[&str]| -> Vec<String> {
        mark_unread_flags(line.iter().map(OsString::from).collect())
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(
        mark(&[
            "run",
            "--workload=SqlInserts",
            "--truncate",
            "--batch_size=4",
            "--ssl_cert",
            "c",
            "--num_reads",
            "1"
        ]),
        [
            "run",
            "--workload=SqlInserts",
            "--yb-sample-apps-flag=truncate",
            "--yb-sample-apps-flag=batch_size",
            "--yb-sample-apps-flag=ssl_cert",
            "--num_reads",
            "1"
        ]
    );
    let plain = ["run", "--workload", "keyvalue", "--truncate"];
    assert_eq!(mark(&plain), plain);
}

#[test]
fn the_password_stays_out_of_debug_output() {
    let a = args(&[
        "--workload",
        "RedisKeyValue",
        "--nodes",
        "h",
        "--username",
        "u",
        "--password",
        "hunter2",
    ]);
    assert!(!format!("{a:?}").contains("hunter2"));
}
