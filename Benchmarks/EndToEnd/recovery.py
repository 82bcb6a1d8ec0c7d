#!/usr/bin/env python3
"""Start to serving: how long switchyardd takes from exec until its socket answers, with an
empty journal and with a journal of many changes.

    recovery.py DAEMON DIRECTORY CHANGES

Prints `empty_ms=… full_ms=… replay_ms=… changes=…`: the median of five starts each
- with a new, empty state directory;
- with CHANGES journaled changes and a snapshot every 10,000 of them (what the daemon writes
  with its defaults), so a start replays what follows the latest snapshot;
- with the same changes and no snapshot but the first: the worst case, every change replayed.
A start ends with SIGKILL, so that no snapshot is written on the way out and each start
recovers the same journal.
"""
import json
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import time


def call(path, method, parameters=None):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path)
        s.sendall(json.dumps({"method": method, "parameters": parameters or {}}).encode() + b"\0")
        data = b""
        while not data.endswith(b"\0"):
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError("closed")
            data += chunk
        return json.loads(data[:-1])


def start(daemon, state, sock, expect_seq=None):
    """Milliseconds from exec until the socket accepts; the daemon is then killed."""
    if os.path.exists(sock):
        os.unlink(sock)
    env = dict(os.environ, SWITCHYARD_LOG_LEVEL="warning", SWITCHYARD_FEATURES_PRIMES_ISOLATION="actor")
    began = time.monotonic()
    process = subprocess.Popen([daemon, "--socket", sock, "--state-directory", state], env=env)
    try:
        while True:
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(sock)
                break
            except OSError:
                if process.poll() is not None:
                    raise RuntimeError(f"the daemon exited with {process.returncode}")
                time.sleep(0.0005)
        elapsed = (time.monotonic() - began) * 1000
        if expect_seq is not None:
            seq = call(sock, "io.switchyard.Store.Get", {"path": "/primes/count"})["parameters"]["seq"]
            assert seq == expect_seq, (seq, expect_seq)
        return elapsed
    finally:
        process.kill()
        process.wait()


def fill(state, changes, snapshot_every):
    """Journals `changes` increments of /primes/count after the journal's first snapshot."""
    db = sqlite3.connect(os.path.join(state, "journal.sqlite"))
    initial = json.loads(db.execute("SELECT state FROM snapshot WHERE seq = 0").fetchone()[0])
    with db:
        rows = ((seq, json.dumps([{"op": "replace", "path": "/primes/count", "value": seq}], separators=(",", ":")).encode(), 1.7e9 + seq)
                for seq in range(1, changes + 1))
        db.executemany("INSERT INTO change (seq, patch, time) VALUES (?, ?, ?)", rows)
        if snapshot_every:
            for seq in range(snapshot_every, changes + 1, snapshot_every):
                initial["primes"]["count"] = seq
                db.execute("INSERT INTO snapshot (seq, state) VALUES (?, ?)", (seq, json.dumps(initial, separators=(",", ":")).encode()))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def main():
    daemon, directory, changes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sock = os.path.join(directory, "recovery.sock")
    results = {}
    empty = []
    for run in range(5):
        state = os.path.join(directory, f"empty-{run}")
        empty.append(start(daemon, state, sock, expect_seq=0))
        shutil.rmtree(state)
    results["empty_ms"] = statistics.median(empty)
    for name, every in (("full_ms", 10_000), ("replay_ms", 0)):
        state = os.path.join(directory, name)
        start(daemon, state, sock)  # creates the journal: its id and the first snapshot
        fill(state, changes, every)
        results[name] = statistics.median(start(daemon, state, sock, expect_seq=changes) for _ in range(5))
        results[name.replace("_ms", "_journal_bytes")] = sum(
            os.path.getsize(os.path.join(state, f)) for f in os.listdir(state) if f.startswith("journal.sqlite"))
        shutil.rmtree(state)
    results["changes"] = changes
    print(" ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in results.items()))


if __name__ == "__main__":
    main()
