#!/usr/bin/env python3
"""Client CPU per operation against a local PostgreSQL, side by side with pgbench.

Starts its own PostgreSQL (initdb into a temporary directory, then postgres
on a free loopback port; as the `postgres` user when run as root, which
PostgreSQL requires), loads 100,000 records of one 100-byte field, and
prints for workloads C and A (500,000 operations, 16 connections, one query
in flight per connection) and for the multiplexed topology (16 in flight
pipelined over 2 connections): throughput and the client's CPU microseconds
per operation, user and system apart, from the JSON report's `client_cpu`.
pgbench runs the closest shape, `pgbench -S -M prepared -c 16` (a
primary-key SELECT per transaction, 500,000 of them, one thread and two),
its CPU taken from the kernel's rusage of the process (what `/usr/bin/time
-f "%U %S"` prints). Ratios are sojourn's CPU per operation over pgbench's
with one thread.

The server runs with `synchronous_commit=off`, so that workload A measures
the client rather than the disk's flush rate.

It is a benchmark, not a test: it prints figures and never fails on them.
Usage: python3 bench/postgres.py [--ops N] [--records N]
"""

import argparse
import os
import shutil
import tempfile
import time

from common import Postgres, build, pg_bin, children_cpu, report, row, sojourn, timed

USER = Postgres.USER


def pgbench(bindir, port, ops, threads, env):
    per_client = ops // 16
    u0, s0 = children_cpu()
    t0 = time.time()
    timed([os.path.join(bindir, "pgbench"), "-h", "127.0.0.1", "-p", str(port), "-U", USER,
           "-S", "-M", "prepared", "-c", "16", "-j", str(threads), "-t", str(per_client), "-n",
           "postgres"], env)
    wall = time.time() - t0
    u1, s1 = children_cpu()
    n = per_client * 16
    user, sys_ = (u1 - u0) * 1e6 / n, (s1 - s0) * 1e6 / n
    return n / wall, user + sys_, user, sys_


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=500_000)
    ap.add_argument("--records", type=int, default=100_000)
    a = ap.parse_args()
    pg_bin()  # exits when PostgreSQL is not installed
    build()
    tmp = tempfile.mkdtemp(prefix="sojourn-bench-pg-")
    pg = Postgres(tmp)
    bindir, port, env, url = pg.bindir, pg.port, pg.env, pg.url
    try:
        shape = ["-p", f"recordcount={a.records}", "-p", "fieldcount=1", "-p", "fieldlength=100"]
        run = shape + ["-p", f"operationcount={a.ops}", "-threads", "16", "--seed", "1"]
        print(f"# {os.cpu_count()} cores; {a.records} records of 1 field of 100 B; {a.ops} operations; "
              f"16 connections; load average {os.getloadavg()[0]:.1f}")
        print(f"{'client':44} {'ops/s':>10} {'cpu us/op':>9} {'user':>7} {'sys':>7}  vs pgbench -j 1")
        base = None
        if os.path.exists(os.path.join(bindir, "pgbench")):
            # pgbench's own table of 100,000 accounts (scale 1).
            timed([os.path.join(bindir, "pgbench"), "-i", "-q", "-s", str(max(a.records // 100_000, 1)),
                   "-h", "127.0.0.1", "-p", str(port), "-U", USER, "postgres"], env)
            for threads in (1, 2):
                rate, us, user, sys_ = pgbench(bindir, port, a.ops, threads, env)
                base = base or us
                row(f"pgbench -S -M prepared -c 16 -j {threads}", rate, us, user, sys_)
        sojourn("load", url, ["-P", "workloads/workloadc", "--drop", "-threads", "16"] + shape)
        for w in ("c", "a"):
            for conns in (None, 2):
                topo = ["-p", f"connections={conns}"] if conns else []
                r = sojourn("run", url, ["-P", f"workloads/workload{w}"] + run + topo)
                label = f"sojourn postgres workload{w} " + ("16 conns" if not conns else "16 over 2")
                report(label, r, base)
    finally:
        pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
