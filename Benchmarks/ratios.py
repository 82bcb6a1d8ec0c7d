#!/usr/bin/env python3
"""Prints the benchmarks' medians and their ratios to the references measured in the same run.

Usage: ratios.py DIR   (DIR holds the JMH export of `swift package benchmark --format jmh`)
"""
import glob
import json
import sys

# (what, measured, reference, how the ratio reads, goal)
#   "speed": reference time / measured time — 1.0 is as fast as the reference, higher is faster
#   "cost":  measured time / reference time — how many times the reference it costs
#   "extra": measured time - reference time, per send (an iteration of the send benchmarks is
#            1,000 sends, so µs per iteration read as ns per send)
COMPARISONS = [
    ("Store.send vs a hand-written actor", "Store.send, trivial reducer",
     "Reference: hand-written actor, same mutation", "speed", ">= 0.5"),
    ("send through 1 Scope vs none", "Store.send through 1 Scope", "Store.send through 0 Scopes", "cost", None),
    ("send through 3 Scopes vs none", "Store.send through 3 Scopes", "Store.send through 0 Scopes", "cost", None),
    ("send through 5 Scopes vs none", "Store.send through 5 Scopes", "Store.send through 0 Scopes", "cost", None),
    ("1 Scope level, extra ns per send", "Store.send through 1 Scope", "Store.send through 0 Scopes", "extra", "<= 100"),
    ("3 Scope levels, extra ns per send", "Store.send through 3 Scopes", "Store.send through 0 Scopes", "extra", None),
    ("5 Scope levels, extra ns per send", "Store.send through 5 Scopes", "Store.send through 0 Scopes", "extra", None),
    ("1 Scope, stored CaseKeyPath, extra ns per send", "Store.send through 1 Scope, stored CaseKeyPath",
     "Store.send through 0 Scopes", "extra", None),
    ("observed send, 1,000 elements vs 10", "Observed Store.send changing one element, 1000 elements",
     "Observed Store.send changing one element, 10 elements", "cost", None),
    ("observed send, 100,000 elements vs 10", "Observed Store.send changing one element, 100000 elements",
     "Observed Store.send changing one element, 10 elements", "cost", "<= 2"),
    ("observed send, full diff, 100,000 vs 10", "Observed Store.send changing one element, full diff, 100000 elements",
     "Observed Store.send changing one element, full diff, 10 elements", "cost", None),
    ("Send frame to action, typical: tree + re-encode (before), × straight from bytes",
     "Send frame to action, typical, through a tree and re-encode", "Send frame to action, typical, straight from bytes",
     "cost", None),
    ("Send frame to action, bigger: tree + re-encode (before), × straight from bytes",
     "Send frame to action, bigger, through a tree and re-encode", "Send frame to action, bigger, straight from bytes",
     "cost", None),
    ("task-local read vs thread-local read", "Task-local read", "Thread-local read (pthread key)", "cost", None),
    ("diff, 1,000 elements vs 10", "Diff of one changed element, 1000 elements",
     "Diff of one changed element, 10 elements", "cost", None),
    ("diff of two whole trees, 100,000 elements vs 10", "Diff of one changed element, 100000 elements",
     "Diff of one changed element, 10 elements", "cost", None),
    ("encode + diff, 100,000 elements vs 10", "Encode and diff, one changed element, 100000 elements",
     "Encode and diff, one changed element, 10 elements", "cost", None),
]


def key(name):
    return name.replace(" ", "_")


def load(directory):
    medians = {}
    for path in glob.glob(f"{directory}/**/*.json", recursive=True):
        with open(path) as file:
            for element in json.load(file):
                name = element["benchmark"].split(".", 3)[3]
                wall = element["secondaryMetrics"].get("Time (wall clock)")
                if wall:
                    medians[name] = wall["scorePercentiles"]["50.0"]  # microseconds per iteration
    return medians


def main():
    medians = load(sys.argv[1] if len(sys.argv) > 1 else ".build-bench/results")
    if not medians:
        sys.exit("no benchmark results found")
    print("median wall clock per iteration (iterations of the send benchmarks are 1,000 sends,")
    print("except for the observed sends with a full diff, which are one send):")
    for name in sorted(medians):
        print(f"  {name.replace('_', ' '):60} {medians[name]:>12.3f} µs")
    print()
    print(f"  {'comparison':55} {'ratio':>10}  goal")
    failed = False
    for what, measured, reference, kind, goal in COMPARISONS:
        m, r = medians.get(key(measured)), medians.get(key(reference))
        if m is None or r is None or m == 0:
            print(f"  {what:55} {'missing':>10}")
            continue
        ratio = r / m if kind == "speed" else m - r if kind == "extra" else m / r
        verdict = ""
        if goal:
            op, bound = goal.split()
            met = ratio >= float(bound) if op == ">=" else ratio <= float(bound)
            verdict = f"{goal} ({'met' if met else 'NOT met'})"
        unit = " ns" if kind == "extra" else "×"
        print(f"  {what:55} {ratio:>9.2f}{unit}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
