"""The A/B table of `run.sh ab`: one row a measurement and a hosting, from the rounds' lines.

Each input line is `kind|measurement|better|build|round|value`, `better` being `up` (a rate) or
`down` (a latency, a CPU time); `build` is `this` or `base`.
"""

import statistics
import sys
from collections import defaultdict

KINDS = {"worker": "worker", "actor": "actor", "strict": "actor, strict journal", "batched": "actor, batched journal"}


def figure(value):
    """Rates as whole numbers, latencies and CPU times to a tenth."""
    return f"{value:.0f}" if value >= 1000 else f"{value:.1f}"


def main(path):
    values = defaultdict(dict)  # (kind, measurement, better) -> {(build, round): value}
    order = []
    with open(path) as lines:
        for line in lines:
            kind, measurement, better, build, round_, value = line.rstrip("\n").split("|")
            key = (kind, measurement, better)
            if key not in values:
                order.append(key)
            if value:
                values[key][(build, int(round_))] = float(value)
    print("| hosting | measurement | baseline | this | difference | rounds ahead / behind by > 5 % |")
    print("|---|---|---:|---:|---:|---:|")
    for key in order:
        kind, measurement, better = key
        runs = values[key]
        rounds = sorted({r for (_, r) in runs})
        paired = [(runs[("base", r)], runs[("this", r)]) for r in rounds if ("base", r) in runs and ("this", r) in runs]
        if not paired:
            continue
        base = statistics.median(b for b, _ in paired)
        this = statistics.median(t for _, t in paired)
        change = (this - base) / base * 100 if base else 0.0
        gain = (lambda b, t: (t - b) / b) if better == "up" else (lambda b, t: (b - t) / b)
        ahead = sum(1 for b, t in paired if b and gain(b, t) > 0.05)
        behind = sum(1 for b, t in paired if b and gain(b, t) < -0.05)
        print(f"| {KINDS[kind]} | {measurement} | {figure(base)} | {figure(this)} | {change:+.1f} % | {ahead} / {behind} |")


if __name__ == "__main__":
    main(sys.argv[1])
