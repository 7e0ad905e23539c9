#!/usr/bin/env python3
"""sojourn's change points against Apache Otava's on the same series.

`sojourn history` finds change points with Otava's method (windows of 50
points, E-Divisive means, Student's t-test, Hunter's merge; see
docs/history.md). This script holds its answers against Otava 0.8's own
(`otava.analysis.compute_change_points`) on a few hundred seeded series:
steps of 5 to 20% up and down (one to three, lengths 20 to 200, noise 1
to 5%), pure noise, slow drifts, and single steps whose first point
overshoots them. Two change-point lists agree when
each point of one has a point of the other within one position.

    python3 -m venv /tmp/otava && /tmp/otava/bin/pip install apache-otava==0.8.0
    /tmp/otava/bin/python bench/changepoints.py [--series 300] [--seed 1] [--show 5]

It builds the `changepoints` example of the sojourn-report crate, which
runs the code `sojourn history` runs on a figure's points, and prints per
family of series and per setting (`--max-pvalue`, `--min-change`) how
many series agree, how many change points each found, and the first
series that differ.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

try:
    from otava.analysis import compute_change_points
except ImportError:
    sys.exit("needs Apache Otava: pip install apache-otava==0.8.0 (in a virtualenv)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "target", "release", "examples", "changepoints")


def families(count, seed):
    """Seeded series: (family, description, values, where the steps are)."""
    rng = np.random.default_rng(seed)
    out = []
    steps = count * 2 // 3
    noise_only = count // 6
    drifts = count - steps - noise_only
    for i in range(steps):
        length = int(rng.choice([20, 50, 100, 200]))
        noise = float(rng.choice([0.01, 0.02, 0.03, 0.05]))
        k = int(rng.integers(1, 4))
        k = max(1, min(k, length // 10))
        at = sorted(int(a) for a in rng.choice(np.arange(5, length - 4), size=k, replace=False))
        level, levels = 100.0, np.full(length, 100.0)
        shifts, big = [], []
        for a in at:
            s = float(rng.uniform(0.05, 0.20)) * float(rng.choice([-1, 1]))
            level *= 1 + s
            levels[a:] = level
            shifts.append(f"{a}:{s:+.0%}")
            big.append(abs(s) >= 3 * noise)
        values = levels * (1 + noise * rng.standard_normal(length))
        out.append(("steps", f"n={length} noise={noise:.0%} shifts {' '.join(shifts)}", values,
                    [(a, b) for a, b in zip(at, big)]))
    for i in range(noise_only):
        noise = float(rng.choice([0.01, 0.02, 0.03, 0.05]))
        out.append(("noise", f"n=50 noise={noise:.0%}", 100 * (1 + noise * rng.standard_normal(50)), []))
    for i in range(drifts):
        length = int(rng.choice([100, 150, 200]))
        noise = float(rng.choice([0.01, 0.02]))
        total = float(rng.choice([-0.15, 0.15]))
        a, b = length // 3, length // 3 + length // 4
        levels = np.full(length, 100.0)
        levels[a:b] = 100 * (1 + total) ** ((np.arange(a, b) - a + 1) / (b - a))
        levels[b:] = 100 * (1 + total)
        values = levels * (1 + noise * rng.standard_normal(length))
        out.append(("drift", f"n={length} noise={noise:.0%} drift {a}..{b} {total:+.0%}", values, None))
    # One step whose first point overshoots it by a third to all of the
    # step again: a run that met a cold cache, say, just as the change
    # came in.
    for i in range(count // 6):
        length = int(rng.choice([20, 30, 50, 100]))
        noise = float(rng.choice([0.005, 0.01, 0.02]))
        a = int(rng.integers(8, length - 6))
        s = float(rng.uniform(0.05, 0.20)) * float(rng.choice([-1, 1]))
        over = float(rng.uniform(1 / 3, 1.0))
        levels = np.full(length, 100.0)
        levels[a:] = 100 * (1 + s)
        levels[a] = 100 * (1 + s * (1 + over))
        values = levels * (1 + noise * rng.standard_normal(length))
        out.append(("outlier", f"n={length} noise={noise:.1%} shift {a}:{s:+.0%} overshot {over:.0%}",
                    values, [(a, abs(s) >= 3 * noise)]))
    return out


def otava(values, max_pvalue, min_magnitude):
    cps, _ = compute_change_points(list(values), window_len=50, max_pvalue=max_pvalue,
                                   min_magnitude=min_magnitude)
    return sorted(int(c.index) for c in cps)


def sojourn(series, max_pvalue, min_magnitude, *how):
    lines = "".join(json.dumps([float(v) for v in s]) + "\n" for s in series)
    out = subprocess.run([EXAMPLE, str(max_pvalue), str(min_magnitude), "50", *how], input=lines,
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines()]


def near(a, b):
    return all(any(abs(x - y) <= 1 for y in b) for x in a)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=5, help="differing series shown per setting")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "sojourn-report",
                    "--example", "changepoints"], cwd=ROOT, check=True)
    made = families(args.series, args.seed)
    series = [m[:3] for m in made]
    shifts = [m[3] if m[0] in ("steps", "outlier") else None for m in made]
    import otava as _o
    print(f"{len(series)} seeded series (seed {args.seed}); Otava "
          f"{getattr(_o, '__version__', '0.8')} compute_change_points, window 50")
    for max_p, min_m in [(0.001, 0.0), (0.001, 0.02), (0.01, 0.0)]:
        values = [v for _, _, v in series]
        theirs = [otava(v, max_p, min_m) for v in values]
        print(f"\n--max-pvalue {max_p} --min-change {min_m}")
        print(f"  {'sojourn':<21}{'family':<8}{'series':>7}{'agree':>8}{'otava cps':>11}"
              f"{'sojourn cps':>13}{'matched':>9}")
        for name, how in [("as shipped", ()), ("testing as Otava", ("otava",))]:
            ours = sojourn(values, max_p, min_m, *how)
            for fam in ["steps", "outlier", "noise", "drift", "all"]:
                idx = [i for i, (f, _, _) in enumerate(series) if fam in (f, "all")]
                agree = sum(1 for i in idx if near(ours[i], theirs[i]) and near(theirs[i], ours[i]))
                n_o = sum(len(theirs[i]) for i in idx)
                n_s = sum(len(ours[i]) for i in idx)
                matched = sum(1 for i in idx for c in theirs[i]
                              if any(abs(c - d) <= 1 for d in ours[i]))
                print(f"  {name if fam == 'steps' else '':<21}{fam:<8}{len(idx):>7}"
                      f"{agree / len(idx):>8.1%}{n_o:>11}{n_s:>13}{matched / max(n_o, 1):>9.1%}")
            truth = [(i, t) for i, t in enumerate(shifts) if t]
            for who, found in [("otava", theirs), ("sojourn", ours)]:
                def recall(keep, fam="steps"):
                    want = [(i, a) for i, t in truth for a, b in t
                            if keep(b) and series[i][0] == fam]
                    hit = sum(1 for i, a in want if any(abs(a - c) <= 1 for c in found[i]))
                    return hit / max(len(want), 1)
                n_f = sum(len(found[i]) for i, _ in truth)
                real = sum(1 for i, t in truth for c in found[i]
                           if any(abs(a - c) <= 1 for a, _ in t))
                print(f"    steps against the truth, {who}: recall {recall(lambda b: True):.1%} "
                      f"(of shifts of 3 noise deviations or more {recall(lambda b: b):.1%}), "
                      f"with an outlier {recall(lambda b: True, 'outlier'):.1%}, "
                      f"precision {real / max(n_f, 1):.1%}")
            alarmed = {who: sum(1 for i, (f, _, _) in enumerate(series) if f == "noise" and found[i])
                       for who, found in [("otava", theirs), ("sojourn", ours)]}
            print(f"    pure noise, series with a change point: otava {alarmed['otava']}, "
                  f"sojourn {alarmed['sojourn']} of {sum(1 for f, _, _ in series if f == 'noise')}")
            differ = [f"    #{i} {fam} {desc}: otava {theirs[i]}, sojourn {ours[i]}"
                      for i, (fam, desc, _) in enumerate(series)
                      if not (near(ours[i], theirs[i]) and near(theirs[i], ours[i]))]
            if differ and args.show:
                print(f"  {len(differ)} differ; the first {min(args.show, len(differ))}:")
                print("\n".join(differ[:args.show]))


if __name__ == "__main__":
    main()
