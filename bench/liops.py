#!/usr/bin/env python3
"""LIOPS with the loop in the client against the loop in the server (PGIO's), by WORK_UNIT.

Starts its own PostgreSQL (as bench/postgres.py does: initdb into a
temporary directory, postgres on a free loopback port, 256 MB of shared
buffers) or uses the one `--db` names, loads one LIOPS table of `--scale`
rows (one 8 KB block each: the default 16,384 rows are 128 MB, inside the
buffers), then runs the same session(s) for `--seconds` at each WORK_UNIT
(1, 255 and 1000 unless `--work-unit` says otherwise), once with
`liops.loop=client` (sojourn sends every select) and once with
`liops.loop=server` (PGIO's PL/pgSQL loop, one call per session), and
prints one row per run:

    WORK_UNIT  loop    selects/s  LIOPS rows/s  PGIO blk/s  mean us  p99 us  client calls

`LIOPS rows/s` is sojourn's headline (rows touched by selects per second),
`PGIO blk/s` PGIO's own figure (select_blk_touch_cnt / Run time), the
latencies those of the selects: measured by the client around each call in
the client loop, by the server around each statement in the server loop.
The ratio column is the server loop's rows/s over the client loop's at the
same WORK_UNIT: what the round trips cost.

It is a benchmark, not a test: it prints figures and never fails on them.
Usage: python3 bench/liops.py [--db URL] [--seconds S] [--sessions N]
       [--scale ROWS] [--work-unit N ...] [--bin PATH]
"""

import argparse
import json
import os
import shutil
import tempfile

from common import BIN, Postgres, build, measured, pg_bin


def sojourn(bin_, phase, url, args):
    """One phase of the shipped LIOPS workload; its JSON report."""
    cmd = [bin_, phase, "--db", url, "-P", "workloads/liops", "--format", "json",
           "--no-progress", "--no-store"] + args
    out, _, _, _, _ = measured(cmd, timeout=1800)
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", help="a PostgreSQL URL to use instead of starting one")
    ap.add_argument("--seconds", type=float, default=10, help="RUN_TIME of each run")
    ap.add_argument("--sessions", type=int, default=1, help="NUM_SCHEMAS (one session a table)")
    ap.add_argument("--scale", type=int, default=16_384, help="rows per table")
    ap.add_argument("--work-unit", type=int, action="append", dest="work_units",
                    help="WORK_UNIT to run (repeatable; default 1, 255 and 1000)")
    ap.add_argument("--bin", default=None, help="the sojourn binary (default: build a release one)")
    a = ap.parse_args()
    work_units = a.work_units or [1, 255, 1000]
    bin_ = a.bin
    if bin_ is None:
        build()
        bin_ = BIN
    tmp, pg = None, None
    if a.db:
        url = a.db
    else:
        pg_bin()  # exits when PostgreSQL is not installed
        tmp = tempfile.mkdtemp(prefix="sojourn-bench-liops-")
        pg = Postgres(tmp)
        url = pg.url
    shape = ["-p", f"NUM_SCHEMAS={a.sessions}", "-p", "NUM_THREADS=1", "-p", f"SCALE={a.scale}",
             "-p", "UPDATE_PCT=0", "--seed", "1"]
    try:
        sojourn(bin_, "load", url, shape + ["-p", f"WORK_UNIT={max(work_units)}", "--drop"])
        print(f"# {os.cpu_count()} cores; {a.sessions} session(s), one table each of {a.scale} rows "
              f"(8 KB blocks); {a.seconds:g} s a run; selects only; load average "
              f"{os.getloadavg()[0]:.1f}")
        print(f"{'WORK_UNIT':>9} {'loop':6} {'selects/s':>10} {'LIOPS rows/s':>13} "
              f"{'PGIO blk/s':>11} {'mean us':>8} {'p99 us':>8} {'client calls':>12}  server/client")
        for wu in work_units:
            client_rate = None
            for loop in ("client", "server"):
                r = sojourn(bin_, "run", url, shape + [
                    "-p", f"WORK_UNIT={wu}", "-p", f"RUN_TIME={a.seconds:g}",
                    "-p", "operationcount=0", "-p", f"liops.loop={loop}"])
                f = r["liops"]
                scan = r["ops"].get("SCAN") or r["ops"].get("scan") or {}
                service = scan.get("service", {})
                rate = f["rows_per_sec"]
                ratio = f"{rate / client_rate:6.2f}x" if client_rate else ""
                client_rate = client_rate or rate
                print(f"{wu:>9} {loop:6} {f['selects'] / max(f['seconds'], 1e-9):>10.0f} "
                      f"{rate:>13.0f} {f['pgio_select_blk_per_sec']:>11.0f} "
                      f"{service.get('mean_us', 0):>8.1f} {service.get('p99_us', 0):>8.1f} "
                      f"{f['client_calls']:>12}  {ratio}")
    finally:
        if pg:
            pg.stop()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
