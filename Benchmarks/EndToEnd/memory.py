"""What connections and subscribers cost a running switchyardd in memory.

Reads the daemon's resident set (VmRSS, /proc/PID/status) idle, then with IDLE connections open
that send nothing, then with SUBSCRIBERS connections more, each following the whole state
(`io.switchyard.Store.Subscribe` with `more`, its first reply read). The daemon must allow
IDLE + SUBSCRIBERS + 1 connections (`SWITCHYARD_LIMITS_MAX_CONNECTIONS`) and have the
descriptors for them.

usage: memory.py SOCKET PID IDLE SUBSCRIBERS
Prints `idle_kib=… connections=… connections_kib=… per_connection_bytes=… subscribers=…
subscribers_kib=… per_subscriber_bytes=… total_above_idle_mib=…`.
"""

import json
import resource
import socket
import sys
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def settled_rss_kib(pid):
    """The resident set once it stops moving: connections are accepted asynchronously."""
    previous = -1
    for _ in range(50):
        time.sleep(0.2)
        current = rss_kib(pid)
        if current == previous:
            return current
        previous = current
    return previous


def connect(path):
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    return connection


def read_frame(connection):
    pending = b""
    while b"\0" not in pending:
        chunk = connection.recv(1 << 20)
        if not chunk:
            raise RuntimeError("the daemon closed a subscriber")
        pending += chunk
    return json.loads(pending.split(b"\0", 1)[0])


def main():
    path, pid, idle, subscribers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, idle + subscribers + 64), hard))

    before = settled_rss_kib(pid)
    held = [connect(path) for _ in range(idle)]
    with_idle = settled_rss_kib(pid)

    subscribe = json.dumps(
        {"method": "io.switchyard.Store.Subscribe", "parameters": {"path": ""}, "more": True}
    ).encode() + b"\0"
    for _ in range(subscribers):
        connection = connect(path)
        connection.sendall(subscribe)
        reply = read_frame(connection)
        if "error" in reply:
            raise RuntimeError(f"Subscribe failed: {reply}")
        held.append(connection)
    with_subscribers = settled_rss_kib(pid)

    connections_kib = with_idle - before
    subscribers_kib = with_subscribers - with_idle
    print(
        f"idle_kib={before} connections={idle} connections_kib={connections_kib} "
        f"per_connection_bytes={connections_kib * 1024 // max(idle, 1)} subscribers={subscribers} "
        f"subscribers_kib={subscribers_kib} per_subscriber_bytes={subscribers_kib * 1024 // max(subscribers, 1)} "
        f"total_above_idle_mib={(with_subscribers - before) / 1024:.1f}"
    )
    for connection in held:
        connection.close()


if __name__ == "__main__":
    main()
