"""The peers benchmark's tables: medians and ranges of interleaved rounds, and the ratios the
peers issue sets goals for, each said met or not. Reads the lines Benchmarks/Peers/run.sh writes:
PHASE ROUND SYSTEM pingpong|inflight rate=… p50_us=… p99_us=…
"""
import collections
import statistics
import sys

LABELS = {
    "switchyard-none": "Switchyard, no state directory",
    "switchyard-off": "Switchyard `off` (journal written behind)",
    "switchyard-batched": "Switchyard `batched`",
    "switchyard-strict": "Switchyard `strict`",
    "redis-none": "Redis 7, function HINCRBY + PUBLISH, no persistence",
    "redis-everysec": "same, `appendfsync everysec`",
    "redis-always": "same, `appendfsync always`",
    "etcd": "etcd 3.4 put, one node (JSON gateway; 16 connections for 16 in flight)",
    "redis-ping": "Redis PING (the floor)",
}

# (label, numerator, denominator, figure, goal, higher is better)
GOALS = [
    ("`batched` / `off`, 16 in flight", "switchyard-batched", "switchyard-off", ("inflight", "rate"), 0.9, True),
    ("`batched` / `off`, ping-pong p50", "switchyard-batched", "switchyard-off", ("pingpong", "p50_us"), 1.1, False),
    ("no state directory / Redis none, 16 in flight", "switchyard-none", "redis-none", ("inflight", "rate"), 1.0, True),
    ("no state directory / Redis none, ping-pong p50", "switchyard-none", "redis-none", ("pingpong", "p50_us"), 1.0, False),
    ("`off` / Redis none, 16 in flight", "switchyard-off", "redis-none", ("inflight", "rate"), 1.0, True),
    ("`off` / Redis none, ping-pong p50", "switchyard-off", "redis-none", ("pingpong", "p50_us"), 1.0, False),
    ("`strict` / Redis `always`, 16 in flight", "switchyard-strict", "redis-always", ("inflight", "rate"), 1.5, True),
    ("`strict` / Redis `always`, ping-pong p50", "switchyard-strict", "redis-always", ("pingpong", "p50_us"), 0.6, False),
    ("`strict` / etcd, 16 in flight", "switchyard-strict", "etcd", ("inflight", "rate"), 10.0, True),
    ("no state directory, pipelined / Redis PING", "switchyard-none", "redis-ping", ("inflight", "rate"), 0.35, True),
]


def read(path):
    figures = collections.defaultdict(list)
    for line in open(path):
        words = line.split()
        if len(words) < 5:
            continue
        phase, _, system, kind = words[:4]
        for pair in words[4:]:
            key, value = pair.split("=")
            figures[(phase, system, kind, key)].append(float(value))
    return figures


def spread(values, digits=0):
    median = statistics.median(values)
    if len(values) == 1:
        return f"{median:,.{digits}f}"
    return f"{median:,.{digits}f} ({min(values):,.{digits}f}–{max(values):,.{digits}f})"


def main(path):
    figures = read(path)
    phases = sorted({key[0] for key in figures}, key=lambda phase: (phase != "unpinned", phase))
    for phase in phases:
        print(f"\n## {phase.capitalize()}\n")
        print("| system, durability | 16 in flight, /s | ping-pong p50, µs | ping-pong p99, µs |")
        print("|---|---:|---:|---:|")
        for system, label in LABELS.items():
            rate = figures.get((phase, system, "inflight", "rate"))
            p50 = figures.get((phase, system, "pingpong", "p50_us"))
            p99 = figures.get((phase, system, "pingpong", "p99_us"))
            if not rate:
                continue
            print(f"| {label} | {spread(rate)} | {spread(p50, 1)} | {spread(p99, 1)} |")
        print("\nMedians, and the range over the rounds in parentheses.\n")
        print("| ratio (medians) | measured | goal | |")
        print("|---|---:|---:|---|")
        for label, numerator, denominator, (kind, key), goal, higher in GOALS:
            a = figures.get((phase, numerator, kind, key))
            b = figures.get((phase, denominator, kind, key))
            if not a or not b:
                continue
            ratio = statistics.median(a) / statistics.median(b)
            met = ratio >= goal if higher else ratio <= goal
            print(f"| {label} | {ratio:.2f}× | {'≥' if higher else '≤'} {goal:g}× | {'met' if met else 'not met'} |")


if __name__ == "__main__":
    main(sys.argv[1])
