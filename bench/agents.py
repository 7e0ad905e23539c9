"""How far one PostgreSQL results store goes as the meeting point of agents.

Starts a private PostgreSQL (the store) and N `sojourn agent` processes on
this machine, then coordinates one run over all of them on the `null:`
database (so the store, not a database, is what is measured): each agent
offers --rate operations per second on one connection and writes one
interval per --interval seconds, heartbeats once a second and polls for
work. While the run goes, the store is watched from outside:

- its write rate: committed transactions per second (pg_stat_database);
- intervals behind: for every running agent run, the intervals that have
  closed (its age over the interval) less those the store holds; the
  target is that none is ever more than one interval behind;
- agents' liveness: the oldest heartbeat, which grows when the store is
  too slow to take them (an agent is given up after 10 s).

    python3 bench/agents.py                      # 64 agents, 20 s
    python3 bench/agents.py --agents 16 --seconds 10
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BIN, Postgres, build  # noqa: E402


def psql(pg, sql):
    out = subprocess.run(
        [os.path.join(pg.bindir, "psql"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", pg.USER,
         "-d", "postgres", "-X", "-q", "-A", "-t", "-F", "\t", "-c", sql],
        env=pg.env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return [line.split("\t") for line in out.stdout.strip().splitlines() if line]


def commits(pg):
    return int(psql(pg, "SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'")[0][0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--rate", type=float, default=100.0, help="ops/s each agent offers")
    ap.add_argument("--interval", type=float, default=1.0, help="timeseries.interval (s)")
    a = ap.parse_args()
    build()
    tmp = tempfile.mkdtemp(prefix="sojourn-bench-agents-")
    # Two connections an agent (its control, its run's writes), the
    # coordinator's and the bench's own.
    pg = Postgres(tmp, max_connections=2 * a.agents + 20)
    url = f"postgres://{pg.USER}@127.0.0.1:{pg.port}/postgres"
    env = dict(os.environ, SOJOURN_RESULTS_PASSWORD=pg.PASSWORD)
    env.pop("PGPASSWORD", None)
    agents = []
    try:
        # The store's schema first, so the agents do not all create it.
        subprocess.run([BIN, "agents", "list", "--results", url], env=env, check=True,
                       capture_output=True)
        for i in range(a.agents):
            agents.append(subprocess.Popen(
                [BIN, "agent", "--results", url, "--name", f"a{i}", "--idle-timeout", "600",
                 "--data-dir", os.path.join(tmp, f"a{i}")],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.time() + 120
        while True:
            idle = int(psql(pg, "SELECT COUNT(*) FROM agents WHERE state = 'idle' AND "
                                "extract(epoch from clock_timestamp()) - heartbeat_unix < 5")[0][0])
            if idle >= a.agents:
                break
            if time.time() > deadline:
                sys.exit(f"only {idle} of {a.agents} agents registered")
            time.sleep(0.2)
        idle_before = commits(pg)
        time.sleep(3)
        idle_rate = (commits(pg) - idle_before) / 3
        coordinator = subprocess.Popen(
            [BIN, "run", "null:", "-P", "workloads/workloadc", "-p", "recordcount=1000",
             "-p", "operationcount=0", "-p", f"maxexecutiontime={a.seconds}",
             "-p", f"timeseries.interval={a.interval}", "-threads", "1",
             "-target", str(a.rate * a.agents), "--agents", str(a.agents),
             "--results", url, "--no-progress", "--format", "json"],
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        behind, oldest_beat, samples = 0.0, 0.0, 0
        t0, c0, running_since = time.time(), commits(pg), None
        while coordinator.poll() is None:
            rows = psql(pg, f"""
                SELECT r.id, extract(epoch from clock_timestamp()) - r.started_unix,
                       (SELECT COUNT(*) FROM intervals i WHERE i.run_id = r.id)
                FROM runs r WHERE r.status = 'running'""")
            for _, age, stored in rows:
                # Intervals closed by now, less one being written.
                closed = int(float(age) / a.interval)
                behind = max(behind, closed - int(stored) - 1)
            if rows and running_since is None:
                running_since, c_run = time.time(), commits(pg)
            beat = psql(pg, "SELECT MAX(extract(epoch from clock_timestamp()) - heartbeat_unix) "
                            "FROM agents")
            oldest_beat = max(oldest_beat, float(beat[0][0] or 0))
            samples += 1
            time.sleep(0.25)
        out, err = coordinator.communicate()
        if coordinator.returncode != 0:
            sys.exit(f"the coordinated run failed:\n{err}")
        run_rate = (commits(pg) - c_run) / (time.time() - running_since) if running_since else 0
        print(f"# {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; one private "
              f"PostgreSQL store (synchronous_commit off, max_connections "
              f"{2 * a.agents + 20}); {a.agents} agents on this machine")
        print(f"agents                          {a.agents}")
        print(f"store commits/s, agents idle    {idle_rate:.0f}")
        print(f"store commits/s, agents running {run_rate:.0f} "
              f"({run_rate / a.agents:.1f} per agent; intervals every {a.interval:g} s)")
        print(f"intervals behind, at worst      {max(behind, 0):.0f} ({samples} looks)")
        print(f"oldest heartbeat seen           {oldest_beat:.1f} s")
        verdict = "met" if behind <= 1 else "NOT met"
        print(f"verdict: no interval more than one interval behind: {verdict}")
    finally:
        for p in agents:
            p.terminate()
        for p in agents:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
