"""Helpers shared by the bench/ scripts: building sojourn, private servers on
free loopback ports, running a client and reading its CPU from the kernel."""

import glob
import json
import os
import pwd
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "sojourn")


# CPUs the database servers and the clients are pinned to (see `pin_apart`);
# empty: not pinned.
SERVER_CPUS = set()
CLIENT_CPUS = set()

# Whether each database server starts in a session of its own (see
# `servers_apart`); by default it shares the bench script's.
SERVER_SESSION = {"own": False}


def servers_apart():
    """Start every server from now on in a session of its own, as a service
    manager would start it. Where the kernel groups tasks by session for CPU
    fairness (`/proc/sys/kernel/sched_autogroup_enabled`; systemd does the
    same by cgroup), the server and the clients then stop competing as one
    group, which changes how often a client is woken and so its CPU per
    operation. Returns a line saying so."""
    SERVER_SESSION["own"] = True
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            grouped = f.read().strip() == "1"
    except OSError:
        grouped = False
    how = "the kernel schedules each session as a group" if grouped else \
        "the kernel does not group sessions, so this changes nothing"
    return f"servers in sessions of their own ({how})"


def server_popen(cmd, **kw):
    """Popen for a database server: in a session of its own after
    `servers_apart`."""
    return subprocess.Popen(cmd, start_new_session=SERVER_SESSION["own"], **kw)


def pin_apart(server_cpus=1, client_cpus=8):
    """On a machine of at least server_cpus + 2 CPUs, put the servers on the
    first `server_cpus` CPUs this process may use and every client on the
    next `client_cpus` (or all the rest), so neither takes the other's
    cores and the figures mean the same on any many-core machine. Returns a
    line saying what was done."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < server_cpus + 2:
        return f"not pinned: {len(allowed)} CPUs (pinning needs {server_cpus + 2} or more)"
    SERVER_CPUS.update(allowed[:server_cpus])
    CLIENT_CPUS.update(allowed[server_cpus:server_cpus + client_cpus])
    return f"servers pinned to CPUs {cpu_list(SERVER_CPUS)}, clients to {cpu_list(CLIENT_CPUS)}"


def cpu_list(cpus):
    return ",".join(str(c) for c in sorted(cpus))


def pin_server(pid):
    """Pin a started server: every thread of it and of its child processes
    (PostgreSQL's backends, forked later, inherit it from the postmaster)."""
    if not SERVER_CPUS:
        return
    pids = {pid}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                pids.add(int(stat.split("/")[2]))
        except (OSError, IndexError, ValueError):
            continue
    for p in pids:
        for task in glob.glob(f"/proc/{p}/task/*"):
            try:
                os.sched_setaffinity(int(os.path.basename(task)), SERVER_CPUS)
            except OSError:
                pass


def client_cpus():
    """preexec_fn for a client: run on the client CPUs, if pinned."""
    if CLIENT_CPUS:
        os.sched_setaffinity(0, CLIENT_CPUS)


def build():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "sojourn"], cwd=ROOT, check=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd, port):
    """Start a server and wait (bounded) until its port accepts connections."""
    p = server_popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return p
        except OSError:
            if p.poll() is not None:
                sys.exit(f"{cmd[0]} exited with {p.returncode}")
            time.sleep(0.02)
    p.kill()
    sys.exit(f"{cmd[0]} did not listen on {port}")


def timed(cmd, env=None):
    """Run cmd and return its stdout; its CPU shows in RUSAGE_CHILDREN."""
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return out


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime, r.ru_stime


class Failed(Exception):
    """A client exited with an error or ran past its time limit."""


def measured(cmd, env=None, cwd=ROOT, timeout=900):
    """Run cmd to completion, at most `timeout` seconds (then it is killed).

    Returns (stdout, stderr, wall seconds, user CPU seconds, system CPU
    seconds): the CPU is the kernel's rusage of that one process and the
    threads and children it waited for (os.wait4), the figures
    `/usr/bin/time -f "%U %S"` prints."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.time()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                             preexec_fn=client_cpus)
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                p.kill()
                os.wait4(p.pid, 0)
                p.returncode = -9
                raise Failed(f"{os.path.basename(cmd[0])} ran past {timeout} s and was stopped")
            time.sleep(0.01)
        wall = time.time() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if p.returncode != 0:
        tail = "\n".join((stderr or stdout).strip().splitlines()[-15:])
        raise Failed(f"exit {p.returncode}: {' '.join(cmd)}\n{tail}")
    return stdout, stderr, wall, ru.ru_utime, ru.ru_stime


def sojourn(phase, db, args, extra=()):
    """Run one sojourn phase and return its JSON report."""
    cmd = [BIN, phase, "--db", db, "--format", "json", "--no-progress"] + list(extra) + args
    return json.loads(timed(cmd))


def row(label, ops_per_sec, us, user, sys_, base=None):
    ratio = f"{us / base:6.2f}x" if base else ""
    print(f"{label:44} {ops_per_sec:>10.0f} {us:>9.2f} {user:>7.2f} {sys_:>7.2f}  {ratio}")


def report(label, r, base=None):
    n = max(r["operations"], 1)
    c = r["client_cpu"]
    row(label, r["achieved_ops_per_sec"], c["us_per_op"], c["user_s"] * 1e6 / n, c["system_s"] * 1e6 / n, base)
    return c["us_per_op"]


def redis_server(tmp):
    """A private redis-server on a free loopback port, nothing persisted: (process, port)."""
    if not shutil.which("redis-server"):
        sys.exit("redis-server is not installed (scripts/deps installs it)")
    port = free_port()
    server = start(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no", "--dir", tmp], port)
    pin_server(server.pid)
    return server, port


def stop(server):
    server.kill()
    server.wait()


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


class Postgres:
    """A private PostgreSQL: initdb into a temporary directory, then postgres on
    a free loopback port with `synchronous_commit=off` (so that writes measure
    the client, not the disk's flush rate); as the `postgres` user when run
    as root. User USER with password PASSWORD, database `postgres`."""

    USER, PASSWORD = "bench", "bench-secret"

    def __init__(self, tmp, max_connections=100):
        self.bindir = pg_bin()
        drop, owner = as_server_user()
        pwfile = os.path.join(tmp, "pw")
        with open(pwfile, "w") as f:
            f.write(self.PASSWORD)
        if owner:
            for p in (tmp, pwfile):
                os.chown(p, *owner)
        data = os.path.join(tmp, "data")
        subprocess.run([os.path.join(self.bindir, "initdb"), "-D", data, "-U", self.USER,
                        "-A", "scram-sha-256", f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C",
                        "--no-sync"], check=True, stdout=subprocess.DEVNULL, preexec_fn=drop)
        self.port = free_port()
        self.server = server_popen(
            [os.path.join(self.bindir, "postgres"), "-D", data, "-p", str(self.port), "-k", tmp,
             "-c", "listen_addresses=127.0.0.1", "-c", "synchronous_commit=off",
             "-c", "shared_buffers=256MB", "-c", f"max_connections={max_connections}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=drop)
        self.env = dict(os.environ, PGPASSWORD=self.PASSWORD)
        self.url = f"postgres://{self.USER}:{self.PASSWORD}@127.0.0.1:{self.port}/postgres"
        deadline = time.time() + 60
        while subprocess.run([os.path.join(self.bindir, "pg_isready"), "-q", "-h", "127.0.0.1",
                              "-p", str(self.port)]).returncode != 0:
            if self.server.poll() is not None or time.time() > deadline:
                self.stop()
                sys.exit("postgres did not start")
            time.sleep(0.05)
        pin_server(self.server.pid)

    def tool(self, name):
        """A client program next to the server's, else on PATH, else None."""
        p = os.path.join(self.bindir, name)
        return p if os.path.exists(p) else shutil.which(name)

    def stop(self):
        # A fast shutdown: active sessions are ended, shared memory removed.
        if self.server.poll() is None:
            self.server.send_signal(signal.SIGINT)
        self.server.wait()


class Mariadb:
    """A private MariaDB: mariadb-install-db into a temporary directory, then
    mariadbd on a free loopback port with `innodb_flush_log_at_trx_commit=2`
    and no binary log (so that writes measure the client, not the disk's
    flush rate). User root without a password; databases DATABASES."""

    DATABASES = ("bench", "sbtest")

    def __init__(self, tmp):
        for exe in ("mariadb-install-db", "mariadbd", "mariadb"):
            if not shutil.which(exe):
                raise Failed(f"{exe} is not installed (scripts/deps installs MariaDB)")
        data, work = os.path.join(tmp, "data"), os.path.join(tmp, "tmp")
        os.makedirs(work)
        as_root = ["--user=root"] if os.geteuid() == 0 else []
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}",
                        "--auth-root-authentication-method=normal", "--skip-test-db",
                        "--innodb-use-native-aio=0"] + as_root,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.port = free_port()
        self.socket = os.path.join(tmp, "sock")
        self.server = server_popen(
            ["mariadbd", "--no-defaults", f"--datadir={data}", f"--tmpdir={work}",
             f"--socket={self.socket}", f"--pid-file={os.path.join(tmp, 'pid')}", f"--port={self.port}",
             "--bind-address=127.0.0.1", "--skip-name-resolve", "--innodb-buffer-pool-size=256M",
             "--innodb-flush-log-at-trx-commit=2", "--skip-log-bin", "--innodb-use-native-aio=0",
             "--max-connections=300"] + as_root,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while subprocess.run(self.client("SELECT 1"), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL).returncode != 0:
            if self.server.poll() is not None or time.time() > deadline:
                self.stop()
                raise Failed("mariadbd did not start")
            time.sleep(0.1)
        for db in self.DATABASES:
            subprocess.run(self.client(f"CREATE DATABASE IF NOT EXISTS {db}"), check=True)
        pin_server(self.server.pid)
        self.url = f"mysql://root@127.0.0.1:{self.port}/bench"

    def client(self, sql):
        return ["mariadb", "--no-defaults", f"--socket={self.socket}", "-uroot", "-e", sql]

    def stop(self):
        if self.server.poll() is None:
            self.server.terminate()
        self.server.wait()


class Cassandra:
    """A private Cassandra 5.0 node (scripts/cassandra-node: the jars
    scripts/deps fetched, Java 17) on free loopback ports, its data in a
    temporary directory, no authentication; `heap` sizes its JVM heap."""

    def __init__(self, tmp, heap="1g"):
        script = os.path.join(ROOT, "scripts", "cassandra-node")
        self.port, storage = free_port(), free_port()
        self.log = os.path.join(tmp, "cassandra.log")
        with open(self.log, "w") as log:
            self.server = server_popen([script, os.path.join(tmp, "node"), str(self.port), str(storage)],
                                           stdout=log, stderr=subprocess.STDOUT,
                                           env=dict(os.environ, CASSANDRA_HEAP=heap))
        deadline = time.time() + 120
        while True:
            with open(self.log) as f:
                if "Startup complete" in f.read():
                    break
            if self.server.poll() is not None or time.time() > deadline:
                self.stop()
                sys.exit(f"cassandra did not start; its log is {self.log}")
            time.sleep(0.1)
        pin_server(self.server.pid)
        self.host = f"127.0.0.1:{self.port}"

    def stop(self):
        # SIGTERM drains the node; it exits 143.
        if self.server.poll() is None:
            self.server.terminate()
        try:
            self.server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
