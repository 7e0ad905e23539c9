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
import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "sojourn")
USER, PASSWORD = "bench", "bench-secret"


def build():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "sojourn"], cwd=ROOT, check=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin():
    """The directory of PostgreSQL's server programs (Debian keeps them off PATH)."""
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(d, "postgres")):
            return d
    exe = shutil.which("postgres")
    if exe:
        return os.path.dirname(os.path.realpath(exe))
    sys.exit("PostgreSQL is not installed (scripts/deps installs it)")


def as_server_user():
    """preexec_fn and owner for the server: PostgreSQL refuses to run as root."""
    if os.geteuid() != 0:
        return None, None
    pw = pwd.getpwnam("postgres")

    def drop():
        os.setgroups([])
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)

    return drop, (pw.pw_uid, pw.pw_gid)


def timed(cmd, env=None):
    """Run cmd and return its stdout; its CPU shows in RUSAGE_CHILDREN."""
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return out


def children_cpu():
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime, r.ru_stime


def sojourn(phase, db, args):
    cmd = [BIN, phase, "--db", db, "--format", "json", "--no-progress"] + args
    return json.loads(timed(cmd))


def row(label, ops_per_sec, us, user, sys_, base=None):
    ratio = f"{us / base:6.2f}x" if base else ""
    print(f"{label:44} {ops_per_sec:>10.0f} {us:>9.2f} {user:>7.2f} {sys_:>7.2f}  {ratio}")


def report(label, r, base=None):
    n = max(r["operations"], 1)
    c = r["client_cpu"]
    row(label, r["achieved_ops_per_sec"], c["us_per_op"], c["user_s"] * 1e6 / n, c["system_s"] * 1e6 / n, base)
    return c["us_per_op"]


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
    bindir = pg_bin()
    build()
    drop, owner = as_server_user()
    tmp = tempfile.mkdtemp(prefix="sojourn-bench-pg-")
    pwfile = os.path.join(tmp, "pw")
    with open(pwfile, "w") as f:
        f.write(PASSWORD)
    if owner:
        for p in (tmp, pwfile):
            os.chown(p, *owner)
    data = os.path.join(tmp, "data")
    subprocess.run([os.path.join(bindir, "initdb"), "-D", data, "-U", USER, "-A", "scram-sha-256",
                    f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C", "--no-sync"],
                   check=True, stdout=subprocess.DEVNULL, preexec_fn=drop)
    port = free_port()
    server = subprocess.Popen(
        [os.path.join(bindir, "postgres"), "-D", data, "-p", str(port), "-k", tmp,
         "-c", "listen_addresses=127.0.0.1", "-c", "synchronous_commit=off",
         "-c", "shared_buffers=256MB", "-c", "max_connections=100"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=drop)
    env = dict(os.environ, PGPASSWORD=PASSWORD)
    try:
        deadline = time.time() + 60
        while subprocess.run([os.path.join(bindir, "pg_isready"), "-q", "-h", "127.0.0.1",
                              "-p", str(port)]).returncode != 0:
            if server.poll() is not None or time.time() > deadline:
                sys.exit("postgres did not start")
            time.sleep(0.05)
        shape = ["-p", f"recordcount={a.records}", "-p", "fieldcount=1", "-p", "fieldlength=100"]
        run = shape + ["-p", f"operationcount={a.ops}", "-threads", "16", "--seed", "1"]
        url = f"postgres://{USER}:{PASSWORD}@127.0.0.1:{port}/postgres"
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
        # A fast shutdown: active sessions are ended, shared memory removed.
        server.send_signal(signal.SIGINT)
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
