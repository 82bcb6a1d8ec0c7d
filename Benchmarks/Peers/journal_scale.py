#!/usr/bin/env python3
"""How a journal's length costs: for each length, a journal of that many changes (a snapshot
every 10,000, as the daemon writes them), then the milliseconds from exec until the socket
accepts (the start replays what follows the last snapshot), and of a `Get` at the seq in the
middle (rebuilt from the snapshot before it). Medians of three.

    journal_scale.py DAEMON DIRECTORY LENGTH...

Prints one line per length: `changes=… start_ms=… get_at_middle_ms=… journal_bytes=…`.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "EndToEnd"))
from recovery import call, fill, start  # noqa: E402


def serving(daemon, state, sock):
    """A daemon started on `state`, once its socket accepts."""
    if os.path.exists(sock):
        os.unlink(sock)
    env = dict(os.environ, SWITCHYARD_LOG_LEVEL="warning", SWITCHYARD_FEATURES_PRIMES_ISOLATION="actor")
    process = subprocess.Popen([daemon, "--socket", sock, "--state-directory", state], env=env)
    while not os.path.exists(sock):
        if process.poll() is not None:
            raise RuntimeError(f"the daemon exited with {process.returncode}")
        time.sleep(0.001)
    time.sleep(0.2)
    return process


def main():
    daemon, directory, lengths = sys.argv[1], sys.argv[2], [int(word) for word in sys.argv[3:]]
    sock = os.path.join(directory, "scale.sock")
    for changes in lengths:
        state = os.path.join(directory, f"journal-{changes}")
        start(daemon, state, sock)  # creates the journal: its id and the first snapshot
        fill(state, changes, 10_000)
        starts = [start(daemon, state, sock, expect_seq=changes) for _ in range(3)]
        process = serving(daemon, state, sock)
        try:
            middle = max(1, changes // 2)
            reads = []
            for _ in range(3):
                began = time.monotonic()
                reply = call(sock, "io.switchyard.Store.Get", {"path": "/primes/count", "at": middle})
                reads.append((time.monotonic() - began) * 1000)
                assert reply["parameters"]["state"] == middle, reply
        finally:
            process.kill()
            process.wait()
        size = sum(os.path.getsize(os.path.join(state, f)) for f in os.listdir(state) if f.startswith("journal.sqlite"))
        shutil.rmtree(state)
        print(f"changes={changes} start_ms={statistics.median(starts):.1f} "
              f"get_at_middle_ms={statistics.median(reads):.1f} journal_bytes={size}", flush=True)


if __name__ == "__main__":
    main()
