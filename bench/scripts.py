"""peers.py's `scripts` job: pgbench's builtin scripts run by sojourn
(`-b NAME`, workload=script) beside pgbench itself, on one private
PostgreSQL and one set of pgbench's tables (`pgbench -i -s 1`, as
pgbench's own runs use them).

- Closed loop, 16 clients, one request in flight each: `select-only`
  (`pgbench -S -M prepared -c 16 -j 1 -n`) and `tpcb-like` (`pgbench
  -M prepared -c 16 -j 1 -n`), the same number of transactions by each
  tool, three pairs in alternating order; the table keeps the median pair
  by the CPU ratio and a note gives every pair's. Client CPU per
  transaction is the kernel's rusage of the whole process.
- Open loop at 80% of pgbench's select-only throughput: `pgbench -R RATE`
  (Poisson arrivals; its `latency average` counts from each transaction's
  scheduled start, its `schedule lag` is the wait before it began) beside
  `sojourn -target RATE` (Poisson arrivals; response time from the
  intended start, response − service the wait before it began): the same
  queueing, measured by each; again at 40% (reported), with each one's
  client CPU per transaction.

Used by peers.py (`--only scripts`); not run alone.
"""

import json
import re
import statistics
import tempfile

from common import BIN, Postgres, measured

CLIENTS = 16
PAIRS = 3
OPEN_SECONDS = 10
# The rate (80% of capacity), then half of it: on two CPUs that
# client and server share, 80% of the closed loop's throughput leaves
# neither tool room for an open loop's wake-ups, and both queue.
OPEN_SHARES = (0.8, 0.4)


def sojourn_cmd(runner, pg, builtin, clients, seconds, extra=()):
    return [runner.a.sojourn or BIN, "run", "--db", pg.url, "-b", builtin, "-threads", str(clients),
            "--seed", "1", "--no-progress", "--no-store", "--format", "json",
            "-p", f"maxexecutiontime={seconds}"] + list(extra)


def pgbench_cmd(exe, pg, flags, clients, extra=()):
    return [exe, "-h", "127.0.0.1", "-p", str(pg.port), "-U", pg.USER, "-M", "prepared", "-c", str(clients),
            "-j", "1", "-n"] + flags + list(extra) + ["postgres"]


def pgbench_figures(out):
    """tps, latency average (ms) and schedule lag average (ms, or None) from
    pgbench's summary."""
    tps = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out) or re.search(r"tps = ([\d.]+)", out)
    lat = re.search(r"latency average = ([\d.]+) ms", out)
    lag = re.search(r"rate limit schedule lag: avg ([\d.]+)", out)
    return (float(tps.group(1)), float(lat.group(1)) if lat else None, float(lag.group(1)) if lag else None)


def run(runner, result, in_turn, note):
    """The job: `result` makes a row as peers.py's, `in_turn` orders a
    pair, `note` says what did not run."""
    tmp = tempfile.mkdtemp(prefix="scripts-", dir=runner.tmp)
    pg = Postgres(tmp)
    try:
        exe = pg.tool("pgbench")
        if not exe:
            note("scripts: pgbench is not installed; nothing to compare with")
            return
        measured([exe, "-i", "-q", "-s", "1", "-h", "127.0.0.1", "-p", str(pg.port), "-U", pg.USER, "postgres"],
                 pg.env)
        per_client = max(runner.a.ops // CLIENTS, 1)
        n = per_client * CLIENTS
        capacity = None
        for builtin, flags in (("select-only", ["-S"]), ("tpcb-like", [])):
            def ours(pair):
                out, _, wall, user, sys_ = measured(
                    sojourn_cmd(runner, pg, builtin, CLIENTS, runner.limit, ["-p", f"operationcount={n}"]),
                    timeout=runner.limit + 60)
                r = json.loads(out)
                op = r["ops"][builtin]
                return result("sojourn", "scripts", builtin, CLIENTS, op["count"], r["achieved_ops_per_sec"], wall,
                              user, sys_, extra={"pair": pair, "latency_average_ms":
                                                 op["response"]["mean_us"] / 1000})

            def theirs(pair):
                out, _, wall, user, sys_ = measured(pgbench_cmd(exe, pg, flags, CLIENTS, ["-t", str(per_client)]),
                                                    pg.env, timeout=runner.limit + 60)
                tps, lat, _ = pgbench_figures(out)
                return result("pgbench", "scripts", builtin, CLIENTS, n, tps, wall, user, sys_,
                              extra={"pair": pair, "latency_average_ms": lat})

            pairs = []
            for pair in range(1, PAIRS + 1):
                pairs.append(in_turn(pair,
                                     lambda: runner.attempt(f"sojourn -b {builtin} pair {pair}", ours, pair),
                                     lambda: runner.attempt(f"pgbench {builtin} pair {pair}", theirs, pair)))
            both = [(s, p) for s, p in pairs if s and p]
            if not both:
                continue
            note(f"scripts {builtin}/{CLIENTS}: client CPU per transaction sojourn / pgbench by pair, in order: "
                 + ", ".join(f"{s['cpu_us_per_op'] / p['cpu_us_per_op']:.2f}x" for s, p in both)
                 + "; the table keeps the median pair")
            s, p = sorted(both, key=lambda sp: sp[0]["cpu_us_per_op"] / sp[1]["cpu_us_per_op"])[len(both) // 2]
            runner.keep(s)
            runner.keep(p)
            if builtin == "select-only":
                capacity = statistics.median(p["ops_per_sec"] for _, p in both)
        for share in OPEN_SHARES if capacity else ():
            open_loop(runner, pg, exe, share, round(capacity * share), note)
    finally:
        pg.stop()


def open_loop(runner, pg, exe, share, rate, note):
    """pgbench -R and sojourn -target at one rate: each one's mean latency
    from the scheduled start, its wait before the start, and its CPU."""
    title = (f"scripts: select-only open loop at {share:.0%} of pgbench's throughput, {CLIENTS} clients, "
             f"{OPEN_SECONDS} s, Poisson arrivals")
    rows = {}
    out = runner.attempt(f"pgbench -R {rate}", lambda: measured(
        pgbench_cmd(exe, pg, ["-S"], CLIENTS, ["-R", str(rate), "-T", str(OPEN_SECONDS)]), pg.env,
        timeout=OPEN_SECONDS + 120))
    if out:
        tps, lat, lag = pgbench_figures(out[0])
        done = re.search(r"actually processed: (\d+)", out[0])
        cpu = (out[3] + out[4]) * 1e6 / int(done.group(1)) if done else None
        rows["pgbench"] = runner.row(title, {"tool": "pgbench -R", "rate": rate, "tps": tps,
                                             "latency average ms": lat, "schedule lag ms": lag,
                                             "cpu us/op": cpu})
    extra = ["-target", str(rate), "-p", f"operationcount={rate * OPEN_SECONDS}"]
    out = runner.attempt(f"sojourn -target {rate}", lambda: measured(
        sojourn_cmd(runner, pg, "select-only", CLIENTS, OPEN_SECONDS, extra), timeout=OPEN_SECONDS + 120))
    if out:
        r = json.loads(out[0])
        op = r["ops"]["select-only"]
        resp, svc = op["response"]["mean_us"] / 1000, op["service"]["mean_us"] / 1000
        rows["sojourn"] = runner.row(title, {"tool": "sojourn -target", "rate": rate,
                                             "tps": r["achieved_ops_per_sec"], "latency average ms": resp,
                                             "schedule lag ms": resp - svc,
                                             "cpu us/op": (out[3] + out[4]) * 1e6 / max(r["operations"], 1),
                                             "self-check": "passed" if r["self_check"]["passed"] else "FAILED"})
    if len(rows) == 2 and rows["pgbench"]["latency average ms"]:
        ratio = rows["sojourn"]["latency average ms"] / rows["pgbench"]["latency average ms"]
        rows["sojourn"]["vs pgbench"] = ratio
    elif len(rows) < 2:
        note(f"scripts: the open-loop pair at {rate} tps did not both run")


def verdicts(results, tables, say):
    """The issue's targets for scripts: `say(label, ok, detail)` each."""
    for builtin in ("select-only", "tpcb-like"):
        rows = [r for r in results if r["db"] == "scripts" and r["workload"] == builtin and r["tool"] == "pgbench"
                and r.get("sojourn_over_peer_cpu")]
        if rows:
            ratio = rows[0]["sojourn_over_peer_cpu"]
            say(f"scripts {builtin}/{CLIENTS}: client CPU/transaction <= pgbench's", ratio <= 1.0,
                f"{ratio:.2f}x (median of {PAIRS} pairs)")
    for title, rows in tables.items():
        if not title.startswith(f"scripts: select-only open loop at {OPEN_SHARES[0]:.0%}"):
            continue
        ours = next((r for r in rows if r["tool"].startswith("sojourn") and "vs pgbench" in r), None)
        if ours:
            say(f"scripts -target vs pgbench -R at {OPEN_SHARES[0]:.0%}: mean response within 10% of pgbench's",
                abs(ours["vs pgbench"] - 1) <= 0.10, f"{ours['vs pgbench']:.2f}x at {ours['rate']} tps")
