#!/usr/bin/env python3
"""Soak: does a long run's memory stay flat?

A run left going for days must not grow: the summary's histograms are fixed
in size, the time series goes to the results store as it is measured, and
the Poisson self-check keeps running sums, not bins. This compresses hours
into minutes with a short time-series interval (by default 10 ms, so every
wall-clock second closes as many intervals as 100 s of a run at the default
1 s), runs `null:` under a target with the SQLite results store, and prints
the client's resident memory over time.

It is a benchmark, not a test: it prints figures and a verdict line and
never fails on them. Usage:
    python3 bench/soak.py [--seconds 120] [--target 100000] [--interval 0.01]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

from common import BIN, ROOT, build


def rss_mb(pid):
    """Resident memory of `pid` in MB, from the kernel; None once it ended."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=120, help="wall-clock length of the run")
    ap.add_argument("--target", type=int, default=100_000, help="operations per second offered")
    ap.add_argument("--interval", type=float, default=0.01, help="time-series interval in seconds")
    ap.add_argument("--every", type=float, default=5, help="seconds between memory samples")
    ap.add_argument("--no-build", action="store_true", help="use target/release/sojourn as it is")
    a = ap.parse_args()
    if not a.no_build:
        build()
    data = tempfile.mkdtemp(prefix="sojourn-soak-")
    cmd = [BIN, "run", "--db", "null:", "-P", "workloads/workloada", "--no-progress", "--data-dir", data,
           "-threads", "16", "-target", str(a.target), "-p", "operationcount=0",
           "-p", f"maxexecutiontime={a.seconds:g}", "-p", f"timeseries.interval={a.interval:g}",
           "-p", "status.interval=3600"]
    compress = 1.0 / a.interval
    print(f"# {' '.join(os.path.relpath(c, ROOT) if c == BIN else c for c in cmd)}")
    print(f"# {a.target} ops/s offered; one interval per {a.interval:g} s, so each wall-clock second "
          f"stands for {compress:g} s of a run at 1 s intervals")
    print(f"{'wall s':>7} {'as if h':>8} {'intervals':>10} {'RSS MB':>8}")
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    start = time.monotonic()
    samples = []
    while True:
        try:
            p.wait(timeout=a.every)
            break
        except subprocess.TimeoutExpired:
            pass
        mb = rss_mb(p.pid)
        if mb is None:
            break
        t = time.monotonic() - start
        samples.append((t, mb))
        print(f"{t:>7.0f} {t * compress / 3600:>8.2f} {int(t / a.interval):>10} {mb:>8.1f}", flush=True)
    err = p.communicate()[1]
    if p.returncode != 0:
        sys.exit(f"sojourn failed ({p.returncode}):\n{err}")
    # The first samples include start-up (connections, the store's first
    # writes); growth is judged from the end of the first fifth on.
    settled = [mb for t, mb in samples if t >= a.seconds / 5]
    if len(settled) >= 2:
        growth = settled[-1] - settled[0]
        hours = (samples[-1][0] - a.seconds / 5) * compress / 3600
        print(f"growth after start-up: {growth:+.1f} MB over {hours:.1f} h of 1 s intervals "
              f"({growth / max(hours, 1e-9):+.2f} MB per hour)")
    else:
        print("too few samples: run longer or sample more often (--every)")


if __name__ == "__main__":
    main()
