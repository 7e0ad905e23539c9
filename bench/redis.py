#!/usr/bin/env python3
"""Client CPU per operation against a local Redis (and memcached), side by side with redis-benchmark.

Starts its own redis-server (and memcached, when installed) on a free
loopback port with nothing persisted, loads 100,000 records of one 100-byte
field, and prints for workloads A and C (500,000 operations, 16
connections, one request in flight per connection) and for the multiplexed
topology (16 in flight over 2 connections): throughput and the client's CPU
microseconds per operation, user and system apart, from the JSON report's
`client_cpu`. redis-benchmark runs the same shape (`-c 16 -n 500000 -t get`,
and `-P 16` for pipelining), its CPU taken from the kernel's rusage of the
process (what `/usr/bin/time -f "%U %S"` prints). Ratios are sojourn's CPU
per operation over redis-benchmark's.

It is a benchmark, not a test: it prints figures and never fails on them.
Usage: python3 bench/redis.py [--ops N] [--records N]
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

from common import build, children_cpu, free_port, redis_server, report, row, sojourn, start, stop, timed


def redis_benchmark(port, ops, pipeline):
    u0, s0 = children_cpu()
    t0 = time.time()
    timed(["redis-benchmark", "-p", str(port), "-c", "16", "-n", str(ops), "-t", "get",
           "-P", str(pipeline), "-q"])
    wall = time.time() - t0
    u1, s1 = children_cpu()
    user, sys_ = (u1 - u0) * 1e6 / ops, (s1 - s0) * 1e6 / ops
    return ops / wall, user + sys_, user, sys_


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=500_000)
    ap.add_argument("--records", type=int, default=100_000)
    a = ap.parse_args()
    if not shutil.which("redis-server"):
        sys.exit("redis-server is not installed (scripts/deps installs it)")
    build()
    tmp = tempfile.mkdtemp(prefix="sojourn-bench-redis-")
    server, port = redis_server(tmp)
    mc = None
    try:
        shape = ["-p", f"recordcount={a.records}", "-p", "fieldcount=1", "-p", "fieldlength=100"]
        run = shape + ["-p", f"operationcount={a.ops}", "-threads", "16", "--seed", "1"]
        url = f"redis://127.0.0.1:{port}"
        print(f"# {os.cpu_count()} cores; {a.records} records of 1 field of 100 B; {a.ops} operations; "
              f"16 connections; load average {os.getloadavg()[0]:.1f}")
        print(f"{'client':44} {'ops/s':>10} {'cpu us/op':>9} {'user':>7} {'sys':>7}  vs redis-benchmark")
        peer = {}
        if shutil.which("redis-benchmark"):
            # The command reads one key, `key:__rand_int__`; give it
            # a 100-byte value like sojourn's records (else every GET is nil).
            timed(["redis-benchmark", "-p", str(port), "-c", "1", "-n", "1", "-t", "set",
                   "-d", "100", "-q"])
            for pipeline in (1, 16):
                rate, us, user, sys_ = redis_benchmark(port, a.ops, pipeline)
                peer[pipeline] = us
                row(f"redis-benchmark -c 16 -t get -P {pipeline}", rate, us, user, sys_)
        sojourn("load", url, ["-P", "workloads/workloadc", "--drop", "-threads", "16"] + shape)
        sojourn("load", url + "/1", ["-P", "workloads/workloadc", "--drop", "-threads", "16",
                                     "-p", "redis.mode=string"] + shape)
        for mode, db in (("hash", url), ("string", url + "/1")):
            extra = ["-p", "redis.mode=string"] if mode == "string" else []
            for w in ("c", "a"):
                for conns in (None, 2):
                    topo = ["-p", f"connections={conns}"] if conns else []
                    r = sojourn("run", db, ["-P", f"workloads/workload{w}"] + run + extra + topo)
                    label = f"sojourn redis {mode:6} workload{w} " + ("16 conns" if not conns else "16 over 2")
                    report(label, r, peer.get(16 if conns else 1))
        if shutil.which("memcached"):
            mport = free_port()
            cmd = ["memcached", "-l", "127.0.0.1", "-p", str(mport), "-U", "0"]
            if os.geteuid() == 0:
                cmd += ["-u", "nobody"]
            mc = start(cmd, mport)
            murl = f"memcached://127.0.0.1:{mport}"
            sojourn("load", murl, ["-P", "workloads/workloadc", "--drop", "-threads", "16"] + shape)
            for w in ("c", "a"):
                for conns in (None, 2):
                    topo = ["-p", f"connections={conns}"] if conns else []
                    r = sojourn("run", murl, ["-P", f"workloads/workload{w}"] + run + topo)
                    report(f"sojourn memcached workload{w} " + ("16 conns" if not conns else "16 over 2"), r)
    finally:
        stop(server)
        if mc:
            stop(mc)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
