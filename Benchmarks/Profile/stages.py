#!/usr/bin/env python3
"""Where a request's CPU goes, by stage: reads `perf script` output (a `perf record -g` taken
while a load runs) and gives each sample to the innermost stage its stack names.

    perf record -e cpu-clock -g -C 0 -o run.data -- sleep 3
    perf script -i run.data | Benchmarks/Profile/stages.py --rate 160000 [--stages redis]

With `--rate` (requests a second over the recording) each share is also given in microseconds
of CPU per request, for the recorded CPUs taken together. A sample in the refcounting entry
points (`swift_retain`, `swift_release`, ...) counts for the stage that called them, and is
also summed in the last column, so the table shows where that traffic comes from. Samples of
the journal's threads, the kernel's disk workers, the idle task and the load tool are given to
those by their thread's name.
"""
import argparse
import collections
import re
import sys

# Innermost first: the first frame from the leaf that matches one of these names its stage.
SWITCHYARD = [
    ("kernel: socket write", r"^(__send|__libc_send|writev|__writev|sendmsg|__libc_sendmsg)$"),
    ("kernel: socket read", r"^(read|__libc_read|readv|recvmsg|__libc_recvmsg)$"),
    ("kernel: waiting for events", r"^(epoll_wait|__GI_epoll_wait)$"),
    ("journal", r"SwitchyardJournal|sqlite3|Redo"),
    ("diff and publish", r"ChangeFeed|StoreC7publish|ActorHost.*published|JSONPatch|_StoredFields|ChangeTracker|StateChange"),
    ("reduce", r"StoreC6reduce|_resolve|ScopeV|Reducer|PrimeTime"),
    ("routing", r"RouterC5route|RouteTicket|_AnyRoute|ActionShape|Routes?C"),
    ("action decode", r"ActionDecoder|decodeCases|JSONLayout|Decodable|Decoder"),
    ("Varlink framing and JSON parse", r"FrameDecoder|_JSONParser|_JSONTape|FrameReader|CallFrame|ConnectionState"),
    ("reply encode and write", r"Encoder|ReplyWriter|VarlinkConnectionHandler.*(reply|write|flush)|ByteBuffer.*write"),
    ("connection handling", r"VarlinkConnectionHandler|StoreResponder|ConnectionTimeoutHandler|CountedMethod"),
    ("event loop", r"NIOPosix|NIOCore|SelectableEventLoop"),
]
REDIS = [
    ("kernel: socket write", r"^(__write|write|writev|__writev|__libc_write|_writeToClient|writeToClient)$"),
    ("kernel: socket read", r"^(read|__libc_read|__read)$"),
    ("kernel: waiting for events", r"^(epoll_wait|__GI_epoll_wait)$"),
    ("PUBLISH", r"pubsubPublishMessage|publishCommand"),
    ("HINCRBY", r"hincrbyCommand|hashType|lookupKey"),
    ("function call (Lua)", r"^(lua|luaV_|luaD_|luaH_|luaS_|luaC_|scriptCall|fcallCommand|luaCallFunction|luaRedis)"),
    ("command parse", r"processInputBuffer|processMultibulkBuffer|lookupCommand"),
    ("reply", r"addReply|_addReply"),
    ("event loop", r"aeProcessEvents|aeMain|readQueryFromClient|handleClientsWithPendingWrites|beforeSleep"),
]
# Samples of these threads are their thread's, whatever their stack: the journal's threads run
# SQLite, whose library has no frame pointers to unwind, and the others are not the daemon's.
THREADS = [
    ("journal: writer thread (SQLite)", r"^journal-writer$"),
    ("journal: sync thread (fdatasync)", r"^journal-sync$"),
    ("kernel: the disk's workers", r"^kworker"),
    ("idle", r"^swapper"),
    ("the load tool", r"^loadgen$"),
]
REFCOUNT = re.compile(r"^(swift_(retain|release|bridgeObjectRetain|bridgeObjectRelease|unknownObjectRetain|unknownObjectRelease)"
                      r"|.*RefCounts.*(increment|decrement).*)")


def samples(lines):
    """Yields (command, [frames leaf first]) for each sample of `perf script`."""
    command, frames = None, []
    for line in lines:
        if not line.strip():
            if command is not None:
                yield command, frames
            command, frames = None, []
        elif not line[0].isspace():
            command = line.split()[0]
        else:
            parts = line.split(None, 1)
            symbol = parts[1] if len(parts) > 1 else "?"
            frames.append(re.sub(r"\+0x[0-9a-f]+ \(.*\)$| \(.*\)$", "", symbol.strip()))
    if command is not None:
        yield command, frames


def stage_of(frames, stages):
    for frame in frames:
        for name, pattern in stages:
            if re.search(pattern, frame):
                return name
    leaf = frames[0] if frames else "?"
    if leaf.startswith(("finish_task_switch", "__schedule", "schedule")):
        return "kernel: task switches"
    return "other"


def main():
    arguments = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    arguments.add_argument("--rate", type=float, help="requests a second while perf recorded")
    arguments.add_argument("--cpus", type=float, default=1.0, help="CPUs the recording covers (-C list)")
    arguments.add_argument("--stages", choices=["switchyard", "redis"], default="switchyard")
    arguments.add_argument("--command", action="append", help="only samples of these commands (perf's comm)")
    options = arguments.parse_args()
    stages = SWITCHYARD if options.stages == "switchyard" else REDIS

    by_command = collections.Counter()
    by_stage = collections.Counter()
    refcount = collections.Counter()
    total = 0
    for command, frames in samples(sys.stdin):
        total += 1
        by_command[command] += 1
        if options.command and command not in options.command:
            continue
        stage = next((name for name, pattern in THREADS if re.search(pattern, command)), None) or stage_of(frames, stages)
        by_stage[stage] += 1
        if frames and REFCOUNT.match(frames[0]):
            refcount[stage] += 1
    if not total:
        sys.exit("no samples: pipe `perf script -i FILE` in")

    print("| command | share of the samples |\n|---|---:|")
    for command, count in by_command.most_common(6):
        print(f"| {command} | {100 * count / total:.1f} % |")
    print()
    scale = None
    if options.rate:
        # The samples cover the recorded CPUs for the recording's length, whatever the sampling
        # period: a share of them is that share of (CPUs × seconds), spread over rate × seconds
        # requests.
        scale = options.cpus * 1e6 / options.rate / total
    header = "| stage | share | µs per request | refcounting within it |" if scale else "| stage | share | refcounting within it |"
    print(header)
    print("|---|---:|---:|---:|" if scale else "|---|---:|---:|")
    for stage, count in by_stage.most_common():
        cells = [stage, f"{100 * count / total:.1f} %"]
        if scale:
            cells.append(f"{count * scale:.2f}")
        cells.append(f"{100 * refcount[stage] / total:.1f} %")
        print("| " + " | ".join(cells) + " |")
    selected = sum(by_stage.values())
    cells = ["all of it", f"{100 * selected / total:.1f} %"]
    if scale:
        cells.append(f"{selected * scale:.2f}")
    cells.append(f"{100 * sum(refcount.values()) / total:.1f} %")
    print("| " + " | ".join(f"**{c}**" for c in cells) + " |")


if __name__ == "__main__":
    main()
