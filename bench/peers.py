#!/usr/bin/env python3
"""sojourn side by side with its peers: go-ycsb, YCSB, redis-benchmark, pgbench, latte.

One invocation installs what the registries offer and is missing (Debian's
redis-tools and PostgreSQL's client with pgbench, through apt-get when run
as root; go-ycsb built from its Go module; YCSB's core, its Redis and JDBC
bindings and PostgreSQL's JDBC driver from Maven Central), starts a private
Redis and a private PostgreSQL on free loopback ports with their data in
temporary directories, and runs the same jobs with every tool that
installed:

  - Redis and PostgreSQL: each tool loads its own records (YCSB's JDBC and
    Redis bindings share sojourn's, whose layouts are theirs), then
    workloads A and C at 16 and 1 connections, one request in flight each;
    redis-benchmark (`-t get`, one 100-byte value) and pgbench (`-S -M
    prepared -j 1`, its own 100,000 accounts) run next to workload C as
    references, at 16 connections in two rounds of three pairs in
    alternating order, the table keeping each round's median pair by the
    CPU ratio and a note giving every pair's (with `perf` at hand, one
    more run of each under `perf stat` for its context switches and
    syscalls per operation);
  - Cassandra (a private 5.0 node from scripts/cassandra-node, needing
    what scripts/deps installs for the tests): sojourn loads YCSB's table,
    then point reads (workload C) and point updates, uniform over the keys,
    16 requests in flight, by sojourn, latte (`cargo install latte-cli`:
    the scylla driver as sojourn, its workload in bench/latte/ycsb.rn on the
    same rows; one connection, 16 concurrent requests on one thread) and
    go-ycsb's `cassandra` binding (gocql; its own table of its layout,
    threadcount 16 over one connection);
  - MariaDB (a private server from Debian's packages): point selects as
    sysbench measures them, one table of 20,000 rows, 16 connections, 10 s
    closed loop each, two rounds: sojourn's workload C on YCSB's table of
    one 120-byte field, `sysbench oltp_point_select` on its own table, and
    go-ycsb's `mysql` binding on a table of its own (a reported figure);
    and sysbench again running YCSB's own query on sojourn's table
    (bench/sysbench/ycsb_point_select.lua, a reported figure: what the
    query costs a client, apart from what the client costs);
    with `perf` at hand, one more run of each under `perf stat` for its
    context switches and syscalls per operation;
  - null: sojourn's `null:` against YCSB's BasicDB and go-ycsb's `basic`,
    at 1 and 16 threads (the backend does nothing: this is client overhead);
  - Redis, sojourn alone: the open-loop self-check at 10k, 40k and 80k
    ops/s (workload C, 16 connections; a run that failed while the host
    stole is set aside and made again, as for the pacing runs below), the
    runtime thread sweep (1, 2, 4,
    8 threads for 16 connections) and the multiplexed pair (-threads 16 over
    2 connections, -threads 64 over 4, each making as many operations as
    redis-benchmark) beside redis-benchmark -c 2 -P 8 and -c 4 -P 16 making
    YCSB's read, an HGETALL of one-field hashes over as many keys (the
    verdict: the same work asked of the server; each row gives the server's
    CPU per command from its INFO), and beside its GET of one
    string key (a reported figure: half the server's work per request), in
    two rounds of three HGETALL/sojourn pairs in alternating order, the
    verdict taking each round's median pair, with the same perf counts (a
    pair the host took more than 50 ms from, during sojourn's run or the
    HGETALL one, is set aside from the verdicts; a round with every pair set
    aside is made again, up to twice);
  - pacing: `null:` open loop at 100k, 500k, 1M and 2M ops/s with 8
    connections, in two rounds: client CPU per operation, context switches
    per operation, the Poisson self-check, the scheduling lag, and the CPU
    time the host stole from the machine meanwhile (steal, from /proc/stat:
    a stall the client cannot help, which shows as its lateness; a run that
    failed the self-check or had a lag p99 of 50 us or more while the host
    took more than 50 ms from it is set aside from the verdicts and made
    again, up to twice: steal can make a run late, never on time, so a run
    on time stands however much was stolen);
  - sqlite: workload A with 8 connections at 5k and 20k ops/s: how far the
    reads' response time is above their service time;
  - tpcc: TPC-C by sojourn beside go-tpc (MariaDB) and sysbench-tpcc
    (MariaDB and PostgreSQL): tpmC and client CPU per New-Order, three
    alternating pairs each (see bench/tpcc.py);
  - scripts: pgbench's builtins (select-only, tpcb-like) run by sojourn
    (`-b NAME`) beside pgbench on one set of its tables, 16 clients, three
    alternating pairs each (the median pair kept), then pgbench -R beside
    sojourn -target at 80% of pgbench's select-only throughput (see
    bench/scripts.py);
  - commands: memtier_benchmark's and redis-benchmark's own command lines
    run by each tool and through `sojourn memtier` / `sojourn
    redis-benchmark` on a private Redis (and memcached): memtier `-t 1 -c
    16 --ratio 1:10 --distinct-client-seed` at pipeline 1 and 8,
    redis-benchmark `-t get -c 16`, three alternating pairs each, client
    CPU per operation and throughput (memtier_benchmark built from its
    release tag into the cache, or --memtier; see bench/commands.py).

On a machine of 4 CPUs or more, the servers are pinned to the first CPU and
the clients to the next eight (--no-pin to leave them be).

The servers start in this script's session, so on a kernel that schedules
sessions as groups (autogroup) they and the clients share one. With
--server-session own each server gets a session of its own, as a service
manager would give it: on two shared CPUs that changes how often a client
is woken, and a client that batches its wake-ups (sojourn) can lose more by
it than one that blocks per request (sysbench), so take both when a ratio
matters.

Defaults: 100,000 records of one 100-byte field, 500,000 operations per run,
zipfian requests. Every tool's client CPU is the kernel's rusage of its whole
process (os.wait4), user and system apart, divided by the operations it
completed; throughput, p50 and p99 are what each tool reports of itself.
Ratios are sojourn / peer at the same workload and connection count.

It is a benchmark, not a test: it is run by hand, prints figures, and never
fails on them. Downloads are cached (--cache, default ~/.cache/sojourn-peers).
Usage: python3 bench/peers.py [--ops N] [--records N]
       [--only redis|postgres|mysql|cassandra|null|pacing|sqlite|scripts|tpcc|commands]
       [--json FILE] [--no-pin] [--server-session shared|own] [--sojourn BIN] [--memtier BIN]
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import commands
import scripts
import tpcc
from common import (BIN, Cassandra, Failed, Mariadb, Postgres, ROOT, build, measured, pin_apart, redis_server,
                    servers_apart, stop)

GO_MODULE = "github.com/pingcap/go-ycsb"
# `@latest` first, as go-ycsb's README says; then tagged versions.
GO_VERSIONS = ["latest", "v1.0.1", "v1.0.0"]
YCSB = "site.ycsb:{}:0.17.0"
PG_JDBC = "org.postgresql:postgresql:42.7.4"

WORKLOADS = {
    "a": {"readproportion": "0.5", "updateproportion": "0.5"},
    "c": {"readproportion": "1", "updateproportion": "0"},
    # Point reads and point updates by uniformly drawn key among keys in
    # order (user0, user1, ...): what latte's workload draws too.
    "r": {"readproportion": "1", "updateproportion": "0", "requestdistribution": "uniform",
          "insertorder": "ordered"},
    "u": {"readproportion": "0", "updateproportion": "1", "requestdistribution": "uniform",
          "insertorder": "ordered"},
}

# The reference figures on a 2-core machine (Redis, workload C, 16
# connections): client CPU us/op, for targets no peer here could measure.
REFERENCE = {("redis", "YCSB"): 15.0, ("redis", "go-ycsb"): 10.8}

NOTES = []  # what did not install or run, and why


def note(msg):
    NOTES.append(msg)
    print(f"# {msg}", file=sys.stderr, flush=True)


def last_error(text):
    """The telling line of a failed command's output."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", l).strip() for l in text.splitlines()]
    lines = [l for l in lines if l]
    for l in lines:
        m = re.search(r"(\S+) was not found in (\S+)", l)
        if m:
            return f"{m.group(1)} was not found in {m.group(2)}"
        for what in ("Could not find artifact", "Failure to find", "403 Forbidden", "404 Not Found"):
            if what in l:
                return l[l.index(what):].split(" -> [Help")[0][:240]
    errs = [l for l in lines if l.startswith("[ERROR]") and len(l) > 10]
    return ((errs or lines or ["no output"])[0 if errs else -1])[:240]


# --- installing -----------------------------------------------------------

def apt_install(exe, package):
    """Debian's package for a missing program, when run as root."""
    if shutil.which(exe):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        note(f"{exe} missing: install Debian's {package}")
        return
    r = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", package],
                       capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    if r.returncode != 0 or not shutil.which(exe):
        note(f"{exe} missing: apt-get install {package} failed: {last_error(r.stderr)}")


def go_exe():
    return shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else None)


def install_go_ycsb(cache):
    """go-ycsb built from its Go module; None (with a note) if no version builds."""
    go = go_exe()
    if not go:
        note("go-ycsb skipped: no Go toolchain (go) found")
        return None
    root = os.path.join(cache, "go-ycsb")
    exe = os.path.join(root, "bin", "go-ycsb")
    if os.path.exists(exe):
        return exe
    os.makedirs(root, exist_ok=True)
    env = dict(os.environ, GOFLAGS="-mod=mod", GOBIN=os.path.join(root, "bin"))
    errors = []
    for v in GO_VERSIONS:
        print(f"# building go-ycsb {v} from {GO_MODULE} ...", file=sys.stderr, flush=True)
        r = subprocess.run([go, "install", f"{GO_MODULE}/cmd/go-ycsb@{v}"], env=env, capture_output=True,
                           text=True, timeout=1800)
        if r.returncode == 0 and os.path.exists(exe):
            return exe
        errors.append(f"install @{v}: {last_error(r.stderr)}")
        # `go install pkg@version` also asks the proxy for the module's list
        # of versions (for deprecation notices); when that is refused, build
        # the downloaded module in its own directory instead (its go.mod's
        # replace directives then apply, as they do to `go install`).
        if v == "latest":
            continue
        r = subprocess.run([go, "mod", "download", "-json", f"{GO_MODULE}@{v}"], env=env,
                           capture_output=True, text=True, timeout=900)
        try:
            src = json.loads(r.stdout).get("Dir")
        except ValueError:
            src = None
        if not src:
            errors.append(f"download @{v}: {last_error(r.stderr or r.stdout)}")
            continue
        work = os.path.join(root, f"src-{v}")
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(src, work)
        for d, _, files in os.walk(work):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        r = subprocess.run([go, "build", "-o", exe, "./cmd/go-ycsb"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=1800)
        if r.returncode == 0 and os.path.exists(exe):
            with open(os.path.join(root, "VERSION"), "w") as f:
                f.write(v + "\n")
            return exe
        errors.append(f"build @{v}: {last_error(r.stderr)}")
    note("go-ycsb did not build, going on without it: " + "; ".join(errors))
    return None


def go_ycsb_version(cache):
    try:
        with open(os.path.join(cache, "go-ycsb", "VERSION")) as f:
            return f.read().strip()
    except OSError:
        return "latest"


def maven_fetch(cache, coord):
    """One artifact and its runtime dependencies from Maven Central into its own
    folder, through a throwaway pom; the folder, or None (with a note)."""
    group, artifact, version = coord.split(":")
    out = os.path.join(cache, "maven", f"{artifact}-{version}")
    if os.path.exists(os.path.join(out, ".complete")):
        return out
    if not shutil.which("mvn"):
        note(f"{coord} skipped: Maven (mvn) is not installed")
        return None
    with tempfile.TemporaryDirectory(prefix="sojourn-peers-pom-") as tmp:
        with open(os.path.join(tmp, "pom.xml"), "w") as f:
            f.write(f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.sojourn.bench</groupId><artifactId>peers</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version></dependency>
  </dependencies>
</project>
""")
        r = subprocess.run(["mvn", "-q", "-B", "-U", "dependency:copy-dependencies", f"-DoutputDirectory={out}",
                            "-DincludeScope=runtime"], cwd=tmp, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        shutil.rmtree(out, ignore_errors=True)
        note(f"{coord} not installed: {last_error(r.stdout + r.stderr)}")
        return None
    open(os.path.join(out, ".complete"), "w").close()
    return out


def install_ycsb(cache):
    """Class paths for YCSB: {'core': cp, 'redis': cp, 'jdbc': cp} for what installed."""
    if not shutil.which("java"):
        note("YCSB skipped: no java")
        return {}
    core = maven_fetch(cache, YCSB.format("core"))
    if not core:
        return {}
    jars = lambda d: sorted(glob.glob(os.path.join(d, "*.jar")))
    cps = {"core": jars(core)}
    redis = maven_fetch(cache, YCSB.format("redis-binding"))
    if redis:
        cps["redis"] = jars(core) + jars(redis)
    jdbc = maven_fetch(cache, YCSB.format("jdbc-binding"))
    driver = maven_fetch(cache, PG_JDBC) if jdbc else None
    if jdbc and driver:
        cps["jdbc"] = jars(core) + jars(jdbc) + jars(driver)
    return {k: ":".join(v) for k, v in cps.items()}


# --- workloads ------------------------------------------------------------

def workload_files(tmp, records, ops):
    """YCSB workload files written from the properties: the Java class name
    (read by YCSB and sojourn) and go-ycsb's `core`."""
    files = {}
    for w, mix in WORKLOADS.items():
        props = {"recordcount": records, "operationcount": ops, "fieldcount": 1, "fieldlength": 100,
                 "readallfields": "true", "scanproportion": 0, "insertproportion": 0,
                 "requestdistribution": "zipfian", **mix}
        for flavour, cls in (("java", "site.ycsb.workloads.CoreWorkload"), ("go", "core")):
            path = os.path.join(tmp, f"workload{w}.{flavour}")
            with open(path, "w") as f:
                f.write(f"# workload {w.upper()}, written by bench/peers.py\nworkload={cls}\n")
                f.writelines(f"{k}={v}\n" for k, v in props.items())
            files[w, flavour] = path
    return files


# --- running the tools ----------------------------------------------------

def result(tool, db, workload, conns, ops, ops_per_sec, wall, user, sys_, p50=None, p99=None, extra=None):
    n = max(ops, 1)
    r = {"tool": tool, "db": db, "workload": workload, "conns": conns, "operations": ops,
         "ops_per_sec": ops_per_sec, "wall_s": round(wall, 3), "cpu_user_s": user, "cpu_system_s": sys_,
         "cpu_us_per_op": (user + sys_) * 1e6 / n, "user_us_per_op": user * 1e6 / n,
         "sys_us_per_op": sys_ * 1e6 / n, "read_p50_us": p50, "read_p99_us": p99,
         "load_average_1m": round(os.getloadavg()[0], 2)}
    if extra:
        r.update(extra)
    return r


class Runner:
    def __init__(self, a, tmp, files, go_ycsb, ycsb_cp):
        self.a, self.tmp, self.files = a, tmp, files
        self.go_ycsb, self.ycsb_cp = go_ycsb, ycsb_cp
        self.results = []
        # Figures of sojourn's own jobs, by table: rows of named columns.
        self.tables = {}
        self.limit = a.time_limit
        self.said_no_perf = False

    def keep(self, r):
        if r:
            self.results.append(r)
            print(f"#   {r['tool']:15} {r['db']:8} {r['workload']:3} {r['conns']:>3} conns: "
                  f"{r['ops_per_sec']:>9.0f} ops/s {r['cpu_us_per_op']:7.2f} us/op", file=sys.stderr, flush=True)
        return r

    def attempt(self, what, fn, *args):
        try:
            return fn(*args)
        except (Failed, KeyError, ValueError, subprocess.SubprocessError) as e:
            note(f"{what} failed: {e}")
            return None

    # sojourn
    def sojourn_cmd(self, phase, db_url, w, conns, extra=()):
        cmd = [self.a.sojourn or BIN, phase, "--db", db_url, "-P", self.files[w, "java"], "-threads", str(conns),
               "--seed", "1", "--no-progress", "--no-store", "--format", "json",
               "-p", f"maxexecutiontime={self.limit}"] + list(extra)
        if phase == "load":
            cmd.append("--drop")
        return cmd

    def sojourn(self, phase, db_url, w, conns, extra=()):
        out, _, wall, user, sys_ = measured(self.sojourn_cmd(phase, db_url, w, conns, extra),
                                            timeout=self.limit + 60)
        return json.loads(out), wall, user, sys_

    def sojourn_run(self, db, db_url, w, conns, extra=(), round_=None):
        r, wall, user, sys_ = self.sojourn("run", db_url, w, conns, extra)
        read = (r["ops"].get("read") or {}).get("service") or {}
        more = {"json_client_cpu": r["client_cpu"], "runtime_threads": r.get("runtime_threads"),
                "busiest_thread": r.get("busiest_thread")}
        if round_:
            more["round"] = round_
        return result("sojourn", db, w.upper(), conns, r["operations"], r["achieved_ops_per_sec"], wall, user,
                      sys_, read.get("p50_us"), read.get("p99_us"), more)

    # YCSB (Java)
    def ycsb(self, phase, cp, cls, db, w, conns, props):
        cmd = ["java", "-cp", cp, "site.ycsb.Client", "-load" if phase == "load" else "-t", "-db", cls,
               "-P", self.files[w, "java"], "-threads", str(conns), "-p", "measurementtype=hdrhistogram",
               "-p", "hdrhistogram.percentiles=50,99", "-p", f"maxexecutiontime={self.limit}"]
        for k, v in props.items():
            cmd += ["-p", f"{k}={v}"]
        out, _, wall, user, sys_ = measured(cmd, timeout=self.limit + 60)
        stats = {}
        for line in out.splitlines():
            m = re.match(r"\[([A-Z-]+)\], ([^,]+), ([-\d.eE]+)$", line.strip())
            if m:
                stats[m.group(1), m.group(2)] = float(m.group(3))
        ops = int(sum(v for (op, k), v in stats.items()
                      if k == "Operations" and op in ("READ", "UPDATE", "INSERT", "SCAN", "DELETE")))
        for (op, k), v in stats.items():
            if k == "Return=ERROR" and v:
                raise Failed(f"YCSB {cls}: {int(v)} {op} errors")
        if phase == "load":
            return None
        return result("YCSB", db, w.upper(), conns, ops, stats[("OVERALL", "Throughput(ops/sec)")], wall,
                      user, sys_, stats.get(("READ", "50thPercentileLatency(us)")),
                      stats.get(("READ", "99thPercentileLatency(us)")))

    # go-ycsb
    def goycsb(self, phase, binding, db, w, conns, props):
        # go-ycsb keeps the first value of a property given twice.
        cmd = [self.go_ycsb, phase, binding, "-P", self.files[w, "go"], "-p", f"threadcount={conns}",
               "-p", f"maxexecutiontime={props.get('maxexecutiontime', self.limit)}"]
        props = {k: v for k, v in props.items() if k not in ("maxexecutiontime", "threadcount")}
        for k, v in props.items():
            cmd += ["-p", f"{k}={v}"]
        out, err, wall, user, sys_ = measured(cmd, timeout=self.limit + 60)
        # The summary follows "Run finished"; earlier lines are progress.
        text = out.split("Run finished")[-1]
        stats = {}
        for line in text.splitlines():
            m = re.match(r"^(\S+)\s+- (.*)$", line.strip())
            if m:
                fields = dict(re.findall(r"([\w.()]+): ([-\d.]+)", m.group(2)))
                stats[m.group(1)] = fields
        errs = [k for k in stats if k.endswith("_ERROR")]
        if errs:
            raise Failed(f"go-ycsb {binding}: errors {errs}: " + " ".join(f"{k}={stats[k].get('Count')}"
                                                                           for k in errs))
        if phase == "load":
            return None
        ops = sum(int(float(stats[k]["Count"])) for k in ("READ", "UPDATE") if k in stats)
        total = stats.get("TOTAL")
        rate = float(total["OPS"]) if total and "OPS" in total else ops / max(
            max(float(s.get("Takes(s)", 0)) for s in stats.values()), 1e-9)
        read = stats.get("READ", {})
        p50, p99 = read.get("50th(us)"), read.get("99th(us)")
        return result("go-ycsb", db, w.upper(), conns, ops, rate, wall, user, sys_,
                      float(p50) if p50 else None, float(p99) if p99 else None)

    # --- the three jobs ---

    def redis(self):
        tmp = tempfile.mkdtemp(prefix="redis-", dir=self.tmp)
        server, port = redis_server(tmp)
        try:
            url = f"redis://127.0.0.1:{port}/0"
            self.attempt("sojourn load redis", self.sojourn, "load", url, "c", 16)
            go_props = {"redis.addr": f"127.0.0.1:{port}", "redis.mode": "single", "redis.datatype": "hash",
                        "redis.db": 1}
            n_notes = len(NOTES)
            if self.go_ycsb:
                self.attempt("go-ycsb load redis", self.goycsb, "load", "redis", "redis", "c", 16,
                             dict(go_props, dropdata="true"))
            go_ok = self.go_ycsb and len(NOTES) == n_notes
            # YCSB's Redis binding reads sojourn's records (the same hash layout, db 0).
            y_props = {"redis.host": "127.0.0.1", "redis.port": port}
            for w in ("a", "c"):
                for conns in (16, 1):
                    if (w, conns) != ("c", 16):  # C/16: in two rounds beside redis-benchmark, below
                        self.keep(self.attempt(f"sojourn redis {w}/{conns}", self.sojourn_run, "redis", url, w,
                                               conns))
                    if go_ok:
                        self.keep(self.attempt(f"go-ycsb redis {w}/{conns}", self.goycsb, "run", "redis", "redis",
                                               w, conns, go_props))
                    if "redis" in self.ycsb_cp:
                        self.keep(self.attempt(f"YCSB redis {w}/{conns}", self.ycsb, "run", self.ycsb_cp["redis"],
                                               "site.ycsb.db.RedisClient", "redis", w, conns, y_props))
            bench = shutil.which("redis-benchmark")
            if bench:
                # One 100-byte value under the key `-t get` reads (else every GET is nil).
                self.attempt("redis-benchmark -t set", measured, ["redis-benchmark", "-p", str(port), "-c", "1",
                                                                   "-n", "1", "-t", "set", "-d", "100", "-q"])
                self.keep(self.attempt("redis-benchmark 1", self.redis_benchmark, port, 1))
            self.beside_c_tool("redis", url, "redis-benchmark",
                               (lambda round_: self.redis_benchmark(port, 16, 1, round_)) if bench else None,
                               self.redis_benchmark_cmd(port, 16)[0])
            self.redis_own(url, port, bench)
        finally:
            stop(server)

    def redis_own(self, url, port, bench):
        """The self-check at rates well below capacity, the thread sweep and
        the multiplexed pair: sojourn's own figures on Redis."""
        for rate in (10_000, 40_000, 80_000):
            self.undisturbed(f"sojourn redis self-check {rate}", self.checked_open_loop, "Redis open loop "
                             "(workload C, 16 connections): the self-check well below capacity", failed_check, url,
                             "c", 16, rate, 15)
        title = "Redis workload C, 16 connections, one request in flight each: runtime threads"
        # The default first: the count sojourn picks, then each count forced.
        for threads in (None, 1, 2, 4, 8):
            forced = ["-p", f"runtime.threads={threads}"] if threads else []
            r = self.attempt(f"sojourn redis threads {threads or 'default'}", self.sojourn_run, "redis", url,
                             "c", 16, forced)
            if r:
                self.row(title, {"runtime threads": f"{r['runtime_threads']} (default)" if threads is None
                                 else threads, "ops/s": r["ops_per_sec"], "cpu us/op": r["cpu_us_per_op"],
                                 "busiest thread": r["busiest_thread"]})
        title = "Redis workload C, multiplexed: N workers over K connections, against redis-benchmark -P"
        # YCSB's read is an HGETALL over the records loaded; redis-benchmark
        # reading one-field hashes over as many keys asks the server for the
        # same work, and the verdict is taken against it. Its GET of one
        # string key, which costs the server half as much, is a reported
        # figure (see own_verdicts).
        hashes = bool(bench) and bool(self.attempt("redis-benchmark hset", self.redis_hashes, port))
        for round_ in (1, 2):
            for workers, conns, depth in ((16, 2, 8), (64, 4, 16)):
                # Steal during sojourn's run or its HGETALL peer's counts:
                # one thread of the server bounds both.
                self.undisturbed(f"redis -threads {workers} over {conns} round {round_}", self.mux_job, title, url,
                                 port, bench, hashes, round_, workers, conns, depth)

    def undisturbed(self, what, run, *args):
        """`run(*args)`, which makes one job's rows and returns the CPU the
        host stole meanwhile (ms, None where it failed), made again up to
        twice while that is more than STEAL_MS: such rows stay in the
        table, marked set aside, and the verdicts leave them out (the
        lateness or the lost throughput is the host's)."""
        for attempt in range(3):
            stolen = run(*args)
            if stolen is None or stolen <= STEAL_MS or attempt == 2:
                return
            note(f"{what}: the host stole {stolen:.0f} ms of CPU during the run (more than {STEAL_MS} ms); "
                 "set aside and made again")

    def mux_job(self, title, url, port, bench, hashes, round_, workers, conns, depth):
        """One round of the multiplexed job: redis-benchmark's GET once, then
        PAIRS pairs of its HGETALL and sojourn with as many operations,
        each pair in the other order from the one before, a row each (perf
        counts in round 1). Back-to-back runs on this host differ by up to a
        fifth in throughput (the server's one thread shares the machine),
        so one pair cannot tell a client 5% ahead from one 10% behind: the
        verdict takes each round's median pair, and the alternating order
        cancels a drift across the round. Returns the least CPU the host
        stole during a pair, in ms (see `undisturbed`): a round is made
        again only when every pair was disturbed."""
        def timed(fn, *args):
            before, server = steal_ms(), redis_cpu(port)
            r = fn(*args)
            if r and before is not None:
                r["steal_ms"] = steal_ms() - before
            after = redis_cpu(port)
            if r and server and after and after[1] > server[1]:
                r["server_us_per_op"] = (after[0] - server[0]) * 1e6 / (after[1] - server[1])
            return r

        p = self.attempt(f"redis-benchmark GET -c {conns} -P {depth}", timed, self.redis_benchmark, port, conns,
                         depth) if bench else None
        if p:
            self.row(title, {"tool": f"redis-benchmark GET -c {conns} -P {depth}", "round": round_, "pair": None,
                             "runtime threads": None, **self.mux_figures(p)})
        # As many operations as redis-benchmark makes, so that neither
        # run's start weighs more.
        n = self.redis_benchmark_cmd(port, conns, depth)[1]
        extra = ["-p", f"connections={conns}", "-p", f"operationcount={n}"]

        def hgetall():
            return self.attempt(f"redis-benchmark HGETALL -c {conns} -P {depth}", timed, self.redis_benchmark,
                                port, conns, depth, None, True) if hashes else None

        def ours():
            return self.attempt(f"sojourn redis {workers}/{conns}", timed, self.sojourn_run, "redis", url, "c",
                                workers, extra)

        least = None
        for pair in range(1, PAIRS + 1):
            r, h = in_turn(pair, ours, hgetall)
            stolen = max((x.get("steal_ms") or 0 for x in (h, r) if x), default=0)
            if r:
                least = stolen if least is None else min(least, stolen)
            if round_ == 1 and pair == 1:
                self.count_events(p, self.redis_benchmark_cmd(port, conns, depth)[0])
                self.count_events(h, self.redis_benchmark_cmd(port, conns, depth, True)[0])
                self.count_events(r, self.sojourn_cmd("run", url, "c", workers, extra))
            if h:
                self.row(title, {"tool": f"redis-benchmark HGETALL -c {conns} -P {depth}", "round": round_,
                                 "pair": pair, "runtime threads": None, **self.mux_figures(h)})
            if r:
                self.row(title, {"tool": f"sojourn -threads {workers} connections={conns}", "round": round_,
                                 "pair": pair, "runtime threads": r["runtime_threads"],
                                 **self.mux_figures(r, {"HGETALL": h, "GET": p}),
                                 "set aside": set_aside(stolen)})
        return least

    def beside_c_tool(self, db, url, tool, run_tool, tool_cmd, env=None):
        """sojourn's workload C at 16 connections and `tool`'s run
        (`run_tool(round)`, None when it is missing) in two rounds of PAIRS
        pairs in alternating order. The table keeps each round's median
        pair by the CPU ratio (a note gives every pair's): the kernel's
        share of a loopback request, most of either client's CPU, moves by
        a tenth between back-to-back runs here, more than the margin
        judged. Round 1's kept pair is also counted under perf."""
        for round_ in (1, 2):
            pairs = []
            for pair in range(1, PAIRS + 1):
                def ours():
                    return self.attempt(f"sojourn {db} c/16 round {round_} pair {pair}", self.sojourn_run, db, url,
                                        "c", 16, (), round_)

                def theirs():
                    return self.attempt(f"{tool} 16 round {round_} pair {pair}", run_tool, round_)

                if not run_tool:
                    pairs.append((ours(), None))
                    break
                pairs.append(in_turn(pair, ours, theirs))
            both = sorted(((s, p) for s, p in pairs if s and p), key=lambda sp: sp[0]["cpu_us_per_op"] /
                          sp[1]["cpu_us_per_op"])
            if len(both) > 1:
                note(f"{db} C/16 round {round_}: client CPU/op sojourn / {tool} by pair, in order: " + ", ".join(
                    f"{s['cpu_us_per_op'] / p['cpu_us_per_op']:.2f}x" for s, p in pairs if s and p)
                    + "; the table keeps the median pair")
            s, p = both[len(both) // 2] if both else next(iter(pairs), (None, None))
            self.keep(s)
            self.keep(p)
            if round_ == 1:
                self.count_events(s, self.sojourn_cmd("run", url, "c", 16))
                self.count_events(p, tool_cmd, env)

    @staticmethod
    def mux_figures(r, peers=None):
        """One multiplexed run's row: throughput, CPU split, wake-ups and
        syscalls per operation, and the ratios to each of `peers` (name:
        run, None where it did not run)."""
        row = {"ops/s": r["ops_per_sec"], "cpu us/op": r["cpu_us_per_op"], "user": r["user_us_per_op"],
               "sys": r["sys_us_per_op"], "cs/op": r.get("cs_per_op"), "syscalls/op": r.get("syscalls_per_op"),
               "server us/op": r.get("server_us_per_op"), "steal ms": r.get("steal_ms")}
        for name, peer in (peers or {}).items():
            row[f"ops/s vs {name}"] = r["ops_per_sec"] / peer["ops_per_sec"] if peer else None
            row[f"cpu vs {name}"] = r["cpu_us_per_op"] / peer["cpu_us_per_op"] if peer else None
        return row

    def row(self, title, r):
        self.tables.setdefault(title, []).append(r)
        print(f"#   {title[:40]}: " + ", ".join(f"{k} {fmt(v)}" for k, v in r.items()), file=sys.stderr,
              flush=True)
        return r

    def open_loop(self, title, db_url, w, conns, rate, seconds, round_=None):
        """One open-loop run at `rate` for `seconds`: the client's CPU per
        operation, the self-check, how far reads' response time is above
        their service time (the wait the client or the database added), and
        the time the machine's host took its CPUs away (steal), which shows
        in the lag and the self-check as the client's lateness."""
        extra = ["-target", str(rate), "-p", f"operationcount={int(rate * seconds)}",
                 "-p", f"maxexecutiontime={seconds}"]
        stolen = steal_ms()
        r, wall, user, sys_ = self.sojourn("run", db_url, w, conns, extra)
        stolen = steal_ms() - stolen if stolen is not None else None
        check = r["self_check"]
        arr = check.get("arrivals") or {}
        read = r["ops"].get("read") or {}
        svc, resp = read.get("service") or {}, read.get("response") or {}
        ops = max(r["operations"], 1)
        counts = {"tool": "sojourn", "db": db_url}
        self.count_events(counts, self.sojourn_cmd("run", db_url, w, conns, extra))
        return self.row(title, {
            **({"round": round_} if round_ else {}), "target": rate, "ops/s": r["achieved_ops_per_sec"],
            "cpu us/op": (user + sys_) * 1e6 / ops, "user us/op": user * 1e6 / ops, "sys us/op": sys_ * 1e6 / ops,
            "cs/op": counts.get("cs_per_op"), "syscalls/op": counts.get("syscalls_per_op"),
            "lag p99 us": check["scheduling_lag_p99_us"],
            "dispersion": arr.get("dispersion"), "z": arr.get("z"), "check": "passed" if check["passed"] else
            "FAILED", "read service p99 us": svc.get("p99_us"), "read response p99 us": resp.get("p99_us"),
            "response - service p99 us": (resp["p99_us"] - svc["p99_us"]) if svc and resp else None,
            "steal ms": stolen,
        })

    def perf_events(self, cmd, env=None):
        """`cmd` run under `perf stat`: its stdout, and the context switches
        and syscalls it made."""
        with tempfile.NamedTemporaryFile("r", suffix=".perf") as f:
            out, _, _, _, _ = measured(["perf", "stat", "-x", ",", "-o", f.name, "-e",
                                        "context-switches,raw_syscalls:sys_enter", "--"] + cmd,
                                       env, timeout=self.limit + 60)
            counts = {}
            for line in f.read().splitlines():
                parts = line.split(",")
                if len(parts) > 2 and parts[0].strip().isdigit():
                    counts[parts[2]] = int(parts[0])
        return out, counts

    def pacing(self):
        title = "null: open loop, Poisson, 8 connections: the pacer's cost and precision"
        for round_ in (1, 2):
            for rate in (100_000, 500_000, 1_000_000, 2_000_000):
                self.undisturbed(f"sojourn null open loop {rate} round {round_}", self.checked_open_loop, title,
                                 off_pace, "null:", "c", 8, rate, 10, round_)

    def checked_open_loop(self, title, late, db_url, w, conns, rate, seconds, round_=None):
        """One open-loop run (see `open_loop`); when `late(row)`, the CPU the
        host stole meanwhile, and the row marked set aside if that is more
        than STEAL_MS (see `undisturbed`). Steal can make a run late, never
        on time: a run that kept to its schedule while the host stole from
        it stands, and is not made again."""
        row = self.attempt(f"sojourn {db_url} open loop {rate}" + (f" round {round_}" if round_ else ""),
                           self.open_loop, title, db_url, w, conns, rate, seconds, round_)
        if not row:
            return None
        stolen = row["steal ms"] if late(row) else 0
        row["set aside"] = set_aside(stolen)
        return stolen

    def scripts(self):
        scripts.run(self, result, in_turn, note)

    def tpcc(self):
        tpcc.run(self, result, in_turn, note)

    def commands(self):
        commands.run(self, result, in_turn, note, redis_cpu)

    def sqlite(self):
        title = "SQLite workload A, 8 connections: reads' response time above their service time"
        db = "sqlite:" + os.path.join(self.tmp, "bench.sqlite")
        if not self.attempt("sojourn load sqlite", self.sojourn, "load", db, "a", 1):
            return
        for rate in (5_000, 20_000):
            self.attempt(f"sojourn sqlite {rate}", self.open_loop, title, db, "a", 8, rate, 15)

    def redis_benchmark_cmd(self, port, conns, pipeline=1, hashes=False):
        """redis-benchmark's command line over `conns` connections
        `pipeline` deep, and the requests it makes: GETs of its one string
        key, or with `hashes` YCSB's read, an HGETALL, over as many keys as
        the records loaded (see `redis_hashes`)."""
        n = self.a.ops * max(pipeline // 2, 1)
        what = ["-r", str(self.a.records), "hgetall", "key:__rand_int__"] if hashes else ["-t", "get"]
        return ["redis-benchmark", "-p", str(port), "-c", str(conns), "-n", str(n), "-P", str(pipeline), "--csv"] \
            + what, n

    def redis_hashes(self, port):
        """One-field hashes of 100 bytes under redis-benchmark's random keys,
        nearly every one of as many as the records loaded, for `hashes`
        runs; True once written."""
        measured(["redis-benchmark", "-p", str(port), "-c", "4", "-P", "64", "-r", str(self.a.records), "-n",
                  str(self.a.records * 10), "hset", "key:__rand_int__", "field0", "x" * 100])
        return True

    def redis_benchmark(self, port, conns, pipeline=1, round_=None, hashes=False):
        cmd, n = self.redis_benchmark_cmd(port, conns, pipeline, hashes)
        out, _, wall, user, sys_ = measured(cmd, timeout=self.limit + 60)
        rows = [l.replace('"', "").split(",") for l in out.strip().splitlines()]
        head, vals = rows[0], rows[-1]
        v = dict(zip(head, vals))
        return result("redis-benchmark", "redis", "HGETALL" if hashes else "GET", conns, n, float(v["rps"]), wall,
                      user, sys_,
                      float(v["p50_latency_ms"]) * 1000, float(v["p99_latency_ms"]) * 1000,
                      {"round": round_} if round_ else None)

    def postgres(self):
        tmp = tempfile.mkdtemp(prefix="pg-", dir=self.tmp)
        pg = Postgres(tmp)
        try:
            self.attempt("sojourn load postgres", self.sojourn, "load", pg.url, "c", 16)
            go_props = {"pg.host": "127.0.0.1", "pg.port": pg.port, "pg.user": pg.USER,
                        "pg.password": pg.PASSWORD, "pg.db": "postgres", "pg.sslmode": "disable",
                        "table": "usertable_goycsb"}
            n_notes = len(NOTES)
            if self.go_ycsb:
                self.attempt("go-ycsb load pg", self.goycsb, "load", "pg", "postgres", "c", 16,
                             dict(go_props, dropdata="true"))
            go_ok = self.go_ycsb and len(NOTES) == n_notes
            # YCSB's JDBC binding reads sojourn's table (YCSB's JDBC layout).
            y_props = {"db.driver": "org.postgresql.Driver",
                       "db.url": f"jdbc:postgresql://127.0.0.1:{pg.port}/postgres",
                       "db.user": pg.USER, "db.passwd": pg.PASSWORD}
            for w in ("a", "c"):
                for conns in (16, 1):
                    if (w, conns) != ("c", 16):  # C/16: in two rounds beside pgbench, below
                        self.keep(self.attempt(f"sojourn postgres {w}/{conns}", self.sojourn_run, "postgres",
                                               pg.url, w, conns))
                    if go_ok:
                        self.keep(self.attempt(f"go-ycsb pg {w}/{conns}", self.goycsb, "run", "pg", "postgres", w,
                                               conns, go_props))
                    if "jdbc" in self.ycsb_cp:
                        self.keep(self.attempt(f"YCSB jdbc {w}/{conns}", self.ycsb, "run", self.ycsb_cp["jdbc"],
                                               "site.ycsb.db.JdbcDBClient", "postgres", w, conns, y_props))
            pgbench = pg.tool("pgbench")
            if pgbench:
                scale = max(self.a.records // 100_000, 1)
                ok = self.attempt("pgbench -i", measured, [pgbench, "-i", "-q", "-s", str(scale), "-h", "127.0.0.1",
                                                           "-p", str(pg.port), "-U", pg.USER, "postgres"], pg.env)
                if ok:
                    self.keep(self.attempt("pgbench 1", self.pgbench, pgbench, pg, 1))
            self.beside_c_tool("postgres", pg.url, "pgbench",
                               (lambda round_: self.pgbench(pgbench, pg, 16, round_)) if pgbench and ok else None,
                               self.pgbench_cmd(pgbench, pg, 16) if pgbench else None, pg.env)
        finally:
            pg.stop()

    def pgbench_cmd(self, exe, pg, conns):
        return [exe, "-h", "127.0.0.1", "-p", str(pg.port), "-U", pg.USER, "-S", "-M", "prepared",
                "-c", str(conns), "-j", "1", "-t", str(self.a.ops // conns), "-n", "postgres"]

    def pgbench(self, exe, pg, conns, round_=None):
        out, _, wall, user, sys_ = measured(self.pgbench_cmd(exe, pg, conns), pg.env, timeout=self.limit + 60)
        tps = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out) or \
            re.search(r"tps = ([\d.]+)", out)
        return result("pgbench", "postgres", "-S", conns, self.a.ops // conns * conns, float(tps.group(1)), wall,
                      user, sys_, extra={"round": round_} if round_ else None)

    # --- MariaDB: sojourn against sysbench ---

    MYSQL_ROWS, MYSQL_SECONDS, MYSQL_CONNS = 20_000, 10, 16

    def mysql(self):
        tmp = tempfile.mkdtemp(prefix="mariadb-", dir=self.tmp)
        try:
            db = Mariadb(tmp)
        except (Failed, subprocess.SubprocessError) as e:
            note(f"MariaDB did not start: {e}")
            return
        try:
            rows, secs, conns = self.MYSQL_ROWS, self.MYSQL_SECONDS, self.MYSQL_CONNS
            shape = ["-P", os.path.join(ROOT, "workloads", "workloadc"), "-p", f"recordcount={rows}",
                     "-p", "fieldcount=1", "-p", "fieldlength=120"]
            base = [self.a.sojourn or BIN]
            load = self.attempt("sojourn load mysql", measured, base + ["load", "--db", db.url] + shape +
                                ["-threads", "8", "--no-progress", "--no-store", "--drop"])
            sysbench = shutil.which("sysbench")
            sb = [sysbench, "oltp_point_select", "--db-driver=mysql", "--mysql-host=127.0.0.1",
                  f"--mysql-port={db.port}", "--mysql-user=root", "--mysql-db=sbtest", "--tables=1",
                  f"--table-size={rows}"] if sysbench else None
            # The same sysbench on YCSB's query and sojourn's table: what the
            # query costs a client, apart from what the client costs.
            sb_ycsb = [sysbench, os.path.join(ROOT, "bench", "sysbench", "ycsb_point_select.lua"),
                       "--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={db.port}",
                       "--mysql-user=root", "--mysql-db=bench"] if sysbench and load else None
            if sb:
                self.attempt("sysbench prepare", measured, sb + ["prepare"])
            else:
                note("sysbench is not installed (apt-get install sysbench); MariaDB runs without it")
            go_props = {"mysql.host": "127.0.0.1", "mysql.port": str(db.port), "mysql.user": "root",
                        "mysql.db": "bench", "table": "usertable_goycsb", "recordcount": str(rows),
                        "fieldcount": "1", "fieldlength": "120", "threadcount": str(conns)}
            n_notes = len(NOTES)
            if self.go_ycsb:
                self.attempt("go-ycsb load mysql", self.goycsb, "load", "mysql", "mysql", "c", 16,
                             dict(go_props, dropdata="true"))
            go_ok = self.go_ycsb and len(NOTES) == n_notes
            run = base + ["run", "--db", db.url] + shape + [
                "-threads", str(conns), "-p", "operationcount=0", "-p", f"maxexecutiontime={secs}",
                "--no-progress", "--no-store", "--format", "json"]
            for round_ in (1, 2):
                if load:
                    self.keep(self.attempt(f"sojourn mysql round {round_}", self.sojourn_mysql, run, round_))
                if sb:
                    self.keep(self.attempt(f"sysbench round {round_}", self.sysbench, sb, conns, secs, round_))
                if sb_ycsb:
                    self.keep(self.attempt(f"sysbench YCSB's query round {round_}", self.sysbench, sb_ycsb, conns,
                                           secs, round_, SYSBENCH_YCSB))
                if go_ok:
                    # Its maxexecutiontime does not stop the mysql binding:
                    # a count of about the seconds asked for at its rate.
                    r = self.attempt(f"go-ycsb mysql round {round_}", self.goycsb, "run", "mysql", "mysql", "c",
                                     conns, dict(go_props, operationcount=str(secs * 30_000)))
                    if r:
                        r["round"] = round_
                    self.keep(r)
            for r in self.results:
                if r["db"] == "mysql" and r.get("round") == 1:
                    sb_run = [f"--threads={conns}", f"--time={secs}", "run"]
                    cmd = {"sojourn": run, "sysbench": (sb or []) + sb_run,
                           SYSBENCH_YCSB: (sb_ycsb or []) + sb_run}.get(r["tool"])
                    if cmd:
                        self.count_events(r, cmd)
        finally:
            db.stop()

    def sojourn_mysql(self, cmd, round_):
        out, _, wall, user, sys_ = measured(cmd, timeout=self.limit + 60)
        r = json.loads(out)
        read = (r["ops"].get("read") or {}).get("service") or {}
        return result("sojourn", "mysql", "C", self.MYSQL_CONNS, r["operations"], r["achieved_ops_per_sec"], wall,
                      user, sys_, read.get("p50_us"), read.get("p99_us"), {"round": round_})

    def sysbench(self, sb, conns, secs, round_, tool="sysbench"):
        out, _, wall, user, sys_ = measured(sb + [f"--threads={conns}", f"--time={secs}", "--histogram=off",
                                                  "--percentile=99", "run"], timeout=self.limit + 60)
        events = int(re.search(r"total number of events:\s+(\d+)", out).group(1))
        rate = float(re.search(r"queries:\s+\d+\s+\(([\d.]+) per sec", out).group(1))
        p99 = re.search(r"99th percentile:\s+([\d.]+)", out)
        return result(tool, "mysql", "C", conns, events, rate, wall, user, sys_, None,
                      float(p99.group(1)) * 1000 if p99 else None, {"round": round_})

    def count_events(self, r, cmd, env=None):
        """The context switches and syscalls per operation of the run `r`,
        from one more run of `cmd` under `perf stat` (kept apart: counting
        syscalls costs the process). Said once when perf is missing."""
        if not r:
            return
        if not shutil.which("perf"):
            if not self.said_no_perf:
                note("perf is not installed: no context switches or syscalls per operation")
                self.said_no_perf = True
            return
        self.attempt(f"perf stat {r['tool']} {r['db']}", self.perf_counts, r, cmd, env)

    def perf_counts(self, r, cmd, env):
        out, counts = self.perf_events(cmd, env)
        if r["tool"] == "sojourn":
            ops = json.loads(out)["operations"]
        elif r["tool"] in ("sysbench", SYSBENCH_YCSB):
            ops = int(re.search(r"total number of events:\s+(\d+)", out).group(1))
        else:
            ops = r["operations"]  # a tool given a count of requests makes them all
        if ops and "context-switches" in counts:
            r["cs_per_op"] = counts["context-switches"] / ops
        if ops and "raw_syscalls:sys_enter" in counts:
            r["syscalls_per_op"] = counts["raw_syscalls:sys_enter"] / ops

    def cassandra(self):
        if not shutil.which("latte"):
            note("latte is not installed (cargo install latte-cli); Cassandra runs without it")
        tmp = tempfile.mkdtemp(prefix="cassandra-", dir=self.tmp)
        node = Cassandra(tmp)
        try:
            url = f"cassandra://{node.host}/ycsb"
            if not self.attempt("sojourn load cassandra", self.sojourn, "load", url, "r", 16):
                return
            # go-ycsb's binding wants its keyspace made, and makes its own
            # table (key column YCSB_KEY) in it.
            go_props = {"cassandra.cluster": node.host, "cassandra.keyspace": "goycsb",
                        "cassandra.connections": 1}
            n_notes = len(NOTES)
            if self.go_ycsb:
                self.attempt("sojourn makes go-ycsb's keyspace", self.sojourn, "load",
                             f"cassandra://{node.host}/goycsb", "r", 1, ["-p", "recordcount=1"])
                self.attempt("go-ycsb load cassandra", self.goycsb, "load", "cassandra", "cassandra", "r", 16,
                             dict(go_props, dropdata="true"))
            go_ok = self.go_ycsb and len(NOTES) == n_notes
            # The node's first runs of a statement are slower (its JIT, the
            # compactions after the load: 8k ops/s rising to 30k here). Each
            # job is run, not counted, until its rate stops rising by 5%,
            # so that no tool measures the node's warm-up.
            for w in ("r", "u"):
                best = 0.0
                for _ in range(5):
                    got = self.attempt(f"cassandra warm-up {w}", self.sojourn, "run", url, w, 16)
                    rate = got[0]["achieved_ops_per_sec"] if got else 0.0
                    if not got or rate < best * 1.05:
                        break
                    best = max(best, rate)
            for w in ("r", "u"):
                self.keep(self.attempt(f"sojourn cassandra {w}", self.sojourn_run, "cassandra", url, w, 16))
                if shutil.which("latte"):
                    self.keep(self.attempt(f"latte {w}", self.latte, node, w, 16))
                if go_ok:
                    self.keep(self.attempt(f"go-ycsb cassandra {w}", self.goycsb, "run", "cassandra",
                                           "cassandra", w, 16, go_props))
        finally:
            node.stop()

    def latte(self, node, w, concurrency):
        """latte on the rows sojourn loaded: one thread, one connection,
        `concurrency` requests in flight, as many operations as the others."""
        report = os.path.join(self.tmp, f"latte-{w}.json")
        fn = {"r": "read", "u": "update"}[w]
        cmd = ["latte", "run", os.path.join(ROOT, "bench", "latte", "ycsb.rn"), "-f", fn,
               "-d", str(self.a.ops), "-w", "1000", "-t", "1", "-p", str(concurrency), "-c", "1",
               "--consistency", "QUORUM", "-P", f"rows={self.a.records}", "-q", "-o", report, node.host]
        # latte writes a log file where it runs: there, not in the checkout.
        _, _, wall, user, sys_ = measured(cmd, cwd=self.tmp, timeout=self.limit + 60)
        with open(report) as f:
            r = json.load(f)["result"]
        errors = r.get("error_count") or 0
        if errors:
            raise Failed(f"latte {fn}: {errors} errors")
        ops = r["request_count"]
        rate = r["req_throughput"]["value"]
        # latte's percentiles, in its order: min, 1, 2, 5, 10, 25, 50, 75,
        # 90, 95, 98, 99, 99.9, 99.99, max; in milliseconds.
        pct = [p["value"] for p in r["request_latency"]["percentiles"]]
        p50, p99 = pct[6], pct[11]
        return result("latte", "cassandra", {"r": "R", "u": "U"}[w], concurrency, ops, rate, wall, user, sys_,
                      p50 * 1000 if p50 else None, p99 * 1000 if p99 else None)

    def null(self):
        for conns in (16, 1):
            self.keep(self.attempt(f"sojourn null {conns}", self.sojourn_run, "null", "null:", "a", conns))
            if "core" in self.ycsb_cp:
                self.keep(self.attempt(f"YCSB BasicDB {conns}", self.ycsb, "run", self.ycsb_cp["core"],
                                       "site.ycsb.BasicDB", "null", "a", conns, {"basicdb.verbose": "false"}))
            if self.go_ycsb:
                self.keep(self.attempt(f"go-ycsb basic {conns}", self.goycsb, "run", "basic", "null", "a", conns,
                                       {"verbose": "false"}))


# --- output ---------------------------------------------------------------

# CPU time the host may take from the machine during a 10 s open-loop run
# before the run is set aside: at 500k ops/s the lag p99 (50 us) gives way
# once about 100 ms of arrivals are held up, and in runs of this script on a
# two-CPU virtual machine 40 ms of steal or less always passed while 110 ms or more
# failed, the client's CPU per operation unchanged.
STEAL_MS = 50
# Pairs of runs per round where sojourn faces a C tool (see `Runner.mux_job`
# and `Runner.beside_c_tool`).
PAIRS = 3


def in_turn(pair, ours, theirs):
    """sojourn's run and its peer's, as (ours, theirs): the peer first in
    odd pairs, sojourn first in even ones, so that a drift across a round
    weighs on both alike."""
    if pair % 2:
        t = theirs()
        return ours(), t
    o = ours()
    return o, theirs()


def failed_check(row):
    """Whether an open-loop run failed its self-check (see
    `Runner.checked_open_loop`)."""
    return row["check"] != "passed"


def off_pace(row):
    """Whether a pacing run missed what its verdicts ask: the self-check, or
    a scheduling lag p99 under 50 us (see `Runner.checked_open_loop`)."""
    return failed_check(row) or not row["lag p99 us"] < 50


def set_aside(stolen):
    """A row's mark when the host stole more than STEAL_MS (see
    `Runner.undisturbed`)."""
    return "yes" if stolen and stolen > STEAL_MS else None


def kept_rows(rows, job, why, show):
    """The rows of `rows` not set aside, and whether a job (by `job(row)`)
    has none left, which leaves a verdict open; says which were set aside,
    each as `show(row)`."""
    aside = [r for r in rows if r.get("set aside")]
    kept = [r for r in rows if not r.get("set aside")]
    if aside:
        print(f"(set aside from the verdicts below, the host having stolen more than {STEAL_MS} ms of CPU {why}: "
              + ", ".join(map(show, aside)) + ")")
    return kept, bool({job(r) for r in aside} - {job(r) for r in kept})


def redis_cpu(port):
    """The Redis server's CPU time so far (user + system, seconds, from INFO)
    and the commands it has processed, or None without redis-cli: over a
    run, the server's CPU per command, which shows whether a client's
    throughput is the server's (one thread at a core's worth of CPU) and
    whether the client asked more of it per operation."""
    if not shutil.which("redis-cli"):
        return None
    try:
        out = subprocess.run(["redis-cli", "-p", str(port), "info"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    v = dict(line.strip().split(":", 1) for line in out.splitlines() if ":" in line)
    try:
        return float(v["used_cpu_user"]) + float(v["used_cpu_sys"]), int(v["total_commands_processed"])
    except (KeyError, ValueError):
        return None


def steal_ms():
    """CPU time the host has taken from this machine's CPUs so far (the
    steal column of /proc/stat), in milliseconds; None where not Linux."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) * 1000 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def fmt(v):
    if isinstance(v, float):
        if abs(v) < 1:
            return f"{v:.3f}"
        return f"{v:.2f}" if abs(v) < 100 else f"{v:.0f}"
    return "-" if v is None else str(v)


def own_tables(tables):
    for title, rows in tables.items():
        print(f"\n## {title}")
        cols = list(dict.fromkeys(k for r in rows for k in r))
        widths = [max(len(c), *(len(fmt(r.get(c))) for r in rows)) for c in cols]
        print("  ".join(f"{c:>{w}}" for c, w in zip(cols, widths)))
        for r in rows:
            print("  ".join(f"{fmt(r.get(c)):>{w}}" for c, w in zip(cols, widths)))


def own_verdicts(tables, results):
    """The issues' targets on sojourn's own figures, and those of the
    scripts job (see scripts.py)."""
    out = []

    def say(label, ok, detail):
        status = "not measured" if ok is None else ("met" if ok else "not met")
        print(f"{label:60} {status:13} {detail}")
        out.append({"target": label, "status": status, "detail": detail})

    pacing = next((rows for t, rows in tables.items() if t.startswith("null: open loop")), [])
    if pacing:
        say("null: open loop, client CPU <= 1.5 us/op from 100k to 2M ops/s",
            all(r["cpu us/op"] <= 1.5 for r in pacing),
            ", ".join(f"{r['target'] // 1000}k: {r['cpu us/op']:.2f}" for r in pacing))
        upto, unmeasured = kept_rows(
            [r for r in pacing if r["target"] <= 1_000_000], lambda r: (r.get("round"), r["target"]),
            "during the run", lambda r: f"round {r.get('round')} {r['target'] // 1000}k ({r['steal ms']:.0f} ms, "
            f"lag p99 {r['lag p99 us']:.0f} us, {r['check']})")

        def all_of(rows, ok):
            return False if not all(ok(r) for r in rows) else (None if unmeasured else True)

        say("null: self-check passes up to 1M ops/s", all_of(upto, lambda r: r["check"] == "passed"),
            ", ".join(f"{r['target'] // 1000}k: {r['check']}" for r in upto))
        say("null: scheduling lag p99 < 50 us up to 1M ops/s", all_of(upto, lambda r: r["lag p99 us"] < 50),
            ", ".join(f"{r['target'] // 1000}k: {r['lag p99 us']:.1f} us" for r in upto))
        counted = [r for r in upto if r.get("cs/op") is not None]
        say("null: <= 0.2 context switches/op with lag p99 <= 50 us at 100k, 500k, 1M",
            all_of(counted, lambda r: r["cs/op"] <= 0.2 and r["lag p99 us"] <= 50) if counted else None,
            ", ".join(f"{r['target'] // 1000}k: {r['cs/op']:.3f} cs/op, {r['lag p99 us']:.1f} us"
                      + (f" ({r['steal ms']:.0f} ms stolen)" if r.get("steal ms") else "")
                      for r in counted) or "perf not installed")
    check = next((rows for t, rows in tables.items() if t.startswith("Redis open loop")), [])
    if check:
        check, unmeasured = kept_rows(check, lambda r: r["target"], "during the run",
                                      lambda r: f"{r['target'] // 1000}k ({r['steal ms']:.0f} ms, {r['check']})")
        ok = all(r["check"] == "passed" for r in check)
        say("Redis: self-check passes at 10k, 40k, 80k ops/s", None if ok and unmeasured else ok,
            ", ".join(f"{r['target'] // 1000}k: {r['check']} ({fmt(r['dispersion'])})" for r in check))
    sqlite = next((rows for t, rows in tables.items() if t.startswith("SQLite")), [])
    at20 = [r for r in sqlite if r["target"] == 20_000 and r["response - service p99 us"] is not None]
    if at20:
        say("SQLite A at 20k ops/s: read response - service p99 < 1 ms",
            at20[0]["response - service p99 us"] < 1000, f"{at20[0]['response - service p99 us']:.0f} us")
    mux = next((rows for t, rows in tables.items() if t.startswith("Redis workload C, multiplexed")), [])
    for workers, conns, depth, cpu_bound in ((16, 2, 8, 1.0), (64, 4, 16, 1.2)):
        rows = [r for r in mux if r["tool"].startswith(f"sojourn -threads {workers} ")]
        if not rows:
            continue
        rows, unmeasured = kept_rows(
            rows, lambda r: r["round"], "during sojourn's or redis-benchmark HGETALL's run",
            lambda r: f"round {r['round']} pair {r.get('pair')} (CPU {fmt(r.get('cpu vs HGETALL'))}x, ops/s "
            f"{fmt(r.get('ops/s vs HGETALL'))}x vs HGETALL)")
        # The verdict is taken against redis-benchmark making YCSB's own
        # read, an HGETALL of a one-field hash over as many keys: both
        # clients then ask the server for the same work. Its GET of one
        # string key costs the server half as much, and the server (one
        # thread) is what bounds the throughput of both clients, so beside
        # GET the throughput measures the command, not the client: a
        # reported figure.
        for peer, label in (("HGETALL", f"redis-benchmark HGETALL -c {conns} -P {depth}"),
                            ("GET", f"(reported) redis-benchmark GET -c {conns} -P {depth}")):
            cpu, ops = f"cpu vs {peer}", f"ops/s vs {peer}"
            # Each round's median pair (see `Runner.mux_job`), by each ratio.
            rounds = {}
            for r in rows:
                if r.get(cpu) is not None:
                    rounds.setdefault(r["round"], []).append(r)
            got = {n: (statistics.median(r[cpu] for r in rs), statistics.median(r[ops] for r in rs), rs)
                   for n, rs in sorted(rounds.items())}
            ok = all(c <= cpu_bound and o >= 1.0 for c, o, _ in got.values()) if got else None
            say(f"Redis -threads {workers} over {conns}: CPU/op <= {cpu_bound}x, ops/s >= 1.0x {label} "
                "(each round's median pair)", None if ok and unmeasured else ok,
                ", ".join(f"#{n}: CPU {c:.2f}x ({', '.join(f'{r[cpu]:.2f}' for r in rs)}), ops/s {o:.2f}x "
                          f"({', '.join(f'{r[ops]:.2f}' for r in rs)})" for n, (c, o, rs) in got.items())
                or f"redis-benchmark {peer} did not run")
    scripts.verdicts(results, tables, say)
    tpcc.verdicts(results, say)
    commands.verdicts(results, say)
    return out


SYSBENCH_YCSB = "sysbench-ycsb"  # sysbench running bench/sysbench/ycsb_point_select.lua


def same_job(s, r):
    """The sojourn row a peer row is compared with (of the same round, where
    a job runs in rounds)."""
    if s.get("round") != r.get("round") and not (r.get("round") is None and s.get("round") == 1):
        return False
    if r["tool"] in ("redis-benchmark", "pgbench", "sysbench") and r["db"] in ("redis", "postgres", "mysql"):
        return s["db"] == r["db"] and s["workload"] == "C" and s["conns"] == r["conns"]
    return s["db"] == r["db"] and s["workload"] == r["workload"] and s["conns"] == r["conns"]


def add_ratios(results):
    soj = [r for r in results if r["tool"] == "sojourn"]
    for r in results:
        if r["tool"] == "sojourn":
            continue
        base = next((s for s in soj if same_job(s, r)), None)
        if base:
            r["sojourn_over_peer_cpu"] = base["cpu_us_per_op"] / r["cpu_us_per_op"] if r["cpu_us_per_op"] else None
            r["sojourn_over_peer_ops_per_sec"] = base["ops_per_sec"] / r["ops_per_sec"] if r["ops_per_sec"] else None


def table(results, db, title):
    rows = [r for r in results if r["db"] == db]
    if not rows:
        return
    print(f"\n## {title}")
    print(f"{'tool':17} {'wl':>3} {'conns':>5} {'ops/s':>9} {'cpu us/op':>9} {'user':>6} {'sys':>6} "
          f"{'p50 us':>7} {'p99 us':>7} {'cpu s/p':>7} {'ops/s s/p':>9} {'cs/op':>6} {'sysc/op':>7}")
    order = {"A": 0, "C": 1, "GET": 2, "-S": 2, "R": 0, "U": 1, "P1": -2, "P8": -1}
    rows.sort(key=lambda r: (order.get(r["workload"], 3), -r["conns"], r["tool"] != "sojourn", r["tool"]))
    for r in rows:
        def num(k, w, d):
            v = r.get(k)
            return f"{v:>{w}.{d}f}" if isinstance(v, (int, float)) else f"{'-':>{w}}"
        cr, tr = r.get("sojourn_over_peer_cpu"), r.get("sojourn_over_peer_ops_per_sec")
        name = r["tool"] + (f" #{r['round']}" if "round" in r else "")
        print(f"{name:17} {r['workload']:>3} {r['conns']:>5} {r['ops_per_sec']:>9.0f} "
              f"{r['cpu_us_per_op']:>9.2f} {r['user_us_per_op']:>6.2f} {r['sys_us_per_op']:>6.2f} "
              f"{num('read_p50_us', 7, 0)} {num('read_p99_us', 7, 0)} "
              f"{(f'{cr:6.2f}x' if cr else ''):>7} {(f'{tr:8.2f}x' if tr else ''):>9} "
              f"{num('cs_per_op', 6, 2)} {num('syscalls_per_op', 7, 2)}")


def verdicts(results, jobs):
    """One line per target of the issue: met / not met / not measured."""
    targets = [
        ("redis", "go-ycsb", "cpu", 0.75, "Redis: client CPU/op <= 0.75x go-ycsb's"),
        ("redis", "YCSB", "cpu", 0.55, "Redis: client CPU/op <= 0.55x YCSB's"),
        ("postgres", "go-ycsb", "cpu", 0.70, "PostgreSQL: client CPU/op <= 0.7x go-ycsb's"),
        ("redis", "go-ycsb", "ops", 1.10, "Redis: throughput >= 1.1x go-ycsb's"),
        ("postgres", "go-ycsb", "ops", 1.10, "PostgreSQL: throughput >= 1.1x go-ycsb's"),
        ("null", "YCSB", "cpu", 0.50, "null: client CPU/op <= 0.5x YCSB BasicDB's"),
        ("null", "go-ycsb", "cpu", 0.50, "null: client CPU/op <= 0.5x go-ycsb basic's"),
        ("cassandra", "latte", "cpu", 1.0, "Cassandra: client CPU/op <= latte's"),
        ("cassandra", "go-ycsb", "cpu", 0.5, "Cassandra: client CPU/op <= 0.5x go-ycsb's"),
        # The C tools, at 16 connections (against sojourn's workload C).
        ("redis", "redis-benchmark", "cpu", 0.8, "Redis C/16: client CPU/op <= 0.8x redis-benchmark's"),
        ("postgres", "pgbench", "cpu", 1.0, "PostgreSQL C/16: client CPU/op <= pgbench's"),
        ("mysql", "sysbench", "cpu", 1.0, "MariaDB C/16: client CPU/op <= sysbench point select's"),
        ("mysql", "go-ycsb", "cpu", 1.0, "MariaDB C/16: client CPU/op <= go-ycsb mysql's (reported)"),
        ("mysql", SYSBENCH_YCSB, "cpu", 1.0, "MariaDB C/16: <= sysbench on YCSB's query (reported)"),
    ]
    c_tools = ("redis-benchmark", "pgbench", "sysbench", SYSBENCH_YCSB)
    out = []
    print("\n## targets (one request in flight per connection)")
    for db, peer, kind, bound, label in targets:
        if db not in jobs:
            continue
        key = "sojourn_over_peer_cpu" if kind == "cpu" else "sojourn_over_peer_ops_per_sec"
        rows = [r for r in results if r["db"] == db and r["tool"] == peer and r.get(key)
                and (peer not in c_tools or r["conns"] == 16)]
        if not rows:
            status, detail = "not measured", f"no {peer} figures on {db}"
            ref = REFERENCE.get((db, peer))
            soj = next((r for r in results if r["db"] == db and r["tool"] == "sojourn" and r["workload"] == "C"
                        and r["conns"] == 16), None)
            if kind == "cpu" and ref and soj:
                detail += (f"; sojourn C/16 {soj['cpu_us_per_op']:.2f} us against the issue's reference "
                           f"{ref} us (not this machine's run): {soj['cpu_us_per_op'] / ref:.2f}x")
        else:
            ok = [(r[key] <= bound) if kind == "cpu" else (r[key] >= bound) for r in rows]
            status = "met" if all(ok) else ("not met" if not any(ok) else "partly met")
            detail = ", ".join(f"{r['workload']}/{r['conns']}" + (f" #{r['round']}" if "round" in r else "")
                               + f": {r[key]:.2f}x" for r in rows)
        print(f"{label:48} {status:13} {detail}")
        out.append({"target": label, "status": status, "detail": detail})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=500_000, help="operations per run (default 500000)")
    ap.add_argument("--records", type=int, default=100_000, help="records loaded (default 100000)")
    ap.add_argument("--only", choices=["redis", "postgres", "mysql", "cassandra", "null", "pacing", "sqlite", "scripts", "tpcc",
                                           "commands"],
                    action="append",
                    help="run only this job (repeatable)")
    ap.add_argument("--no-pin", action="store_true", help="leave servers and clients unpinned")
    ap.add_argument("--server-session", choices=["shared", "own"], default="shared",
                    help="start each server in this script's session (default) or in one of its own")
    ap.add_argument("--json", metavar="FILE", help="also save every figure to FILE")
    ap.add_argument("--cache", default=os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                    os.path.expanduser("~/.cache"), "sojourn-peers"),
                    help="where the downloaded tools are kept (default ~/.cache/sojourn-peers)")
    ap.add_argument("--time-limit", type=int, default=600,
                    help="seconds any one run may take (maxexecutiontime; the process is killed a minute later)")
    ap.add_argument("--sojourn", metavar="BIN", help="this sojourn binary instead of building target/release/sojourn")
    ap.add_argument("--memtier", metavar="BIN", help="this memtier_benchmark for the commands job instead of the "
                    "cache's (built there from its release tag when missing)")
    a = ap.parse_args()
    if a.sojourn:
        a.sojourn = os.path.abspath(a.sojourn)  # the clients run from the repository's root
    if a.memtier:
        a.memtier = os.path.abspath(a.memtier)
    jobs = a.only or ["redis", "postgres", "mysql", "cassandra", "null", "pacing", "sqlite", "scripts", "tpcc",
                      "commands"]
    started = time.time()
    pinning = "not pinned (--no-pin)" if a.no_pin else pin_apart()
    if a.server_session == "own":
        pinning += "; " + servers_apart()

    if "redis" in jobs or "commands" in jobs:
        apt_install("redis-benchmark", "redis-tools")
    if "postgres" in jobs or "scripts" in jobs:
        apt_install("pgbench", "postgresql-client")
    if "mysql" in jobs or "tpcc" in jobs:
        apt_install("sysbench", "sysbench")
    # sojourn's own jobs need no peer installed.
    peers = any(j in jobs for j in ("redis", "postgres", "mysql", "cassandra", "null"))
    go_ycsb = install_go_ycsb(a.cache) if peers else None
    ycsb_cp = install_ycsb(a.cache) if peers else {}
    if not a.sojourn:
        build()

    tmp = tempfile.mkdtemp(prefix="sojourn-bench-peers-")
    if os.geteuid() == 0:
        os.chmod(tmp, 0o755)  # PostgreSQL's data directory below it belongs to `postgres`
    try:
        files = workload_files(tmp, a.records, a.ops)
        runner = Runner(a, tmp, files, go_ycsb, ycsb_cp)
        load_before = os.getloadavg()
        for job in ("redis", "postgres", "mysql", "cassandra", "null", "pacing", "sqlite", "scripts", "tpcc",
                    "commands"):
            if job in jobs:
                getattr(runner, job)()
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    results = runner.results
    add_ratios(results)
    print(f"# sojourn vs peers: {a.records} records of 1 field of 100 B, {a.ops} operations per run, zipfian; "
          f"{os.cpu_count()} cores; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
          f"({(time.time() - started) / 60:.1f} min); {pinning}")
    print(f"# go-ycsb: {go_ycsb_version(a.cache) if go_ycsb else 'not installed'}; YCSB 0.17.0 bindings: "
          f"{', '.join(sorted(k for k in ycsb_cp)) or 'none'}")
    if getattr(runner, "memtier_version", None):
        print(f"# {runner.memtier_version}")
    table(results, "redis", "Redis (redis-benchmark: GET of one 100-byte string, next to workload C)")
    table(results, "postgres", "PostgreSQL (pgbench: -S -M prepared -j 1 on its own table, next to workload C)")
    table(results, "mysql", "MariaDB (C/16, 20,000 rows, one 120-byte field, 10 s closed loop, two rounds; "
          "sysbench oltp_point_select on its own table, sysbench-ycsb: sysbench running YCSB's query on "
          "sojourn's table, go-ycsb mysql on its own)")
    table(results, "cassandra", "Cassandra 5.0 (R: point reads, U: point updates, uniform; latte on the same rows, "
          "go-ycsb on its own table)")
    table(results, "scripts", "pgbench's builtins: sojourn -b NAME beside pgbench -M prepared -c 16 -j 1 -n, "
          "one set of pgbench's tables (scale 1), the median of three pairs")
    table(results, "tpcc-mariadb", "TPC-C on MariaDB (2 warehouses, 10 connections, 20 s closed loop; ops = "
          "New-Orders, ops/s = tpmC / 60; round 1 beside go-tpc on its tables, round 2 beside sysbench-tpcc on "
          "its own), the median of three pairs")
    table(results, "tpcc-postgres", "TPC-C on PostgreSQL (as on MariaDB, beside sysbench-tpcc on its own tables)")
    table(results, "commands-redis", "Command lines through sojourn on Redis (P1, P8: memtier -t 1 -c 16 --ratio "
          "1:10 -d 32 --key-maximum 100000 --distinct-client-seed --pipeline 1 and 8, by memtier_benchmark and by "
          "sojourn memtier; GET: redis-benchmark -t get -c 16 -d 3 -r 100000 by itself and by sojourn "
          "redis-benchmark), the median of three pairs")
    table(results, "commands-memcached", "The same memtier lines with -P memcache_text on memcached (half the "
          "requests; reported)")
    table(results, "null", "null backend: client overhead (sojourn null:, YCSB BasicDB, go-ycsb basic; workload A)")
    own_tables(runner.tables)
    target_lines = verdicts(results, jobs)
    target_lines += own_verdicts(runner.tables, results)
    print("\n# notes:")
    print("#  - cpu us/op = the kernel's rusage of the whole client process (user + system) / operations: process")
    print("#    start included, and for YCSB the JVM's start, JIT compilation and GC; p50/p99 are of reads, as each")
    print("#    tool reports them; ops/s as each tool reports it; s/p = sojourn / peer at the same workload and")
    print("#    connections (pgbench and redis-benchmark: against sojourn's workload C).")
    if any(r["db"].startswith("commands") for r in results):
        print("#  - commands: s/p = sojourn running the peer's own command line / the peer; p50/p99 of GETs;")
        print("#    sojourn's CPU includes writing its run to its results store.")
    for n in NOTES:
        print(f"#  - {n}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"records": a.records, "operations": a.ops, "cores": os.cpu_count(),
                       "load_average_before": load_before, "load_average_after": load_after,
                       "go_ycsb": go_ycsb_version(a.cache) if go_ycsb else None,
                       "ycsb_bindings": sorted(ycsb_cp), "results": results, "own": runner.tables,
                       "pinning": pinning, "targets": target_lines,
                       "notes": NOTES}, f, indent=2)


if __name__ == "__main__":
    main()
