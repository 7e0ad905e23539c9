"""peers.py's `commands` job: memtier_benchmark's and redis-benchmark's own
command lines, each run by the tool itself and through sojourn (`sojourn
memtier ...`, `sojourn redis-benchmark ...`: the same arguments, read as
the tool reads them and run as the commands workload), on one private
Redis (and one private memcached, when installed).

- memtier_benchmark 2.1.4 (RedisLabs/memtier_benchmark, built from its
  release tag with autotools and Debian's libevent-dev, libssl-dev,
  libpcre3-dev and zlib1g-dev into the cache, `--cache`/memtier; or the
  binary `--memtier` names): the line

      -s 127.0.0.1 -p PORT -t 1 -c 16 --ratio 1:10 -n N --key-maximum 100000
      -d 32 --pipeline P --distinct-client-seed --hide-histogram
      --json-out-file F

  at pipeline 1 and 8 (N: --ops / 16 requests per connection at pipeline
  1, three times as many at 8), by memtier_benchmark and by `sojourn
  memtier`, PAIRS pairs in alternating order; operations and ops/s are
  each one's JSON (["ALL STATS"]["Totals"] "Count" and "Ops/sec"), p50
  and p99 its GETs'. The keys are written once first (`--ratio 1:0
  --key-pattern P:P -n allkeys`), so that both tools' GETs hit alike.
  `--distinct-client-seed`: without it memtier's clients all draw one
  sequence of keys (16 clients, one sixteenth of the keys touched, each
  at once by all), and `sojourn memtier` follows memtier there; the
  server's CPU per request differs by up to half between the two ways, so
  the job gives each connection a sequence of its own in both tools.
  memcached: the same line with `-P memcache_text`, half as many
  requests (reported, no verdict).
- redis-benchmark (Debian's redis-tools): `-h 127.0.0.1 -p PORT -t get -c
  16 -n N -d 3 -r 100000 --csv` (N: --ops) by redis-benchmark and by
  `sojourn redis-benchmark`, PAIRS pairs in alternating order, after
  `-t set` has written the keys it reads.

sojourn keeps each run in its results store, as it does by default: in a
temporary directory (SOJOURN_DATA_DIR), its writes part of its CPU.

Each row: the client's CPU per operation, the kernel's rusage of its whole
process (user + system, process start included) over the operations it
reports, its throughput, and the server's CPU per operation and its share
of one CPU over the run (from Redis's INFO, memcached's stats). The table
keeps each job's median pair by the CPU ratio and a note gives every
pair's. Where the server used SERVER_BOUND of a CPU or more during the
peer's run, the server was the limit, and the throughput verdict is not
taken (both clients meet the same ceiling).

Used by peers.py (`--only commands`); not run alone.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from common import BIN, Failed, free_port, measured, pin_server, redis_server, start, stop

MEMTIER_TAG = "2.1.4"
MEMTIER_GIT = "https://github.com/RedisLabs/memtier_benchmark"
MEMTIER_DEPS = ["git", "autoconf", "automake", "make", "g++", "pkg-config", "libevent-dev", "libssl-dev",
                "libpcre3-dev", "zlib1g-dev"]
CLIENTS = 16
PAIRS = 3
PIPELINES = (1, 8)
KEYS = 100_000
DATA = 32
# The server's CPU share during the peer's run at and above which the
# server is taken to be the limit of both runs' throughput.
SERVER_BOUND = 0.9


def memtier(runner, note):
    """memtier_benchmark: `--memtier`, else the cache's, else on PATH, else
    built from MEMTIER_TAG into the cache; None (with a note) if none."""
    given = getattr(runner.a, "memtier", None)
    if given:
        if os.access(given, os.X_OK):
            return given
        note(f"commands: --memtier {given} is not an executable; memtier_benchmark left out")
        return None
    exe = os.path.join(runner.a.cache, "memtier", "memtier_benchmark")
    if os.access(exe, os.X_OK):
        return exe
    if shutil.which("memtier_benchmark"):
        return shutil.which("memtier_benchmark")
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends"] + MEMTIER_DEPS,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=900)
    if not shutil.which("git"):
        note("commands: git is not installed, so memtier_benchmark could not be built; left out")
        return None
    print(f"# building memtier_benchmark {MEMTIER_TAG} from {MEMTIER_GIT} ...", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="memtier-") as tmp:
        src = os.path.join(tmp, "src")
        for step in (["git", "clone", "-q", "--depth", "1", "--branch", MEMTIER_TAG, MEMTIER_GIT, src],
                     ["autoreconf", "-ivf"], ["./configure"], ["make", "-j2"]):
            try:
                r = subprocess.run(step, cwd=tmp if step[0] == "git" else src, capture_output=True, text=True,
                                   timeout=1800)
            except (OSError, subprocess.SubprocessError) as e:
                r = subprocess.CompletedProcess(step, 1, "", str(e))
            if r.returncode != 0:
                tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
                note(f"commands: memtier_benchmark {MEMTIER_TAG} did not build ({' '.join(step[:2])}: {tail[0]}; "
                     f"it needs Debian's {' '.join(MEMTIER_DEPS)}); left out")
                return None
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        shutil.copy2(os.path.join(src, "memtier_benchmark"), exe)
    with open(os.path.join(os.path.dirname(exe), "VERSION"), "w") as f:
        f.write(MEMTIER_TAG + "\n")
    return exe


def memtier_version(exe):
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout
        return out.splitlines()[0].strip()
    except (OSError, IndexError, subprocess.SubprocessError):
        return "memtier_benchmark"


def memtier_line(port, protocol, pipeline, per_client):
    """The memtier line both tools are given (less --json-out-file)."""
    line = ["-s", "127.0.0.1", "-p", str(port)]
    if protocol != "redis":
        line += ["-P", protocol]
    return line + ["-t", "1", "-c", str(CLIENTS), "--ratio", "1:10", "-n", str(per_client),
                   "--key-maximum", str(KEYS), "-d", str(DATA), "--pipeline", str(pipeline),
                   "--distinct-client-seed", "--hide-histogram"]


def memtier_fill(port, protocol):
    """Every key of the line's range written once, by P:P over the clients."""
    line = ["-s", "127.0.0.1", "-p", str(port)]
    if protocol != "redis":
        line += ["-P", protocol]
    return line + ["-t", "1", "-c", str(CLIENTS), "--ratio", "1:0", "--key-pattern", "P:P", "-n", "allkeys",
                   "--key-maximum", str(KEYS), "-d", str(DATA), "--pipeline", "16", "--hide-histogram"]


def memtier_figures(path):
    """(operations, ops/s, GET p50 us, GET p99 us) from memtier's JSON."""
    with open(path) as f:
        stats = json.load(f)["ALL STATS"]
    total, gets = stats["Totals"], stats.get("Gets") or {}
    # By the percentile's value: memtier names them "p50.00", sojourn "p50.000".
    pct = {}
    for k, v in (gets.get("Percentile Latencies") or {}).items():
        try:
            pct[float(k.lstrip("p"))] = v * 1000
        except (TypeError, ValueError):
            continue
    return int(total["Count"]), float(total["Ops/sec"]), pct.get(50.0), pct.get(99.0)


def redis_benchmark_line(port, n):
    return ["-h", "127.0.0.1", "-p", str(port), "-t", "get", "-c", str(CLIENTS), "-n", str(n), "-d", "3",
            "-r", str(KEYS), "--csv"]


def redis_benchmark_figures(out):
    """(rps, p50 us, p99 us) from a --csv row (the last one: the GET test's)."""
    rows = [l.replace('"', "").split(",") for l in out.strip().splitlines() if l.strip()]
    if len(rows) < 2:
        raise Failed(f"no CSV row: {out[-300:]}")
    v = dict(zip(rows[0], rows[-1]))
    ms = lambda k: float(v[k]) * 1000 if v.get(k) else None
    return float(v["rps"]), ms("p50_latency_ms"), ms("p99_latency_ms")


def memcached_cpu(port):
    """memcached's CPU time so far (seconds) and the commands it has served,
    from its `stats`, or None."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"stats\r\n")
            data = b""
            while not data.endswith(b"END\r\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    v = dict(l.split()[1:3] for l in data.decode().splitlines() if l.startswith("STAT ") and len(l.split()) >= 3)
    try:
        return (float(v["rusage_user"]) + float(v["rusage_system"]),
                int(v["cmd_get"]) + int(v["cmd_set"]))
    except (KeyError, ValueError):
        return None


class Job:
    def __init__(self, runner, result, in_turn, note, server_cpu):
        self.runner, self.result, self.in_turn, self.note = runner, result, in_turn, note
        self.server_cpu = server_cpu
        self.limit = runner.limit + 60
        self.tmp = tempfile.mkdtemp(prefix="commands-", dir=runner.tmp)
        # sojourn's results store: its default, in a directory of its own.
        self.env = dict(os.environ, SOJOURN_DATA_DIR=os.path.join(self.tmp, "data"))
        self.sojourn = runner.a.sojourn or BIN

    def timed(self, tool, db, workload, port, cmd, figures, env=None):
        """One run of `cmd`: a row, with the server's CPU per operation and
        its share of a CPU over the run."""
        before = self.server_cpu(port)
        out, _, wall, user, sys_ = measured(cmd, env, timeout=self.limit)
        after = self.server_cpu(port)
        ops, rate, p50, p99 = figures(out)
        extra = {}
        if before and after and after[1] > before[1]:
            extra["server_us_per_op"] = (after[0] - before[0]) * 1e6 / (after[1] - before[1])
            # Over the run as the tool times it: memtier_benchmark's process
            # lingers up to a second past its run (its progress loop's
            # sleep), sojourn's writes the run to its store.
            secs = ops / rate if rate else wall
            extra["server_busy"] = (after[0] - before[0]) / secs if secs else None
        return self.result(tool, db, workload, CLIENTS, ops, rate, wall, user, sys_, p50, p99, extra)

    def pairs(self, title, ours, theirs, peer):
        """PAIRS pairs in alternating order; the median pair by the CPU
        ratio is kept (both rows), a note giving every pair's ratios."""
        done = []
        for pair in range(1, PAIRS + 1):
            done.append(self.in_turn(pair, lambda: self.runner.attempt(f"sojourn {title} pair {pair}", ours),
                                     lambda: self.runner.attempt(f"{peer} {title} pair {pair}", theirs)))
        both = [(s, p) for s, p in done if s and p]
        if not both:
            for s, _ in done[:1]:
                self.runner.keep(s)
            return
        cpu = lambda sp: sp[0]["cpu_us_per_op"] / sp[1]["cpu_us_per_op"]
        ops = lambda sp: sp[0]["ops_per_sec"] / sp[1]["ops_per_sec"]
        server = lambda r: (f"{r['server_us_per_op']:.2f}" if r.get("server_us_per_op") is not None else "-")
        busy = lambda r: f"{r['server_busy']:.0%}" if r.get("server_busy") is not None else "-"
        self.note(f"commands {title}: sojourn / {peer} by pair, in order: client CPU/op "
                  + ", ".join(f"{cpu(sp):.2f}x" for sp in both) + "; ops/s "
                  + ", ".join(f"{ops(sp):.2f}x" for sp in both) + "; the server's us/op and share of a CPU, sojourn/peer: "
                  + ", ".join(f"{server(s)}/{server(p)} ({busy(s)}/{busy(p)})" for s, p in both)
                  + "; the table keeps the median pair by CPU")
        s, p = sorted(both, key=cpu)[len(both) // 2]
        s["pairs_cpu"] = p["pairs_cpu"] = [round(cpu(sp), 3) for sp in both]
        s["pairs_ops"] = p["pairs_ops"] = [round(ops(sp), 3) for sp in both]
        self.runner.keep(s)
        self.runner.keep(p)

    def memtier_job(self, exe, db, port, protocol, per_client):
        """The memtier line at each pipeline depth, both ways."""
        def run(tool, cmd, pipeline, env=None):
            out = os.path.join(self.tmp, f"{tool}-{db}-{pipeline}.json")
            if os.path.exists(out):
                os.remove(out)
            return self.timed(tool, db, f"P{pipeline}", port, cmd + ["--json-out-file", out],
                              lambda _: memtier_figures(out), env)

        fill = memtier_fill(port, protocol)
        if exe:
            self.runner.attempt(f"memtier_benchmark fill {db}", measured, [exe] + fill, None, self.tmp, self.limit)
        else:
            self.runner.attempt(f"sojourn memtier fill {db}", measured, [self.sojourn, "memtier"] + fill, self.env,
                                self.tmp, self.limit)
        for pipeline in PIPELINES:
            n = per_client * (3 if pipeline > 1 else 1)
            line = memtier_line(port, protocol, pipeline, n)
            ours = lambda: run("sojourn", [self.sojourn, "memtier"] + line, pipeline, self.env)
            if not exe:
                self.runner.keep(self.runner.attempt(f"sojourn memtier {db} -P {pipeline}", ours))
                continue
            self.pairs(f"{db.split('-', 1)[1]} memtier -c {CLIENTS} -P {pipeline}", ours,
                       lambda: run("memtier_benchmark", [exe] + line, pipeline), "memtier_benchmark")

    def redis_benchmark_job(self, port, n):
        line = redis_benchmark_line(port, n)

        def figures(out):
            rate, p50, p99 = redis_benchmark_figures(out)
            return n, rate, p50, p99

        ours = lambda: self.timed("sojourn", "commands-redis", "GET", port,
                                  [self.sojourn, "redis-benchmark"] + line, figures, self.env)
        if not shutil.which("redis-benchmark"):
            self.note("commands: redis-benchmark is not installed (Debian's redis-tools); sojourn runs alone")
            self.runner.keep(self.runner.attempt("sojourn redis-benchmark", ours))
            return
        # The keys -t get reads, written once (else every GET is nil).
        self.runner.attempt("redis-benchmark -t set", measured, [
            "redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-t", "set", "-r", str(KEYS), "-n",
            str(KEYS * 3), "-d", "3", "-P", "16", "-q"])
        self.pairs(f"redis redis-benchmark -t get -c {CLIENTS}", ours,
                   lambda: self.timed("redis-benchmark", "commands-redis", "GET", port, ["redis-benchmark"] + line,
                                      figures), "redis-benchmark")


def run(runner, result, in_turn, note, redis_cpu):
    """The job: `result` makes a row as peers.py's, `in_turn` orders a
    pair, `note` says what did not run, `redis_cpu(port)` reads Redis's
    CPU and commands from its INFO."""
    exe = memtier(runner, note)
    if exe:
        runner.memtier_version = memtier_version(exe)
    per_client = max(runner.a.ops // CLIENTS, 1)
    job = Job(runner, result, in_turn, note, redis_cpu)
    server, port = redis_server(job.tmp)
    try:
        job.memtier_job(exe, "commands-redis", port, "redis", per_client)
        job.redis_benchmark_job(port, runner.a.ops)
    finally:
        stop(server)
    if not shutil.which("memcached"):
        note("commands: memcached is not installed; its table left out")
        return
    mport = free_port()
    cmd = ["memcached", "-l", "127.0.0.1", "-p", str(mport), "-U", "0", "-m", "256"]
    if os.geteuid() == 0:
        cmd += ["-u", "nobody"]
    mc = start(cmd, mport)
    pin_server(mc.pid)
    try:
        job.server_cpu = memcached_cpu
        job.memtier_job(exe, "commands-memcached", mport, "memcache_text", max(per_client // 2, 1))
    finally:
        stop(mc)


def verdicts(results, say):
    """The issue's targets for the commands job: `say(label, ok, detail)` each."""
    def pick(workload, peer):
        soj = [r for r in results if r["db"] == "commands-redis" and r["workload"] == workload
               and r["tool"] == "sojourn"]
        theirs = [r for r in results if r["db"] == "commands-redis" and r["workload"] == workload
                  and r["tool"] == peer and r.get("sojourn_over_peer_cpu")]
        return soj, theirs

    for pipeline in PIPELINES:
        soj, theirs = pick(f"P{pipeline}", "memtier_benchmark")
        if not soj:
            continue
        label = (f"memtier -c {CLIENTS} -P {pipeline}: client CPU/op <= 1.0x memtier_benchmark's (aim 0.8x) at "
                 ">= 1.0x its throughput")
        if not theirs:
            say(label, None, "memtier_benchmark did not run")
            continue
        r = theirs[0]
        cpu, ops = r["sojourn_over_peer_cpu"], r["sojourn_over_peer_ops_per_sec"]
        busy = r.get("server_busy")
        bound = busy is not None and busy >= SERVER_BOUND
        detail = (f"CPU {cpu:.3f}x ({', '.join(f'{x:.2f}' for x in r.get('pairs_cpu', []))}), ops/s {ops:.3f}x "
                  f"({', '.join(f'{x:.2f}' for x in r.get('pairs_ops', []))}) (median pair of {PAIRS} by CPU)")
        if busy is not None:
            detail += f"; the server busy {busy:.0%} of a CPU in memtier_benchmark's run"
            if bound:
                detail += ", its limit: throughput not judged"
        say(label, cpu <= 1.0 and (bound or ops >= 1.0), detail)
    soj, theirs = pick("GET", "redis-benchmark")
    if soj:
        label = f"redis-benchmark -t get -c {CLIENTS}: CPU/request <= 0.8x redis-benchmark's"
        if not theirs:
            say(label, None, "redis-benchmark did not run")
        else:
            r = theirs[0]
            cpu = r["sojourn_over_peer_cpu"]
            say(label, cpu <= 0.8, f"{cpu:.2f}x ({', '.join(f'{x:.2f}' for x in r.get('pairs_cpu', []))}; median "
                f"pair of {PAIRS}), ops/s {r['sojourn_over_peer_ops_per_sec']:.2f}x")
