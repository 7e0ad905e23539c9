"""peers.py's `tpcc` job: TPC-C by sojourn (`-P workloads/tpcc`) beside
go-tpc and sysbench-tpcc, at the same warehouses, connections and time.

- MariaDB (a private server): go-tpc v1.0.7 (`go install
  github.com/pingcap/go-tpc/cmd/go-tpc@v1.0.7`; MySQL protocol only)
  prepares WAREHOUSES warehouses in database `tpcc`, and `go-tpc tpcc run
  -T CONNS --time SECONDS` and `sojourn run -P workloads/tpcc -threads
  CONNS` take turns on those tables (the same layout: sojourn's is
  go-tpc's), PAIRS pairs in alternating order. Then sysbench-tpcc
  (bench/sysbench-tpcc, Percona-Lab's Lua scripts, on Debian's sysbench)
  prepares its own tables (`--tables=1 --scale=WAREHOUSES`) in `sbtest`
  and takes turns with sojourn the same way.
- PostgreSQL (a private server): sojourn loads its tables in `postgres`,
  sysbench-tpcc its own in `sbtest`, and the two take turns.

Each row: tpmC (New-Orders per minute), and the client's CPU per
New-Order, the kernel's rusage of its whole process over its New-Orders
(go-tpc and sojourn count theirs; sysbench-tpcc counts only transactions,
of which New-Order is 10 in 23 cards, so its New-Orders are estimated as
10/23 of them). The table keeps each pair's median by the CPU ratio and a
note gives every pair's. On MariaDB, one more run of each tool measures
the statements per transaction from the server's own counters
(`Questions`, `Com_select`, `Com_update`, `Com_insert`, `Com_delete`).

Used by peers.py (`--only tpcc`); not run alone.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile

from common import BIN, ROOT, Failed, Mariadb, Postgres, measured

WAREHOUSES = 2
CONNS = 10
SECONDS = 20
PAIRS = 3
GO_TPC = "github.com/pingcap/go-tpc/cmd/go-tpc@v1.0.7"
SYSBENCH_TPCC = os.path.join(ROOT, "bench", "sysbench-tpcc")
# sysbench-tpcc's cards: New-Order is 10 of 23 (tpcc.lua's event()).
SYSBENCH_NEW_ORDER_SHARE = 10 / 23
COUNTERS = ("Questions", "Com_select", "Com_update", "Com_insert", "Com_delete")


def go_tpc(cache, note):
    """go-tpc built from its Go module into the cache, or None."""
    exe = os.path.join(cache, "go-tpc-bin", "go-tpc")
    if os.path.exists(exe):
        return exe
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else None)
    if not go:
        note("tpcc: go is not installed; go-tpc left out")
        return None
    env = dict(os.environ, GOBIN=os.path.dirname(exe))
    r = subprocess.run([go, "install", GO_TPC], env=env, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(exe):
        note(f"tpcc: go install {GO_TPC} failed: {r.stderr.strip()[-300:]}")
        return None
    return exe


def sysbench(note):
    exe = shutil.which("sysbench")
    if not exe and os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "sysbench"], env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        exe = shutil.which("sysbench")
    if not exe:
        note("tpcc: sysbench is not installed (Debian's sysbench); sysbench-tpcc left out")
    return exe


def sojourn_cmd(runner, url, seconds, threads=CONNS):
    return [runner.a.sojourn or BIN, "run", "-P", "workloads/tpcc", "--db", url, "-threads", str(threads),
            "--seed", "1", "--no-progress", "--no-store", "--format", "json",
            "-p", f"maxexecutiontime={seconds}"]


def sojourn_figures(out):
    """(New-Orders, transactions, measured seconds) from sojourn's JSON."""
    r = json.loads(out)
    ops = r["ops"]
    txns = sum(ops[k]["count"] for k in ("NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL")
               if k in ops)
    return ops["NEW_ORDER"]["count"], txns, r["measured_ms"] / 1000


def go_tpc_cmd(exe, m, action, seconds=SECONDS, threads=CONNS, db="tpcc"):
    cmd = [exe, "tpcc", action, "-d", "mysql", "-H", "127.0.0.1", "-P", str(m.port), "-U", "root", "-D", db,
           "--warehouses", str(WAREHOUSES), "-T", str(threads)]
    return cmd + (["--time", f"{seconds}s"] if action == "run" else [])


def go_tpc_figures(out):
    """(New-Orders, transactions, seconds) from go-tpc's summary lines."""
    counts = dict((k, int(n)) for k, n in re.findall(r"\[Summary\] (\w+) - Takes\(s\): [\d.]+, Count: (\d+)", out))
    takes = re.search(r"\[Summary\] NEW_ORDER - Takes\(s\): ([\d.]+)", out)
    if "NEW_ORDER" not in counts or not takes:
        raise Failed(f"go-tpc printed no New-Order summary: {out[-400:]}")
    txns = sum(v for k, v in counts.items() if not k.endswith("_ERR"))
    return counts["NEW_ORDER"], txns, float(takes.group(1))


def sysbench_cmd(exe, driver, action, seconds=SECONDS, threads=CONNS):
    cmd = [exe, "tpcc.lua", f"--db-driver={driver}", "--tables=1", f"--scale={WAREHOUSES}",
           f"--threads={threads}", "--report-interval=0"]
    return cmd + ([f"--time={seconds}"] if action == "run" else []) + [action]


def sysbench_conn(driver, server):
    if driver == "mysql":
        return ["--mysql-host=127.0.0.1", f"--mysql-port={server.port}", "--mysql-user=root", "--mysql-db=sbtest"]
    return ["--pgsql-host=127.0.0.1", f"--pgsql-port={server.port}", f"--pgsql-user={server.USER}",
            f"--pgsql-password={server.PASSWORD}", "--pgsql-db=sbtest"]


def sysbench_figures(out):
    """(New-Orders estimated, transactions, seconds) from sysbench's summary."""
    t = re.search(r"transactions:\s+(\d+)", out)
    secs = re.search(r"total time:\s+([\d.]+)s", out)
    if not t or not secs:
        raise Failed(f"sysbench printed no transactions: {out[-400:]}")
    txns = int(t.group(1))
    return round(txns * SYSBENCH_NEW_ORDER_SHARE), txns, float(secs.group(1))


def counters(m):
    out = subprocess.run(m.client("SHOW GLOBAL STATUS") + ["-N", "-B"], capture_output=True, text=True,
                         check=True).stdout
    values = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
    return {k: int(values.get(k, 0)) for k in COUNTERS}


def row(result, tool, db, figures, wall, user, sys_, pair):
    new_orders, txns, secs = figures
    return result(tool, db, "tpcc", CONNS, new_orders, new_orders / secs if secs else 0, wall, user, sys_,
                  extra={"pair": pair, "tpmC": new_orders / secs * 60 if secs else 0, "transactions": txns,
                         "cpu_ms_per_new_order": (user + sys_) * 1e3 / max(new_orders, 1)})


def pairs(runner, note, title, ours, theirs, peer, round_):
    """PAIRS alternating pairs; keep the median pair by the CPU ratio, as
    round `round_` (so that each peer is compared with its own pairs'
    sojourn row)."""
    done = []
    for pair in range(1, PAIRS + 1):
        done.append(IN_TURN[0](pair,
                            lambda: runner.attempt(f"sojourn {title} pair {pair}", ours, pair),
                            lambda: runner.attempt(f"{peer} {title} pair {pair}", theirs, pair)))
    both = [(s, p) for s, p in done if s and p]
    if not both:
        return
    ratio = lambda sp: sp[0]["cpu_ms_per_new_order"] / sp[1]["cpu_ms_per_new_order"]
    note(f"tpcc {title}: client CPU per New-Order sojourn / {peer} by pair, in order: "
         + ", ".join(f"{ratio(sp):.2f}x" for sp in both)
         + "; tpmC sojourn / " + peer + ": "
         + ", ".join(f"{s['tpmC']:.0f}/{p['tpmC']:.0f}" for s, p in both)
         + "; the table keeps the median pair")
    s, p = sorted(both, key=ratio)[len(both) // 2]
    s["round"] = p["round"] = round_
    runner.keep(s)
    runner.keep(p)


def statements(runner, m, note, name, cmd, figures, env=None, cwd=ROOT):
    """Statements per transaction by the server's own counters over one run."""
    before = counters(m)
    out = runner.attempt(f"{name} counted", lambda: measured(cmd, env, cwd=cwd, timeout=SECONDS + 300))
    if not out:
        return
    after = counters(m)
    _, txns, _ = figures(out[0])
    per = {k: (after[k] - before[k]) / max(txns, 1) for k in COUNTERS}
    note(f"tpcc mariadb statements per transaction by {name} ({txns} transactions): "
         + ", ".join(f"{k} {v:.2f}" for k, v in per.items()))


def sojourn_load(runner, url):
    return measured([runner.a.sojourn or BIN, "load", "-P", "workloads/tpcc", "--db", url, "-p",
                     f"warehouses={WAREHOUSES}", "-threads", "4", "--no-progress", "--no-store"], timeout=1800)


def sojourn_turn(runner, result, url, db):
    """sojourn's side of a pair on `url`: a row of `db`."""
    def ours(pair):
        out, _, wall, user, sys_ = measured(sojourn_cmd(runner, url, SECONDS), timeout=SECONDS + 300)
        return row(result, "sojourn", db, sojourn_figures(out), wall, user, sys_, pair)
    return ours


def beside_sysbench(runner, result, note, sb, driver, server, db, ours, round_):
    """sysbench-tpcc prepares its tables on `server` and takes turns with
    `ours`."""
    conn = sysbench_conn(driver, server)
    measured(sysbench_cmd(sb, driver, "prepare", threads=WAREHOUSES) + conn, cwd=SYSBENCH_TPCC, timeout=3600)

    def theirs(pair):
        out, _, wall, user, sys_ = measured(sysbench_cmd(sb, driver, "run") + conn, cwd=SYSBENCH_TPCC,
                                            timeout=SECONDS + 300)
        return row(result, "sysbench-tpcc", db, sysbench_figures(out), wall, user, sys_, pair)

    name = "mariadb" if driver == "mysql" else "postgres"
    pairs(runner, note, f"{name} sysbench-tpcc", ours, theirs, "sysbench-tpcc", round_)


def checked(runner, m, exe, note):
    """go-tpc's `check` on the tables both tools ran on; then on tables
    sojourn loaded, after a 30 s sojourn run at 8 connections."""
    def check(db):
        r = runner.attempt(f"go-tpc check {db}", lambda: measured(
            go_tpc_cmd(exe, m, "check", threads=4, db=db), timeout=1800))
        return "passed" if r and "fail" not in (r[0] + r[1]).lower() else "FAILED"
    said = [f"go-tpc's data after both tools' runs: {check('tpcc')}"]
    subprocess.run(m.client("CREATE DATABASE tpcc_sojourn"), check=True)
    url = f"mysql://root@127.0.0.1:{m.port}/tpcc_sojourn"
    loaded = runner.attempt("sojourn load tpcc_sojourn", sojourn_load, runner, url)
    ran = loaded and runner.attempt("sojourn run tpcc_sojourn", lambda: measured(
        sojourn_cmd(runner, url, 30, threads=8), timeout=400))
    said.append(f"sojourn's data after a 30 s run at 8 connections: {check('tpcc_sojourn') if ran else 'not run'}")
    note("tpcc mariadb: go-tpc check: " + "; ".join(said))


def mariadb(runner, result, in_turn, note):
    tmp = tempfile.mkdtemp(prefix="tpcc-my-", dir=runner.tmp)
    m = Mariadb(tmp)
    try:
        subprocess.run(m.client("CREATE DATABASE tpcc"), check=True)
        url = f"mysql://root@127.0.0.1:{m.port}/tpcc"
        exe = go_tpc(runner.a.cache, note)
        if exe:
            measured(go_tpc_cmd(exe, m, "prepare", threads=4), timeout=1800)
        else:
            sojourn_load(runner, url)

        ours = sojourn_turn(runner, result, url, "tpcc-mariadb")

        if exe:
            def go(pair):
                out, err, wall, user, sys_ = measured(go_tpc_cmd(exe, m, "run"), timeout=SECONDS + 300)
                return row(result, "go-tpc", "tpcc-mariadb", go_tpc_figures(out + err), wall, user, sys_, pair)

            pairs(runner, note, "mariadb go-tpc", ours, go, "go-tpc", 1)
            statements(runner, m, note, "go-tpc", go_tpc_cmd(exe, m, "run", seconds=10),
                       go_tpc_figures)
            statements(runner, m, note, "sojourn", sojourn_cmd(runner, url, 10), sojourn_figures)
            checked(runner, m, exe, note)
        sb = sysbench(note)
        if sb:
            beside_sysbench(runner, result, note, sb, "mysql", m, "tpcc-mariadb", ours, 2)
    finally:
        m.stop()


def postgres(runner, result, in_turn, note):
    sb = sysbench(note)
    if not sb:
        return
    tmp = tempfile.mkdtemp(prefix="tpcc-pg-", dir=runner.tmp)
    pg = Postgres(tmp)
    try:
        psql = pg.tool("psql")
        subprocess.run([psql, "-h", "127.0.0.1", "-p", str(pg.port), "-U", pg.USER, "-d", "postgres", "-c",
                        "CREATE DATABASE sbtest"], env=pg.env, check=True, stdout=subprocess.DEVNULL)
        sojourn_load(runner, pg.url)
        beside_sysbench(runner, result, note, sb, "pgsql", pg, "tpcc-postgres", sojourn_turn(runner, result, pg.url,
                                                                                           "tpcc-postgres"), 1)
    finally:
        pg.stop()


# peers.py's pair order, set by `run`.
IN_TURN = [None]


def run(runner, result, in_turn, note):
    """The job: `result` makes a row as peers.py's, `in_turn` orders a
    pair, `note` says what did not run."""
    IN_TURN[0] = in_turn
    for db in (mariadb, postgres):
        try:
            db(runner, result, in_turn, note)
        except Failed as e:
            note(f"tpcc {db.__name__}: {e}")


def verdicts(results, say):
    """The issue's targets for TPC-C: `say(label, ok, detail)` each."""
    for db, peer, most in (("tpcc-mariadb", "go-tpc", 0.5), ("tpcc-mariadb", "sysbench-tpcc", 1.0),
                           ("tpcc-postgres", "sysbench-tpcc", 1.0)):
        rows = [r for r in results if r["db"] == db and r["workload"] == "tpcc" and r["tool"] == peer
                and r.get("sojourn_over_peer_cpu")]
        if rows:
            ratio = rows[0]["sojourn_over_peer_cpu"]
            say(f"tpcc {db}: client CPU per New-Order <= {most}x {peer}'s", ratio <= most,
                f"{ratio:.2f}x (median of {PAIRS} pairs)")
