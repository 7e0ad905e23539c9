#!/usr/bin/env python3
"""The client's own cost and precision, on the driver-free backends.

Prints, for `null:` and `memory:`:
  - client CPU microseconds per operation (user + system) in closed loop at
    1, 16 and 64 connections, and the closed-loop rate reached;
  - at targets of 10k, 100k and 200k operations per second (open loop,
    Poisson arrivals, 16 connections): achieved versus target error and the
    scheduling lag p99 (how late operations left the client).

It is a benchmark, not a test: it prints figures and never fails on them.
Usage: python3 bench/core.py [--quick] [--ops N]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "sojourn")


def build():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "sojourn"], cwd=ROOT, check=True)


def sojourn(db, args, data_dir):
    """Run one phase and return its JSON report."""
    cmd = [BIN, "bench" if db.startswith("memory") else "run", db, "-P", "workloads/workloada",
           "--format", "json", "--no-progress", "--data-dir", data_dir] + args
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"sojourn failed: {' '.join(cmd)}\n{out.stderr}")
    return json.loads(out.stdout)


def threads(r):
    """The runtime threads the run chose and the busiest one's share of the
    run on a CPU."""
    busiest = r.get("busiest_thread")
    return f"{r['runtime_threads']:>7} {busiest if busiest is not None else float('nan'):>7.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer operations, a rough look")
    ap.add_argument("--ops", type=int, default=0, help="closed-loop operations per configuration")
    ap.add_argument("--seconds", type=float, default=0, help="seconds per open-loop configuration")
    a = ap.parse_args()
    closed_ops = a.ops or (500_000 if a.quick else 5_000_000)
    seconds = a.seconds or (2 if a.quick else 5)
    build()
    data = tempfile.mkdtemp(prefix="sojourn-bench-")
    print(f"# sojourn {BIN}; {os.cpu_count()} cores; workloada (50% read, 50% update, zipfian, 1 field of 100 B)")
    print()
    print("## closed loop: client CPU per operation")
    print(f"{'backend':8} {'conns':>5} {'ops':>10} {'ops/s':>12} {'cpu us/op':>10} {'user':>7} {'sys':>7} "
          f"{'threads':>7} {'busiest':>7}")
    common = ["-p", "recordcount=100000", "-p", "fieldcount=1", "-p", "fieldlength=100"]
    for db in ["null:", "memory:"]:
        for conns in [1, 16, 64]:
            r = sojourn(db, common + ["-p", f"operationcount={closed_ops}", "-threads", str(conns), "--seed", "1"], data)
            n = r["operations"]
            cpu = r["client_cpu"]
            print(f"{db:8} {conns:>5} {n:>10} {r['achieved_ops_per_sec']:>12.0f} {cpu['us_per_op']:>10.3f} "
                  f"{cpu['user_s'] * 1e6 / n:>7.3f} {cpu['system_s'] * 1e6 / n:>7.3f} {threads(r)}")
    print()
    print(f"## open loop (Poisson, 16 connections, {seconds:g} s each): achieved vs target, scheduling lag")
    print(f"{'backend':8} {'target':>8} {'offered':>10} {'achieved':>10} {'error %':>8} {'lag p50 us':>10} "
          f"{'lag p99 us':>10} {'resp p99 us':>11} {'cpu us/op':>10} {'threads':>7} {'busiest':>7}")
    for db in ["null:", "memory:"]:
        for target in [10_000, 100_000, 200_000]:
            ops = int(target * seconds)
            r = sojourn(db, common + ["-p", f"operationcount={ops}", "-threads", "16", "-target", str(target),
                                      "--seed", "2"], data)
            err = 100.0 * (r["achieved_ops_per_sec"] / target - 1.0)
            lag = r["scheduling_lag"] or {}
            resp = max(op["response"]["p99_us"] for op in r["ops"].values())
            print(f"{db:8} {target:>8} {r['offered_ops_per_sec']:>10.0f} {r['achieved_ops_per_sec']:>10.0f} "
                  f"{err:>8.2f} {lag.get('p50_us', 0):>10.1f} {lag.get('p99_us', 0):>10.1f} {resp:>11.1f} "
                  f"{r['client_cpu']['us_per_op']:>10.3f} {threads(r)}")


if __name__ == "__main__":
    main()
