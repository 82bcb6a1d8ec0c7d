"""Worker restart time: kill -9 the primes worker of a running switchyardd, again and again, and
measure from the kill to the moment Status shows a new worker running (what a client sees).

usage: restarts.py SOCKET COUNT INTERVAL_SECONDS
Prints `n=… min_ms=… p50_ms=… p90_ms=… p99_ms=… max_ms=… daemon_p50_ms=…`.
"""

import json
import os
import signal
import socket
import sys
import time


def main():
    path, count, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    pending = b""

    def primes_worker():
        nonlocal pending
        connection.sendall(json.dumps({"method": "io.switchyard.Store.Status", "parameters": {}}).encode() + b"\0")
        while b"\0" not in pending:
            pending += connection.recv(65536)
        message, pending = pending.split(b"\0", 1)
        workers = json.loads(message)["parameters"]["workers"]
        return next(w for w in workers if w["feature"] == "primes")

    seen, reported = [], []
    for _ in range(count):
        time.sleep(interval)
        old = primes_worker()["pid"]
        os.kill(old, signal.SIGKILL)
        killed = time.monotonic()
        while True:
            worker = primes_worker()
            if worker.get("pid") not in (None, old) and worker["state"] == "running":
                break
        seen.append((time.monotonic() - killed) * 1000)
        reported.append(worker.get("lastRestartMilliseconds", 0))
    seen.sort()
    reported.sort()

    def at(values, q):
        return values[min(len(values) - 1, int(len(values) * q))]

    print(
        f"n={len(seen)} min_ms={seen[0]:.1f} p50_ms={at(seen, 0.5):.1f} p90_ms={at(seen, 0.9):.1f} "
        f"p99_ms={at(seen, 0.99):.1f} max_ms={seen[-1]:.1f} daemon_p50_ms={at(reported, 0.5):.1f}"
    )


main()
