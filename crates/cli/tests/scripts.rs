//! pgbench's scripts (`workload=script`) end to end against a real
//! PostgreSQL and pgbench itself: pgbench's tables loaded as `pgbench -i`
//! loads them (compared row for row with pgbench's own), the builtins
//! making exactly pgbench's server work, a script of one's own with every
//! random function, `\if`, `\gset` and `\sleep`, each protocol, and errors
//! that name the file and line or fail one transaction and lose nothing.
#![cfg(feature = "postgres")]

mod util;

use sojourn_testkit::postgres_server::{self as pg, Postgres};
use util::*;

/// One server for the whole binary's steps: each step below uses a
/// database of its own.
#[test]
fn scripts_on_postgres() {
    let Some(db) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let sojourn_db = database(&db, "sj");
    let pgbench_db = database(&db, "pgb");
    loads_pgbench_s_tables_as_pgbench_does(&db, dir.path(), &sojourn_db, &pgbench_db);
    tpcb_like_does_pgbench_s_work(&db, dir.path(), &sojourn_db);
    each_tool_runs_on_the_other_s_tables(&db, dir.path(), &sojourn_db, &pgbench_db);
    a_script_of_one_s_own_takes_its_branches_as_often_as_drawn(&db, dir.path());
    errors_name_the_line_or_fail_one_transaction(&db, dir.path());
    pgbench_s_command_line_prints_pgbench_s_lines(&db, dir.path());
    conflicts_are_tried_again_and_the_vacuum_empties_the_history(&db, dir.path());
    a_pipeline_is_sent_whole_as_pgbench_sends_it(&db, dir.path());
    // TPC-C runs through the scripts' SQL capability.
    let tpcc = database(&db, "tpcc");
    let value = |sql: &str| -> f64 {
        let v = sql_in(&tpcc, sql);
        v.parse().unwrap_or_else(|e| panic!("{sql}: {v:?}: {e}"))
    };
    let exec = |sql: &str| {
        sql_in(&tpcc, sql);
    };
    tpcc_end_to_end(dir.path(), &tpcc, &value, &exec);
}

/// A fresh database on `db`, as a URL.
fn database(db: &Postgres, name: &str) -> String {
    db.psql(&format!("DROP DATABASE IF EXISTS {name}"));
    db.psql(&format!("CREATE DATABASE {name}"));
    db.url()
        .replace(&format!("/{}", pg::DATABASE), &format!("/{name}"))
}

/// `psql` in another database than the server's own.
fn sql_in(url: &str, sql: &str) -> String {
    let out = std::process::Command::new("psql")
        .args([url, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .run_to_end();
    ok(&out).trim().to_string()
}

fn pgbench(url: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new("pgbench")
        .args(args)
        .arg(url)
        .run_to_end()
}

/// What pgbench's four tables hold, for comparison: per table, the rows
/// and sums of every column, fillers' lengths and NULLs.
fn contents(url: &str) -> String {
    sql_in(
        url,
        "SELECT (SELECT count(*) || ',' || sum(bid) || ',' || sum(bbalance) || ',' || \
         count(filler) FROM pgbench_branches) || ' ' || \
         (SELECT count(*) || ',' || sum(tid) || ',' || sum(bid) || ',' || sum(tbalance) || ',' \
         || count(filler) FROM pgbench_tellers) || ' ' || \
         (SELECT count(*) || ',' || sum(aid) || ',' || sum(bid) || ',' || sum(abalance) || ',' \
         || count(filler) || ',' || min(octet_length(filler)) || ',' || \
         max(octet_length(filler)) FROM pgbench_accounts) || ' ' || \
         (SELECT count(*) FROM pgbench_history) || ' ' || \
         (SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint WHERE conrelid \
         IN ('pgbench_accounts'::regclass, 'pgbench_branches'::regclass, \
         'pgbench_tellers'::regclass))",
    )
}

fn loads_pgbench_s_tables_as_pgbench_does(
    _db: &Postgres,
    data: &std::path::Path,
    sojourn_db: &str,
    pgbench_db: &str,
) {
    let out = sojourn(
        data,
        &[
            "load",
            "--db",
            sojourn_db,
            "-b",
            "tpcb-like",
            "--scale",
            "2",
            "-threads",
            "2",
        ],
    );
    let stderr = ok(&out).to_string() + &text(&out.stderr);
    assert!(
        stderr.contains("loaded 200000 accounts in 2 batches"),
        "{stderr}"
    );
    let made = pgbench(pgbench_db, &["-i", "-s", "2", "-q"]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let ours = contents(sojourn_db);
    assert_eq!(
        ours,
        contents(pgbench_db),
        "sojourn's tables, then pgbench's"
    );
    assert_eq!(
        ours,
        "2,3,0,0 20,210,30,0,0 200000,20000100000,300000,0,200000,84,84 0 \
         pgbench_accounts_pkey,pgbench_branches_pkey,pgbench_tellers_pkey"
    );
    // A second load into loaded tables is refused, saying what to do.
    let again = refused(
        data,
        &[
            "load",
            "--db",
            sojourn_db,
            "-b",
            "tpcb-like",
            "--scale",
            "2",
        ],
    );
    assert!(again.contains("--drop"), "{again}");
}

fn tpcb_like_does_pgbench_s_work(_db: &Postgres, data: &std::path::Path, url: &str) {
    let before = sql_in(
        url,
        "SELECT sum(n_tup_upd) FROM pg_stat_user_tables WHERE relname IN \
         ('pgbench_accounts', 'pgbench_tellers', 'pgbench_branches')",
    );
    let json = data.join("tpcb.json");
    let out = sojourn(
        data,
        &[
            "run",
            "--db",
            url,
            "-b",
            "tpcb-like",
            "-p",
            "operationcount=300",
            "-threads",
            "4",
            "--seed",
            "7",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let s = parse_summary(&ok(&out));
    assert_eq!(get(&s, "tpcb-like", "Return=OK"), 300.0, "{s:#?}");
    // Each statement is an operation of its own (commands 5 to 11).
    for n in 5..=11 {
        assert_eq!(
            get(&s, &format!("tpcb-like:{n}"), "Return=OK"),
            300.0,
            "{s:#?}"
        );
    }
    // pgbench's work: one history row and three updated rows per
    // transaction, and every balance's sum the sum of the deltas.
    assert_eq!(sql_in(url, "SELECT count(*) FROM pgbench_history"), "300");
    let sums = sql_in(
        url,
        "SELECT (SELECT sum(abalance) FROM pgbench_accounts) || ',' || (SELECT sum(tbalance) \
         FROM pgbench_tellers) || ',' || (SELECT sum(bbalance) FROM pgbench_branches) || ',' \
         || (SELECT sum(delta) FROM pgbench_history)",
    );
    let parts: Vec<&str> = sums.split(',').collect();
    assert!(parts.iter().all(|p| *p == parts[3]), "{sums}");
    sql_in(url, "SELECT pg_stat_force_next_flush()");
    let after = sql_in(
        url,
        "SELECT sum(n_tup_upd) FROM pg_stat_user_tables WHERE relname IN \
         ('pgbench_accounts', 'pgbench_tellers', 'pgbench_branches')",
    );
    let updated = after.parse::<i64>().unwrap() - before.parse::<i64>().unwrap_or(0);
    assert_eq!(updated, 900, "three updated rows per transaction");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["ops"]["tpcb-like"]["count"], 300, "{report}");
    assert_eq!(report["ops"]["tpcb-like:6"]["count"], 300, "{report}");
}

fn each_tool_runs_on_the_other_s_tables(
    _db: &Postgres,
    data: &std::path::Path,
    sojourn_db: &str,
    pgbench_db: &str,
) {
    let p = pgbench(sojourn_db, &["-S", "-t", "100", "-n"]);
    let out = text(&p.stdout);
    assert!(p.status.success(), "{out}\n{}", text(&p.stderr));
    assert!(
        out.contains("number of transactions actually processed: 100/100"),
        "{out}"
    );
    for protocol in ["simple", "extended", "prepared"] {
        let out = sojourn(
            data,
            &[
                "run",
                "--db",
                pgbench_db,
                "-b",
                "select-only",
                "-p",
                "operationcount=200",
                "-p",
                &format!("script.protocol={protocol}"),
                "-threads",
                "2",
            ],
        );
        let s = parse_summary(&ok(&out));
        assert_eq!(
            get(&s, "select-only", "Return=OK"),
            200.0,
            "{protocol}: {s:#?}"
        );
    }
}

fn a_script_of_one_s_own_takes_its_branches_as_often_as_drawn(
    _db: &Postgres,
    data: &std::path::Path,
) {
    let url = database(_db, "own");
    sql_in(
        &url,
        "CREATE TABLE script_log(branch text, r int, doubled int, g int, e int, z int, p int, h \
         bigint)",
    );
    let script = data.join("mine.sql");
    std::fs::write(
        &script,
        "-- every random function, a branch by range, a value kept and a sleep
\\set r random(1, 100)
\\set g random_gaussian(1, 100, 2.5)
\\set e random_exponential(1, 100, 2.0)
\\set z random_zipfian(1, 100, 1.5)
\\set p permute(:r - 1, 100)
\\set h hash(:r) # hash_fnv1a(:r) # hash_murmur2(:r, 7)
SELECT :r * 2 AS doubled \\gset
\\if :r <= 30
INSERT INTO script_log VALUES ('low', :r, :doubled, :g, :e, :z, :p, :h);
\\elif :r <= 80
INSERT INTO script_log VALUES ('mid', :r, :doubled, :g, :e, :z, :p, :h);
\\else
INSERT INTO script_log VALUES ('high', :r, :doubled, :g, :e, :z, :p, :h);
\\endif
\\sleep 100 us
",
    )
    .unwrap();
    let n = 2000;
    let out = sojourn(
        data,
        &[
            "run",
            "--db",
            &url,
            "-f",
            script.to_str().unwrap(),
            "-p",
            &format!("operationcount={n}"),
            "-threads",
            "4",
            "--seed",
            "11",
        ],
    );
    let s = parse_summary(&ok(&out));
    assert_eq!(get(&s, "mine", "Return=OK"), n as f64, "{s:#?}");
    let rows = sql_in(
        &url,
        "SELECT count(*) FILTER (WHERE branch = 'low' AND r <= 30) || ',' || \
         count(*) FILTER (WHERE branch = 'mid' AND r > 30 AND r <= 80) || ',' || \
         count(*) FILTER (WHERE branch = 'high' AND r > 80) || ',' || \
         count(*) FILTER (WHERE doubled = 2 * r) || ',' || \
         count(*) FILTER (WHERE g BETWEEN 1 AND 100 AND e BETWEEN 1 AND 100 AND z BETWEEN 1 \
         AND 100 AND p BETWEEN 0 AND 99) FROM script_log",
    );
    let v: Vec<f64> = rows.split(',').map(|x| x.parse().unwrap()).collect();
    assert_eq!(v[3], n as f64, "\\gset kept r * 2 in every row: {rows}");
    assert_eq!(v[4], n as f64, "every draw in its range: {rows}");
    assert_eq!(v[0] + v[1] + v[2], n as f64, "{rows}");
    // Each branch as often as its condition's probability says, within
    // 5 binomial standard deviations.
    for (count, p) in [(v[0], 0.3), (v[1], 0.5), (v[2], 0.2)] {
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        assert!((count - n as f64 * p).abs() < 5.0 * sd, "{rows}");
    }
    // The exponential and zipfian draws lean to the low end; the
    // gaussian centres.
    let means = sql_in(
        &url,
        "SELECT round(avg(e)) || ',' || round(avg(z)) || ',' || round(avg(g)) FROM script_log",
    );
    let m: Vec<f64> = means.split(',').map(|x| x.parse().unwrap()).collect();
    assert!(
        m[0] < 45.0 && m[1] < 20.0 && (45.0..=56.0).contains(&m[2]),
        "{means}"
    );
}

fn errors_name_the_line_or_fail_one_transaction(_db: &Postgres, data: &std::path::Path) {
    let url = database(_db, "errs");
    let bad = data.join("bad.sql");
    std::fs::write(&bad, "SELECT 1;\n\n\\set x random(1, 10) +\n").unwrap();
    let err = refused(
        data,
        &[
            "run",
            "--db",
            &url,
            "-f",
            bad.to_str().unwrap(),
            "-p",
            "operationcount=1",
        ],
    );
    assert!(
        err.contains(&format!(
            "{}:3: syntax error in command \"set\"",
            bad.display()
        )),
        "{err}"
    );
    let shell = data.join("shell.sql");
    std::fs::write(&shell, "\\setshell x echo 1\n").unwrap();
    let err = refused(
        data,
        &[
            "run",
            "--db",
            &url,
            "-f",
            shell.to_str().unwrap(),
            "-p",
            "operationcount=1",
        ],
    );
    assert!(
        err.contains("shell.sql:1: \\setshell runs a shell command"),
        "{err}"
    );
    // Division by zero in every third transaction: those fail, named;
    // the others run.
    let div = data.join("div.sql");
    std::fs::write(&div, "\\set r random(0, 2)\n\\set q 10 / :r\nSELECT :q;\n").unwrap();
    let out = sojourn(
        data,
        &[
            "run",
            "--db",
            &url,
            "-f",
            div.to_str().unwrap(),
            "-p",
            "operationcount=300",
            "--seed",
            "3",
        ],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "a third failed, not all: {stderr}");
    let s = parse_summary(&text(&out.stdout));
    let failed = get_or_zero(&s, "div", "Return=BAD_REQUEST");
    let okays = get(&s, "div", "Return=OK");
    assert_eq!(failed + okays, 300.0, "{s:#?}");
    assert!((60.0..140.0).contains(&failed), "about a third: {s:#?}");
    assert!(
        stderr.contains(" × division by zero (client "),
        "the failures named: {stderr}"
    );
}

/// `sojourn pgbench`: pgbench's options and environment, its `-i`, and its
/// summary lines; pgbench then runs on what it loaded.
fn pgbench_s_command_line_prints_pgbench_s_lines(db: &Postgres, data: &std::path::Path) {
    database(db, "pgcli");
    let port = db.port().to_string();
    let with_env = |args: &[&str]| {
        bin()
            .arg("pgbench")
            .args(args)
            .env("PGHOST", "127.0.0.1")
            .env("PGPORT", &port)
            .env("PGUSER", pg::USER)
            .env("PGPASSWORD", pg::PASSWORD)
            .env("SOJOURN_DATA_DIR", data)
            .run_to_end()
    };
    let init = with_env(&["-i", "-s", "2", "pgcli"]);
    assert!(init.status.success(), "{}", text(&init.stderr));
    assert!(text(&init.stdout).is_empty(), "-i prints nothing on stdout");
    let url = db.url().replace(&format!("/{}", pg::DATABASE), "/pgcli");
    assert_eq!(
        sql_in(&url, "SELECT count(*) FROM pgbench_accounts"),
        "200000"
    );
    let theirs = pgbench(&url, &["-S", "-t", "100", "-n"]);
    assert!(theirs.status.success(), "{}", text(&theirs.stderr));
    let run = with_env(&[
        "-c", "4", "-t", "250", "-S", "-r", "-M", "prepared", "pgcli",
    ]);
    let out = ok(&run);
    for line in [
        "transaction type: <builtin: select only>\n",
        "scaling factor: 2\n",
        "query mode: prepared\n",
        "number of clients: 4\n",
        "number of transactions per client: 250\n",
        "number of transactions actually processed: 1000/1000\n",
        "number of failed transactions: 0 (0.000%)\n",
        " - statement latencies in milliseconds and failures:\n",
    ] {
        assert!(out.contains(line), "{line:?} in\n{out}");
    }
    for prefix in [
        "latency average = ",
        "latency stddev = ",
        "tps = ",
        "# sojourn: response time p50 ",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(prefix)),
            "{prefix} in\n{out}"
        );
    }
    let e = bin().args(["pgbench", "-C", "pgcli"]).run_to_end();
    assert!(!e.status.success());
    assert!(
        text(&e.stderr).contains("-C is not one sojourn reads"),
        "{}",
        text(&e.stderr)
    );
}

/// pgbench's `--max-tries`: a transaction that cannot be serialized is
/// run again until it commits, each commit counted once (the server's
/// balance moves by exactly the transactions processed), its retries
/// counted apart and equal to the failed tries of the statement that
/// conflicted; with one try those transactions fail, named, and the
/// others run. pgbench's vacuum empties the history first; `-n` leaves it.
fn conflicts_are_tried_again_and_the_vacuum_empties_the_history(
    db: &Postgres,
    data: &std::path::Path,
) {
    let url = database(db, "conflicts");
    ok(&sojourn(
        data,
        &["load", "--db", &url, "-b", "tpcb-like", "--scale", "1"],
    ));
    // Four clients on one row under REPEATABLE READ, each holding it a
    // millisecond: the server refuses most of the updates that overlap.
    let hot = data.join("hot.sql");
    std::fs::write(
        &hot,
        "BEGIN ISOLATION LEVEL REPEATABLE READ;\n\
         UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1;\n\
         SELECT pg_sleep(0.001);\n\
         END;\n",
    )
    .unwrap();
    let balance = || -> i64 {
        sql_in(&url, "SELECT bbalance FROM pgbench_branches")
            .parse()
            .unwrap()
    };
    let history = || sql_in(&url, "SELECT count(*) FROM pgbench_history");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "pgbench",
            "-c",
            "4",
            "-t",
            "100",
            "-r",
            "-f",
            hot.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.push(&url);
        bin().args(&args).env("SOJOURN_DATA_DIR", data).run_to_end()
    };
    let number = |out: &str, prefix: &str| -> u64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix} in\n{out}"));
        line[prefix.len()..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    sql_in(
        &url,
        "INSERT INTO pgbench_history (tid, bid, aid, delta) VALUES (1, 1, 1, 0)",
    );

    let before = balance();
    let tried = run(&["--max-tries=1000"]);
    let out = ok(&tried);
    assert!(
        text(&tried.stderr).contains("starting vacuum...end."),
        "{}",
        text(&tried.stderr)
    );
    assert_eq!(history(), "0", "pgbench's vacuum truncates the history");
    for line in [
        "maximum number of tries: 1000\n",
        "number of transactions actually processed: 400/400\n",
        "number of failed transactions: 0 (0.000%)\n",
    ] {
        assert!(out.contains(line), "{line:?} in\n{out}");
    }
    assert_eq!(balance() - before, 400, "each transaction committed once");
    let retried = number(&out, "number of transactions retried: ");
    let retries = number(&out, "total number of retries: ");
    assert!(retried > 0 && retries >= retried, "{out}");
    let update = out
        .lines()
        .find(|l| l.ends_with("UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1;"))
        .unwrap_or_else(|| panic!("the UPDATE's -r line in\n{out}"));
    let failed_tries: u64 = update.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(
        failed_tries, retries,
        "each retry follows one refused UPDATE: {out}"
    );

    sql_in(
        &url,
        "INSERT INTO pgbench_history (tid, bid, aid, delta) VALUES (1, 1, 1, 0)",
    );
    let before = balance();
    let once = run(&["-n"]);
    let out = ok(&once);
    assert_eq!(history(), "1", "-n: no vacuum, the history stays");
    let processed = number(&out, "number of transactions actually processed: ");
    let failed = number(&out, "number of failed transactions: ");
    assert_eq!(processed + failed, 400, "{out}");
    assert!(failed > 0, "one try: the conflicts fail: {out}");
    assert_eq!(
        balance() - before,
        processed as i64,
        "failed ones rolled back"
    );
    assert!(!out.contains("retried"), "no retries with one try: {out}");
    let stderr = text(&once.stderr);
    assert!(
        stderr.contains("could not serialize access due to concurrent update (SQLSTATE 40001)"),
        "the failures in the server's words: {stderr}"
    );
}

/// `\\startpipeline` … `\\endpipeline` sent as libpq's pipeline mode
/// sends it: the commands between go out together with one `Sync`, so
/// they are one implicit transaction on the server. A pipeline whose
/// second command fails leaves nothing of its first (as pgbench's), where
/// the same commands sent one at a time commit it; a pipelined
/// transaction of pgbench's tables makes exactly its server work; with
/// `-M simple` the script is refused, naming its line.
fn a_pipeline_is_sent_whole_as_pgbench_sends_it(db: &Postgres, data: &std::path::Path) {
    let url = database(db, "pipelines");
    sql_in(&url, "CREATE TABLE pipe_t (x int)");
    let count = || sql_in(&url, "SELECT count(*) FROM pipe_t");
    let body = "INSERT INTO pipe_t VALUES (1);\nSELECT 1/0;\nINSERT INTO pipe_t VALUES (2);\n";
    let piped = data.join("piped.sql");
    std::fs::write(&piped, format!("\\startpipeline\n{body}\\endpipeline\n")).unwrap();
    let apart = data.join("apart.sql");
    std::fs::write(&apart, body).unwrap();
    let run = |file: &std::path::Path, protocol: &str| {
        sojourn(
            data,
            &[
                "run",
                "--db",
                &url,
                "-f",
                file.to_str().unwrap(),
                "-p",
                &format!("script.protocol={protocol}"),
                "-p",
                "operationcount=5",
                "-p",
                "max_error_rate=none",
            ],
        )
    };
    for protocol in ["extended", "prepared"] {
        let out = run(&piped, protocol);
        let s = parse_summary(&ok(&out));
        assert_eq!(get(&s, "piped", "Return=ERROR"), 5.0, "{s:#?}");
        assert_eq!(count(), "0", "{protocol}: the failed pipeline left nothing");
    }
    let theirs = pgbench(
        &url,
        &[
            "-n",
            "-M",
            "extended",
            "-t",
            "5",
            "-f",
            piped.to_str().unwrap(),
        ],
    );
    assert!(
        text(&theirs.stderr).contains("division by zero"),
        "{}",
        text(&theirs.stderr)
    );
    assert_eq!(count(), "0", "pgbench's pipeline left nothing either");
    ok(&run(&apart, "extended"));
    assert_eq!(count(), "5", "one at a time, each first insert commits");
    let simple = refused(
        data,
        &[
            "run",
            "--db",
            &url,
            "-f",
            piped.to_str().unwrap(),
            "-p",
            "script.protocol=simple",
        ],
    );
    assert!(
        simple.contains("piped.sql:1 starts a pipeline, which needs the extended protocol"),
        "{simple}"
    );

    // pgbench's transaction, pipelined: its server work exactly.
    ok(&sojourn(
        data,
        &["load", "--db", &url, "-b", "tpcb-like", "--scale", "1"],
    ));
    let tpcb = data.join("tpcb-piped.sql");
    std::fs::write(
        &tpcb,
        "\\set aid random(1, 100000 * :scale)\n\\set bid random(1, 1 * :scale)\n\
         \\set tid random(1, 10 * :scale)\n\\set delta random(-5000, 5000)\n\\startpipeline\n\
         BEGIN;\n\
         UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
         SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
         UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n\
         UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n\
         INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, \
         :delta, CURRENT_TIMESTAMP);\n\
         END;\n\\endpipeline\n",
    )
    .unwrap();
    let out = ok(&sojourn(
        data,
        &[
            "run",
            "--db",
            &url,
            "-f",
            tpcb.to_str().unwrap(),
            "-p",
            "operationcount=300",
            "-threads",
            "3",
        ],
    ));
    let s = parse_summary(&out);
    assert_eq!(get(&s, "tpcb-piped", "Return=OK"), 300.0, "{s:#?}");
    assert_eq!(
        get(&s, "tpcb-piped:11", "Return=OK"),
        300.0,
        "the history insert: {s:#?}"
    );
    let n = |sql: &str| -> i64 { sql_in(&url, sql).parse().unwrap() };
    assert_eq!(n("SELECT count(*) FROM pgbench_history"), 300);
    assert_pgbench_balances(&n);
}
