#!/usr/bin/env python3
"""How a feature's state size costs a change to one element of it: for each size, PrimeTime's
`primes` state holding that many favorite primes (written into the journal's first snapshot,
the schema the daemon reads), then `Send counter.incrTapped` (the count, one element beside
the favorites) 16 in flight and one at a time, through the load tool, with the journal `off`.

    state_scale.py DAEMON LOADGEN DIRECTORY N SIZE...

Prints one line per size: `elements=… rate=… pingpong_p50_us=… pingpong_p99_us=…`, medians of
three rounds of N pipelined sends and N/10 round trips.
"""
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "EndToEnd"))
from recovery import call, start  # noqa: E402
from journal_scale import serving  # noqa: E402


def with_favorites(state, elements):
    """The journal's first snapshot, with `elements` favorite primes in the primes feature."""
    db = sqlite3.connect(os.path.join(state, "journal.sqlite"))
    snapshot = json.loads(db.execute("SELECT state FROM snapshot WHERE seq = 0").fetchone()[0])
    snapshot["primes"]["favoritePrimes"] = list(range(elements))
    with db:
        db.execute("UPDATE snapshot SET state = ? WHERE seq = 0", (json.dumps(snapshot, separators=(",", ":")).encode(),))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def figures(line):
    return dict(word.split("=") for word in line.split() if "=" in word)


def main():
    daemon, loadgen, directory, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    sizes = [int(word) for word in sys.argv[5:]]
    sock = os.path.join(directory, "state.sock")
    os.environ["SWITCHYARD_DURABILITY_MODE"] = "off"
    for elements in sizes:
        state = os.path.join(directory, f"state-{elements}")
        start(daemon, state, sock)  # creates the journal and its first snapshot
        with_favorites(state, elements)
        process = serving(daemon, state, sock)
        try:
            last = call(sock, "io.switchyard.Store.Get", {"path": f"/primes/favoritePrimes/{elements - 1}"})
            assert last["parameters"]["state"] == elements - 1, last
            rates, p50s, p99s = [], [], []
            for _ in range(3):
                pipelined = figures(subprocess.check_output([loadgen, "pipeline", "switchyard", sock, str(n), "16"], text=True))
                pingpong = figures(subprocess.check_output([loadgen, "pingpong", "switchyard", sock, str(max(100, n // 10))], text=True))
                rates.append(float(pipelined["rate"]))
                p50s.append(float(pingpong["p50_us"]))
                p99s.append(float(pingpong["p99_us"]))
        finally:
            process.kill()
            process.wait()
        shutil.rmtree(state)
        print(f"elements={elements} rate={statistics.median(rates):.0f} pingpong_p50_us={statistics.median(p50s):.1f} "
              f"pingpong_p99_us={statistics.median(p99s):.1f}", flush=True)


if __name__ == "__main__":
    main()
