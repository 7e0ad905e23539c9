//! Shared helpers for the CLI's end-to-end tests: running the binary in a
//! scratch data directory, each run under a deadline (a hang fails its
//! test with what sojourn printed), and parsing YCSB's summary back.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sojourn_testkit::process::{finish_within, output_within};

/// How long one sojourn command may take: far more than any test's run
/// (the longest last a few seconds), short of hanging the suite.
pub const RUN_LIMIT: Duration = Duration::from_secs(300);

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sojourn"));
    c.current_dir(repo_root());
    c
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Run sojourn with `args` and a private data directory.
pub fn sojourn(data: &Path, args: &[&str]) -> Output {
    sojourn_within(data, args, RUN_LIMIT)
}

/// A peer tool's command line through sojourn (`sojourn memtier ...`):
/// every argument is the tool's, so the data directory goes in the
/// environment.
pub fn peer_tool(data: &Path, tool: &str, args: &[&str]) -> Output {
    output_within(
        bin().arg(tool).args(args).env("SOJOURN_DATA_DIR", data),
        None,
        RUN_LIMIT,
    )
}

/// [`peer_tool`] with the arguments of `line` (split at blanks), then
/// `more` as they are (words with blanks in them).
pub fn peer_line(data: &Path, tool: &str, line: &str, more: &[&str]) -> Output {
    let args: Vec<&str> = line
        .split_whitespace()
        .chain(more.iter().copied())
        .collect();
    peer_tool(data, tool, &args)
}

/// [`sojourn`] that must end within `limit` (the test fails if not).
pub fn sojourn_within(data: &Path, args: &[&str], limit: Duration) -> Output {
    output_within(
        bin()
            .args(args)
            .arg("--data-dir")
            .arg(data)
            .arg("--no-progress"),
        None,
        limit,
    )
}

/// Running a command (a [`bin`] with its arguments) to its end within
/// [`RUN_LIMIT`], in place of `Command::output`.
pub trait RunToEnd {
    fn run_to_end(&mut self) -> Output;
}

impl RunToEnd for Command {
    fn run_to_end(&mut self) -> Output {
        output_within(self, None, RUN_LIMIT)
    }
}

/// Wait for a spawned sojourn to end within [`RUN_LIMIT`], with what is
/// left of its output.
pub fn finish(child: Child) -> Output {
    finish_within(child, RUN_LIMIT)
}

/// Run sojourn as [`sojourn`] does, assert that it failed, and return its
/// stderr (which says why).
pub fn refused(data: &Path, args: &[&str]) -> String {
    let out = sojourn(data, args);
    assert!(
        !out.status.success(),
        "sojourn {args:?} succeeded\nstdout:\n{}",
        text(&out.stdout)
    );
    text(&out.stderr)
}

/// `sojourn results query --format json SQL` over the store of the data
/// directory `data`: its rows, one object each.
pub fn query_rows(data: &Path, sql: &str) -> serde_json::Value {
    let out = bin()
        .args(["results", "--data-dir"])
        .arg(data)
        .args(["query", "--format", "json", sql])
        .run_to_end();
    serde_json::from_str(&ok(&out)).expect("JSON rows")
}

/// `sojourn report --format csv last` over the store at `results`.
pub fn report_csv_of_last(results: &Path) -> String {
    let out = bin()
        .args(["report", "--results", &results.to_string_lossy()])
        .args(["--format", "csv", "last"])
        .run_to_end();
    ok(&out)
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Assert success and return stdout.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "sojourn failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// YCSB's summary as `group -> measurement -> value`.
pub type Summary = BTreeMap<String, BTreeMap<String, f64>>;

pub fn parse_summary(stdout: &str) -> Summary {
    let mut m = Summary::new();
    for line in stdout.lines() {
        let parts: Vec<&str> = line.splitn(3, ", ").collect();
        if parts.len() != 3 || !parts[0].starts_with('[') || !parts[0].ends_with(']') {
            continue;
        }
        let group = parts[0].trim_matches(|c| c == '[' || c == ']').to_string();
        let value: f64 = parts[2]
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("not a number in summary line {line:?}"));
        m.entry(group)
            .or_default()
            .insert(parts[1].to_string(), value);
    }
    m
}

pub fn get(s: &Summary, group: &str, key: &str) -> f64 {
    *s.get(group)
        .and_then(|g| g.get(key))
        .unwrap_or_else(|| panic!("no [{group}], {key} in summary {s:#?}"))
}

pub fn get_or_zero(s: &Summary, group: &str, key: &str) -> f64 {
    s.get(group)
        .and_then(|g| g.get(key))
        .copied()
        .unwrap_or(0.0)
}

/// How long a spawned sojourn may take to show its run under way.
pub const RUNNING_LIMIT: Duration = Duration::from_secs(120);

/// Read a spawned sojourn's stderr (piped) until a YCSB status line of the
/// run phase shows it is under way (after the line containing `after`,
/// when given: `bench` loads first); the rest of stderr is collected on a
/// thread, whose result includes what was read here. Past
/// [`RUNNING_LIMIT`] without one, sojourn is killed and the test fails.
pub fn wait_until_running(child: &mut Child, after: Option<&str>) -> JoinHandle<String> {
    let stderr = child.stderr.take().expect("stderr piped");
    // Lines come through a channel so that waiting for them has a
    // deadline; the reader ends when sojourn closes its stderr.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + RUNNING_LIMIT;
    let mut seen = String::new();
    let mut running = after.is_none();
    loop {
        let line = match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no status line within {RUNNING_LIMIT:?}; stderr so far:\n{seen}");
            }
        };
        seen.push_str(&line);
        seen.push('\n');
        if after.is_some_and(|a| line.contains(a)) {
            running = true;
        } else if running && line.contains(" sec: ") && line.contains("operations;") {
            break;
        }
    }
    assert!(seen.contains("operations;"), "no status line:\n{seen}");
    std::thread::spawn(move || {
        for l in rx {
            seen.push_str(&l);
            seen.push('\n');
        }
        seen
    })
}

/// Assert that a process's stderr says nothing of a run missing the
/// results store: not the old "not recorded" warning, no store error, no
/// spool file. Tests that start several clients check this as well as
/// their exit status, which a lost run did not change.
pub fn assert_all_stored(stderr: &str) {
    for lost in [
        "not recorded",
        "warning: results store",
        "spool",
        "could not be stored",
    ] {
        assert!(!stderr.contains(lost), "{lost:?} in stderr:\n{stderr}");
    }
}

/// The warnings name the stall as the database's, with when and how long,
/// and do not blame the client.
pub fn assert_stall_blamed_on_the_database(stderr: &str) {
    let line = stderr
        .lines()
        .find(|l| l.contains("the database stopped answering for at least"))
        .unwrap_or_else(|| panic!("no stall warning:\n{stderr}"));
    // When, that operations timed out, and how long the queued ones waited.
    assert!(
        line.contains("s into the run") && line.contains("timed out; some waited"),
        "{line}"
    );
    // Nothing blames the client for the stall. A busy test machine may
    // make the client itself late now and then, and the lag warning says
    // so; but not by anything near the stall's length.
    assert!(!stderr.contains("give the client more CPU"), "{stderr}");
    for late in stderr
        .lines()
        .filter(|l| l.contains("client or machine is too busy"))
    {
        let ms: f64 = late
            .split("more than ")
            .nth(1)
            .and_then(|r| r.split(" ms").next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no lag in {late}"));
        assert!(ms < 100.0, "the stall is blamed on the client: {late}");
    }
}

/// A shipped suite folder (`suites/NAME`), copied unchanged into `dir`
/// (a suite writes its markers beside its configs).
pub fn shipped_suite(dir: &Path, name: &str) -> PathBuf {
    let suite = dir.join(name);
    std::fs::create_dir(&suite).unwrap();
    for e in std::fs::read_dir(repo_root().join("suites").join(name)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), suite.join(e.file_name())).unwrap();
    }
    suite
}

/// pgbench's work, checked on tables it ran on (`count` asks the
/// database for one integer): every balance's sum is the sum of the
/// history's deltas.
#[allow(dead_code)]
pub fn assert_pgbench_balances(count: &dyn Fn(&str) -> i64) {
    let deltas = count("SELECT sum(delta) FROM pgbench_history");
    for table in ["accounts", "tellers", "branches"] {
        let column = &table[..1];
        let sum = count(&format!("SELECT sum({column}balance) FROM pgbench_{table}"));
        assert_eq!(sum, deltas, "pgbench_{table}'s balances");
    }
}

/// A script of one's own on pgbench's tables at `db`: it keeps `:r * 3`
/// with `\gset` (beside a NULL column) and inserts a history row only
/// where that is over 15; 400 transactions, each insert checked to carry
/// the kept value, and about half of them inserting.
#[allow(dead_code)]
pub fn gset_and_if_script(data: &Path, db: &str, count: &dyn Fn(&str) -> i64) {
    let script = data.join("mine.sql");
    std::fs::write(
        &script,
        "\\set r random(1, 10)
SELECT :r * 3 AS tripled, NULL AS absent \\gset
\\if :tripled > 15
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (0, 0, :r, :tripled, \
         CURRENT_TIMESTAMP);
\\endif
",
    )
    .unwrap();
    let out = sojourn(
        data,
        &[
            "run",
            "--db",
            db,
            "-f",
            script.to_str().unwrap(),
            "-p",
            "operationcount=400",
            "--seed",
            "9",
        ],
    );
    let s = parse_summary(&ok(&out));
    assert_eq!(get(&s, "mine", "Return=OK"), 400.0, "{s:#?}");
    let kept = count("SELECT count(*) FROM pgbench_history WHERE tid = 0");
    let wrong = count(
        "SELECT count(*) FROM pgbench_history WHERE tid = 0 AND (delta != aid * 3 OR aid <= 5)",
    );
    assert_eq!(wrong, 0, "only r > 5 inserted, with \\gset's r * 3");
    // r > 5 half the time: within 5 binomial standard deviations of 200.
    assert!((kept - 200).abs() < 50, "{kept} of 400");
}

/// TPC-C end to end on the database at `db` (`value` asks it for one
/// number): two warehouses loaded as clause 4.3.3.1 fills them, the
/// consistency conditions of clause 3.3.2 holding after the load and
/// after a run, a second load refused, and the run's counts matching the
/// rows its transactions wrote (each New-Order one order, each Payment
/// one history row and its amount on the warehouse, each delivered order
/// one customer's delivery), and `tpcc.check` failing a run, once it is
/// stored, on a condition broken by hand (`exec` runs a statement).
/// TPC-C's transactions done in a summary.
pub fn tpcc_done(s: &Summary) -> i64 {
    [
        "NEW_ORDER",
        "PAYMENT",
        "ORDER_STATUS",
        "DELIVERY",
        "STOCK_LEVEL",
    ]
    .iter()
    .map(|k| get_or_zero(s, k, "Return=OK") as i64)
    .sum()
}

/// Every TPC-C table holds what a load of `w` warehouses makes (order
/// lines apart, whose count is drawn), by `count`.
pub fn tpcc_rows(w: i64, count: &dyn Fn(&str) -> i64) {
    for (table, rows) in [
        ("warehouse", w),
        ("district", 10 * w),
        ("customer", 30_000 * w),
        ("history", 30_000 * w),
        ("orders", 30_000 * w),
        ("new_order", 9_000 * w),
        ("stock", 100_000 * w),
        ("item", 100_000),
    ] {
        assert_eq!(
            count(&format!("select count(*) from {table}")),
            rows,
            "{table}"
        );
    }
}

pub fn tpcc_end_to_end(data: &Path, db: &str, value: &dyn Fn(&str) -> f64, exec: &dyn Fn(&str)) {
    let count = |sql: &str| value(sql).round() as i64;
    let load_args = [
        "load",
        "-P",
        "workloads/tpcc",
        "-p",
        "warehouses=2",
        "--db",
        db,
    ];
    let load = sojourn(data, &[&load_args[..], &["-threads", "3"]].concat());
    let stderr = text(&load.stderr);
    ok(&load);
    assert!(stderr.contains("in 20 batches"), "{stderr}");
    tpcc_rows(2, &count);
    let lines = count("select count(*) from order_line");
    assert_eq!(lines, count("select sum(o_ol_cnt) from orders"));
    assert!((5 * 60_000..=15 * 60_000).contains(&lines), "{lines}");
    // Every one of the thousand last names in each district, a tenth of
    // the items ORIGINAL, and the delivered orders' lines paid nothing.
    assert_eq!(
        count("select count(distinct c_last) from customer where c_w_id = 2 and c_d_id = 7"),
        1000
    );
    let original = count("select count(*) from item where i_data like '%ORIGINAL%'");
    assert!((8_000..12_000).contains(&original), "{original}");
    assert_eq!(
        count("select count(*) from order_line where ol_o_id < 2101 and ol_amount <> 0"),
        0
    );
    // The consistency conditions 3.3.2.1 to 3.3.2.4, written here from
    // the spec's words rather than taken from the code under test.
    let consistent = |when: &str| {
        for (condition, broken) in [
            (
                "3.3.2.1",
                "select count(*) from warehouse w join (select d_w_id, sum(d_ytd) as s from \
                 district group by d_w_id) d on d.d_w_id = w.w_id where abs(w.w_ytd - d.s) > 0.005",
            ),
            (
                "3.3.2.2",
                "select count(*) from district d join (select o_w_id, o_d_id, max(o_id) as m \
                 from orders group by o_w_id, o_d_id) o on o.o_w_id = d.d_w_id and o.o_d_id = \
                 d.d_id join (select no_w_id, no_d_id, max(no_o_id) as m from new_order group \
                 by no_w_id, no_d_id) n on n.no_w_id = d.d_w_id and n.no_d_id = d.d_id where \
                 d.d_next_o_id - 1 <> o.m or d.d_next_o_id - 1 <> n.m",
            ),
            (
                "3.3.2.3",
                "select count(*) from (select count(*) as c, max(no_o_id) - min(no_o_id) + 1 as \
                 span from new_order group by no_w_id, no_d_id) t where t.c <> t.span",
            ),
            (
                "3.3.2.4",
                "select count(*) from (select ol_w_id, ol_d_id, count(*) as c from order_line \
                 group by ol_w_id, ol_d_id) l, (select o_w_id, o_d_id, sum(o_ol_cnt) as s from \
                 orders group by o_w_id, o_d_id) o where l.ol_w_id = o.o_w_id and l.ol_d_id = \
                 o.o_d_id and l.c <> o.s",
            ),
        ] {
            assert_eq!(count(broken), 0, "{when}: {condition}");
        }
        assert_eq!(
            count("select count(distinct d_w_id) from district"),
            2,
            "{when}"
        );
    };
    consistent("after the load");
    let again = refused(data, &load_args);
    assert!(again.contains("--drop"), "{again}");

    let ytd = value("select sum(w_ytd) * 100 from warehouse");
    let run = sojourn(
        data,
        &[
            "run",
            "-P",
            "workloads/tpcc",
            "-p",
            "operationcount=1500",
            "-threads",
            "4",
            "--seed",
            "11",
            "-p",
            "tpcc.check=true",
            "--db",
            db,
        ],
    );
    let out = ok(&run);
    let said = text(&run.stderr);
    assert!(
        said.contains("checking TPC-C's consistency conditions"),
        "{said}"
    );
    let s = parse_summary(&out);
    let done = |kind: &str| get_or_zero(&s, kind, "Return=OK") as i64;
    let new_orders = done("NEW_ORDER");
    let rolled_back = done("NEW_ORDER:rollback");
    let payments = done("PAYMENT");
    assert_eq!(tpcc_done(&s), 1500, "every transaction done: {out}");
    // The spec's mix, 45/43/4/4/4, within 5 binomial deviations.
    for (kind, share) in [
        ("NEW_ORDER", 0.45f64),
        ("PAYMENT", 0.43),
        ("DELIVERY", 0.04),
    ] {
        let expected = 1500.0 * share;
        let sd = (1500.0 * share * (1.0 - share)).sqrt();
        assert!(
            (done(kind) as f64 - expected).abs() < 5.0 * sd,
            "{kind}: {} of 1500",
            done(kind)
        );
    }
    assert!(
        rolled_back > 0 && rolled_back < new_orders / 20,
        "{rolled_back} of {new_orders}"
    );
    assert_eq!(
        count("select count(*) from orders"),
        60_000 + new_orders - rolled_back,
        "one order per New-Order that was not rolled back"
    );
    assert_eq!(count("select count(*) from history"), 60_000 + payments);
    let paid = value("select sum(h_amount) * 100 from history") - 60_000.0 * 1_000.0;
    let ytd_moved = value("select sum(w_ytd) * 100 from warehouse") - ytd;
    assert!(
        (paid - ytd_moved).abs() < 0.5,
        "paid {paid}, w_ytd moved {ytd_moved}"
    );
    let delivered =
        count("select count(*) from orders where o_id >= 2101 and o_carrier_id is not null");
    assert!(delivered > 0, "some Delivery found an order");
    assert_eq!(count("select sum(c_delivery_cnt) from customer"), delivered);
    assert_eq!(
        count("select count(*) from new_order"),
        18_000 + new_orders - rolled_back - delivered
    );
    consistent("after the run");
    let tpmc = out
        .lines()
        .find(|l| l.starts_with("# tpcc: tpmC "))
        .unwrap_or_else(|| panic!("no tpmC line: {out}"));
    assert!(
        tpmc.contains(&format!("({new_orders} New-Orders in ")) && tpmc.contains("2 warehouse(s)"),
        "{tpmc}"
    );
    // A gap in district 3 of warehouse 2's new orders, which no Delivery
    // of a short run reaches: the run is stored, then the check fails.
    exec("delete from new_order where no_w_id = 2 and no_d_id = 3 and no_o_id = 2500");
    let stored = count("select count(*) from orders");
    let broken = refused(
        data,
        &[
            "run",
            "-P",
            "workloads/tpcc",
            "-p",
            "operationcount=40",
            "-p",
            "tpcc.check=true",
            "--db",
            db,
        ],
    );
    assert!(
        broken.contains("condition 3.3.2.3")
            && broken.contains("in 1 district(s) or warehouse(s), the first in warehouse 2"),
        "{broken}"
    );
    assert!(broken.contains("recorded as run"), "{broken}");
    assert!(count("select count(*) from orders") > stored, "the run ran");
}
