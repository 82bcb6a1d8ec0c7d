"""The measurements of Benchmarks/Cluster/run.sh, and its table: strict Sends on the PostgreSQL
journal and on SQLite (the load tool), a standby's lag under pipelined Sends, failover over
rounds of kill -9, and etcd for scale. PostgreSQL and etcd are already running; the daemons are
started here, `primes` in an actor as in Benchmarks/Peers, the lease at its default."""

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time

INCREMENT = {"action": {"counter": {"incrTapped": {}}}}
DEPTH = 16


class Connection:
    """Varlink over a Unix socket: NUL-framed JSON."""

    def __init__(self, path, timeout=10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""

    def send(self, method, parameters=None, more=False):
        message = {"method": f"io.switchyard.Store.{method}", "parameters": parameters or {}}
        if more:
            message["more"] = True
        self.sock.sendall(json.dumps(message).encode() + b"\0")

    def read(self):
        while b"\0" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("closed")
            self.buffer += chunk
        text, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(text)

    def call(self, method, parameters=None):
        self.send(method, parameters)
        return self.read()

    def close(self):
        self.sock.close()


class Member:
    """A switchyardd on the PostgreSQL journal: leader or standby, as the lease decides."""

    def __init__(self, arguments, name):
        self.arguments, self.name = arguments, name
        self.socket = os.path.join(arguments.folder, f"{name}.sock")
        self.process = None

    def start(self):
        environment = {
            "PATH": "/usr/bin:/bin", "SWITCHYARD_FEATURES_PRIMES_ISOLATION": "actor", "SWITCHYARD_LOG_LEVEL": "notice",
            "SWITCHYARD_DURABILITY_MODE": "strict", "SWITCHYARD_JOURNAL_ENGINE": "postgresql",
            "SWITCHYARD_JOURNAL_POSTGRESQL": self.arguments.database, "SWITCHYARD_JOURNAL_LEASE_HOLDER": self.name,
            "SWITCHYARD_JOURNAL_ADVERTISE": f"unix:{self.socket}",
            "SWITCHYARD_STATE_DIRECTORY": os.path.join(self.arguments.folder, f"state-{self.name}"),
        }
        log = open(os.path.join(self.arguments.folder, f"{self.name}.log"), "ab")
        self.process = subprocess.Popen([self.arguments.daemon, "--socket", self.socket], env=environment,
                                        stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        wait_for_socket(self.socket, self.process)

    def role(self):
        try:
            connection = Connection(self.socket, timeout=2)
            try:
                return connection.call("Status").get("parameters", {}).get("cluster", {}).get("role")
            finally:
                connection.close()
        except (OSError, ValueError):
            return None

    def kill(self):
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def wait_for_socket(path, process, limit=60):
    deadline = time.monotonic() + limit
    while True:
        if process.poll() is not None:
            raise SystemExit(f"the daemon on {path} exited with {process.returncode}")
        try:
            Connection(path, timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"nothing answered on {path}")
            time.sleep(0.02)


def wait_for_role(member, role, limit=60):
    deadline = time.monotonic() + limit
    while member.role() != role:
        if time.monotonic() > deadline:
            raise SystemExit(f"{member.name} never became the {role}")
        time.sleep(0.05)


def load(arguments, *command):
    """The load tool's one line of key=value figures."""
    line = subprocess.run([arguments.loadgen, *map(str, command)], check=True, capture_output=True, text=True).stdout
    return {key: float(value) for key, value in (pair.split("=") for pair in line.split())}


def send_and_subscribe(leader, standby, count):
    """Pipelines `count` Sends to the leader, DEPTH in flight, while a subscriber follows the
    standby: how long after the leader's reply each change reached the standby's subscriber."""
    arrived, replied = {}, {}
    ready = threading.Event()

    def follow():
        connection = Connection(standby.socket)
        connection.send("Subscribe", {"path": "/primes/count"}, more=True)
        while True:
            update = connection.read()
            if "error" in update:
                raise SystemExit(f"the standby ended the subscription: {update}")
            arrived.setdefault(update["parameters"]["seq"], time.monotonic())
            ready.set()
            if len(replied) == count and max(replied) in arrived:
                return

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    ready.wait(10)
    connection = Connection(leader.socket)
    sent = in_flight = 0
    while len(replied) < count:
        while in_flight < DEPTH and sent < count:
            connection.send("Send", INCREMENT)
            sent, in_flight = sent + 1, in_flight + 1
        reply = connection.read()
        in_flight -= 1
        if "error" in reply:
            raise SystemExit(f"the leader refused a Send: {reply}")
        replied[reply["parameters"]["seq"]] = time.monotonic()
    connection.close()
    follower.join(30)
    return [(arrived[seq] - when) * 1000 for seq, when in replied.items() if seq in arrived]


def first_acknowledged(member, limit=60):
    """The time the first Send `member` acknowledges is answered, trying every 10 ms."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            connection = Connection(member.socket, timeout=2)
            try:
                if "error" not in connection.call("Send", INCREMENT):
                    return time.monotonic()
            finally:
                connection.close()
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    raise SystemExit(f"{member.name} acknowledged nothing within {limit} s")


def failovers(members, rounds):
    """Kill -9 the leader at a random point of its lease's renewal; time to the first Send the
    other acknowledges; the killed one started again as the standby."""
    times = []
    leader, standby = members
    for _ in range(rounds):
        time.sleep(random.uniform(0.3, 1.3))
        gone = time.monotonic()
        leader.kill()
        times.append(first_acknowledged(standby) - gone)
        leader.start()
        wait_for_role(leader, "standby")
        leader, standby = standby, leader
    return times


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser()
    for name in ("daemon", "loadgen", "folder", "database", "etcd"):
        parser.add_argument(f"--{name}", required=True)
    for name in ("n", "etcd-n", "rounds"):
        parser.add_argument(f"--{name}", type=int, required=True)
    arguments = parser.parse_args()

    members = [Member(arguments, "node-a"), Member(arguments, "node-b")]
    sqlite = None
    try:
        members[0].start()
        wait_for_role(members[0], "leader")
        members[1].start()
        wait_for_role(members[1], "standby")
        sqlite_socket = os.path.join(arguments.folder, "sqlite.sock")
        sqlite = subprocess.Popen(
            [arguments.daemon, "--socket", sqlite_socket],
            env={"PATH": "/usr/bin:/bin", "SWITCHYARD_FEATURES_PRIMES_ISOLATION": "actor", "SWITCHYARD_LOG_LEVEL": "warning",
                 "SWITCHYARD_DURABILITY_MODE": "strict", "SWITCHYARD_STATE_DIRECTORY": os.path.join(arguments.folder, "state-sqlite")},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_for_socket(sqlite_socket, sqlite)
        n, etcd_n = arguments.n, arguments.etcd_n
        figures = {
            "postgresql": (load(arguments, "pingpong", "switchyard", members[0].socket, n),
                           load(arguments, "pipeline", "switchyard", members[0].socket, n * 5, DEPTH)),
            "sqlite": (load(arguments, "pingpong", "switchyard", sqlite_socket, n),
                       load(arguments, "pipeline", "switchyard", sqlite_socket, n * 5, DEPTH)),
            "etcd": (load(arguments, "pingpong", "etcd", arguments.etcd, etcd_n),
                     load(arguments, "concurrent", "etcd", arguments.etcd, etcd_n * 4, DEPTH)),
        }
        lags = send_and_subscribe(members[0], members[1], n * 5)
        times = failovers(members, arguments.rounds)
    except BaseException:
        for member in members:
            print(f"--- {member.name}'s log, its end:", file=sys.stderr)
            with open(os.path.join(arguments.folder, f"{member.name}.log"), "rb") as log:
                print(log.read()[-4000:].decode(errors="replace"), file=sys.stderr)
        raise
    finally:
        for member in members:
            member.kill()
        if sqlite is not None:
            sqlite.terminate()
            sqlite.wait()

    labels = {
        "postgresql": "Switchyard `strict`, PostgreSQL journal (a standby following)",
        "sqlite": "Switchyard `strict`, SQLite journal",
        "etcd": "etcd 3.4 put, one node (JSON gateway; 16 connections for 16 in flight)",
    }
    print("\n| Strict write | ping-pong p50 (µs) | ping-pong p99 (µs) | 16 in flight (/s) |\n|---|---:|---:|---:|")
    for system, (pingpong, inflight) in figures.items():
        print(f"| {labels[system]} | {pingpong['p50_us']:,.0f} | {pingpong['p99_us']:,.0f} | {inflight['rate']:,.0f} |")
    ratio = lambda a, b, kind, key: figures[a][kind][key] / figures[b][kind][key]
    print("\n| Ratio | |\n|---|---:|")
    print(f"| PostgreSQL / SQLite, ping-pong p50 | {ratio('postgresql', 'sqlite', 0, 'p50_us'):.2f}x |")
    print(f"| PostgreSQL / SQLite, 16 in flight | {ratio('postgresql', 'sqlite', 1, 'rate'):.2f}x |")
    print(f"| PostgreSQL / etcd, ping-pong p50 | {ratio('postgresql', 'etcd', 0, 'p50_us'):.2f}x |")
    print(f"| PostgreSQL / etcd, 16 in flight | {ratio('postgresql', 'etcd', 1, 'rate'):.2f}x |")
    print(f"\nStandby lag under {DEPTH} in flight (the standby's subscriber − the leader's reply, {len(lags)} changes): "
          f"p50 {statistics.median(lags):.1f} ms, p99 {percentile(lags, 0.99):.1f} ms")
    p99 = percentile(times, 0.99)
    print(f"Failover over {len(times)} rounds (kill -9 → the first Send the next leader acknowledges, default lease): "
          f"p50 {statistics.median(times) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, max {max(times) * 1000:.0f} ms; "
          f"goal ≤ 3 s: {'met' if p99 <= 3 else 'not met'}")


if __name__ == "__main__":
    main()
