"""Clients that ride through restarts of switchyard.service (issue 34), run in the container.

    python3 handover_clients.py SOCKET restart RESTARTS SENDERS SUBSCRIBERS [UPGRADE_BIN CONFIG]
    python3 handover_clients.py SOCKET reexecute ROUNDS SENDERS SUBSCRIBERS
    python3 handover_clients.py SOCKET crash ROUNDS SENDERS SUBSCRIBERS

`restart`: SENDERS connections pipeline Sends across each `systemctl restart` while SUBSCRIBERS
follow /primes/count; every call is answered, no connection drops, and every subscriber's
sequence is contiguous with no snapshot after its first. With UPGRADE_BIN, the restarts alternate
the unit's binary between UPGRADE_BIN and its own (a drop-in's ExecStart=): an upgrade, then a
downgrade. `reexecute`: the same load across `systemctl kill -s SIGUSR2 --kill-whom=main`, which
runs the daemon's executable again in its process: the unit's main PID and NRestarts stay the
same, and the unit is active again after each. `crash`: ROUNDS kill -9 under the same load (Restart=on-failure): every connection
is ended within 5 s of the kill, as the README promises, and its client reconnects; senders
lose no acknowledged Send; subscribers resume with `since` and see every change once, in order.
Prints one line per finding; exits 1 on the first failure.
"""

import json
import os
import socket
import subprocess
import sys
import threading
import time

SERVICE = "switchyard.service"
UPGRADE_DROPIN = "/run/systemd/system/switchyard.service.d/50-upgrade.conf"

PER_RESTART = 10
INCR = {"counter": {"incrTapped": {}}}


class Connection:
    def __init__(self, path, timeout=30):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""

    def send(self, method, parameters, **flags):
        message = {"method": f"io.switchyard.Store.{method}", "parameters": parameters, **flags}
        self.sock.sendall(json.dumps(message).encode() + b"\0")

    def read(self):
        while b"\0" not in self.buffer:
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                return None
            if not chunk:
                return None
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)


def fail(text):
    print(f"FAIL {text}")
    sys.stdout.flush()
    os._exit(1)


def main_pid():
    out = subprocess.run(["systemctl", "show", "-P", "MainPID", SERVICE], capture_output=True, text=True, timeout=30)
    return int(out.stdout.strip() or 0)


def run_binary(binary, config):
    """The next start of the unit runs `binary` (None: the unit's own ExecStart=)."""
    if binary is None:
        if os.path.exists(UPGRADE_DROPIN):
            os.unlink(UPGRADE_DROPIN)
    else:
        os.makedirs(os.path.dirname(UPGRADE_DROPIN), exist_ok=True)
        with open(UPGRADE_DROPIN, "w") as f:
            f.write(f"[Service]\nExecStart=\nExecStart={binary} --config {config}\n")
    subprocess.run(["systemctl", "daemon-reload"], check=True, timeout=60)


def binary_version(binary):
    return subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60, check=True).stdout.strip()


def served_version(path):
    """What the daemon on `path` says its version is (org.varlink.service.GetInfo)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(path)
        sock.sendall(json.dumps({"method": "org.varlink.service.GetInfo"}).encode() + b"\0")
        reply = b""
        while not reply.endswith(b"\0"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            reply += chunk
    return json.loads(reply.rstrip(b"\0"))["parameters"]["version"]


def unit_property(name):
    return subprocess.run(["systemctl", "show", "-P", name, SERVICE], capture_output=True, text=True, timeout=30).stdout.strip()


def reexecute(path, rounds, senders, subscribers):
    pid, restarts = main_pid(), unit_property("NRestarts")

    def by_signal(number):
        subprocess.run(["systemctl", "kill", "--kill-whom=main", "-s", "SIGUSR2", SERVICE], check=True, timeout=30)

    def after(number):
        if (main_pid(), unit_property("NRestarts")) != (pid, restarts):
            fail(f"SIGUSR2 {number}: MainPID {main_pid()} (was {pid}), NRestarts {unit_property('NRestarts')} (was {restarts})")
        end = time.monotonic() + 30
        while unit_property("ActiveState") != "active":
            if time.monotonic() > end:
                fail(f"SIGUSR2 {number}: the unit is {unit_property('ActiveState')}, not active again")
            time.sleep(0.05)

    restart(path, rounds, senders, subscribers, how=(by_signal, after, "SIGUSR2 (main PID kept)"))


def restart(path, restarts, senders, subscribers, upgrade=None, config=None, how=None):
    original = os.readlink(f"/proc/{main_pid()}/exe") if upgrade else None
    # An upgrade is to a build that says another version: the same binary would prove nothing.
    versions = {binary: binary_version(binary) for binary in (upgrade, original) if binary}
    if upgrade and versions[upgrade] == versions[original]:
        fail(f"{upgrade} and {original} are the same version ({versions[upgrade]}): no upgrade to test")
    subs = []
    for _ in range(subscribers):
        sub = Connection(path, timeout=120)
        sub.send("Subscribe", {"path": "/primes/count"}, more=True)
        first = sub.read()
        if first is None or "state" not in first.get("parameters", {}):
            fail(f"no snapshot: {first}")
        subs.append((sub, [first["parameters"]["seq"]]))
    # Each subscriber reads as the changes come, as a client does: one that did not would fill its
    # socket and hold the handover up.
    total = restarts * senders * PER_RESTART
    problems = [None] * len(subs)

    def follow(index):
        sub, seqs = subs[index]
        while len(seqs) < total + 1:
            reply = sub.read()
            if reply is None:
                problems[index] = f"dropped after {len(seqs)} replies"
                return
            if "seq" not in reply.get("parameters", {}):
                problems[index] = f"not a change: {reply}"
                return
            if "state" in reply.get("parameters", {}):
                problems[index] = f"a snapshot after its first: {reply}"
                return
            seqs.append(reply["parameters"]["seq"])

    readers = [threading.Thread(target=follow, args=(index,), daemon=True) for index in range(len(subs))]
    for thread in readers:
        thread.start()
    clients = [Connection(path) for _ in range(senders)]
    pauses = []
    for number in range(restarts):
        for client in clients:
            for _ in range(PER_RESTART):
                client.send("Send", {"action": INCR})
        expected = None
        if upgrade:
            expected = upgrade if number % 2 == 0 else original
            run_binary(upgrade if number % 2 == 0 else None, config)
        started = time.monotonic()
        if how:
            how[0](number)
        else:
            subprocess.run(["systemctl", "restart", SERVICE], check=True, timeout=60)
        pauses.append(time.monotonic() - started)
        if expected and os.readlink(f"/proc/{main_pid()}/exe") != expected:
            fail(f"restart {number}: the new process runs {os.readlink(f'/proc/{main_pid()}/exe')}, not {expected}")
        if expected and served_version(path) != versions[expected]:
            fail(f"restart {number}: GetInfo says version {served_version(path)}, not {expected}'s {versions[expected]}")
        # Restarts in a row would reach StartLimitBurst=: what is tested is the handover.
        subprocess.run(["systemctl", "reset-failed", "switchyard.service"], check=False, timeout=30)
        for index, client in enumerate(clients):
            for call in range(PER_RESTART):
                reply = client.read()
                if reply is None or "error" in reply:
                    fail(f"restart {number}: sender {index} call {call}: {reply}")
        if how:
            how[1](number)
    for thread in readers:
        thread.join(timeout=120)
    for index, (sub, seqs) in enumerate(subs):
        if problems[index]:
            fail(f"subscriber {index}: {problems[index]}")
        if len(seqs) < total + 1:
            fail(f"subscriber {index} got {len(seqs)} replies, not {total + 1}")
        if seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            fail(f"subscriber {index}: not contiguous: {seqs}")
    binaries = f", the binary alternating with {upgrade}" if upgrade else ""
    print(
        f"PASS {restarts} {'restarts' if not how else how[2]}{binaries}, {senders} senders x {PER_RESTART} pipelined calls "
        f"each: all answered; {subscribers} subscribers contiguous over {total} changes"
        + ("" if how else f"; systemctl restart took {min(pauses):.2f}-{max(pauses):.2f} s")
    )


ENDED_WITHIN = 5.0


def connect_when_back(path, deadline=60):
    """A connection once the socket takes one (systemd's socket holds it while the unit restarts)."""
    end = time.monotonic() + deadline
    while True:
        try:
            return Connection(path)
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.1)


class Client(threading.Thread):
    """One connection, reconnected whenever it ends; `ends` are when each of its connections ended."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.ends = []
        self.connected_at = 0.0
        self.progress = 0
        self.stopping = False
        self.problem = None

    def run(self):
        try:
            while not self.stopping:
                conn = connect_when_back(self.path)
                self.connected_at = time.monotonic()
                self.serve(conn)
                conn.sock.close()
        except Exception as error:  # a failure of the test itself is a finding too
            self.problem = self.problem or f"{type(error).__name__}: {error}"

    def ended(self):
        self.ends.append(time.monotonic())


class Sender(Client):
    """Pipelines bursts of Sends; a reply is an acknowledgement, a call left unanswered is unknown."""

    def __init__(self, path):
        super().__init__(path)
        self.sent = 0
        self.acknowledged = 0

    def serve(self, conn):
        while not self.stopping:
            for _ in range(PER_RESTART):
                conn.send("Send", {"action": INCR})
            self.sent += PER_RESTART
            for _ in range(PER_RESTART):
                reply = conn.read()
                if reply is None:
                    return self.ended()
                if "error" in reply:
                    self.problem = self.problem or f"an error reply: {reply}"
                    return
                self.acknowledged += 1
                self.progress += 1


class Follower(Client):
    """Follows /primes/count; after its connection ends, subscribes again with `since` and `history`."""

    def __init__(self, path):
        super().__init__(path)
        self.seqs = []
        self.history = None

    def serve(self, conn):
        parameters = {"path": "/primes/count"}
        if self.seqs:
            parameters.update(since=self.seqs[-1], history=self.history)
        conn.send("Subscribe", parameters, more=True)
        first = True
        while True:
            reply = conn.read()
            if reply is None:
                return self.ended()
            values = reply.get("parameters", {})
            if "seq" not in values:
                self.problem = self.problem or f"not a change: {reply}"
                return
            if "state" in values and self.seqs:
                self.problem = self.problem or f"a snapshot after resuming with since={self.seqs[-1]}: {reply}"
                return
            if first and "history" in values:
                self.history = values["history"]
            first = False
            self.seqs.append(values["seq"])
            self.progress += 1


def current_count(path):
    conn = connect_when_back(path)
    conn.send("Get", {"path": "/primes/count"})
    reply = conn.read()
    conn.sock.close()
    if reply is None or "error" in reply:
        fail(f"Get /primes/count: {reply}")
    return reply["parameters"]["state"]


def crash(path, rounds, senders, subscribers):
    before = current_count(path)
    followers = [Follower(path) for _ in range(subscribers)]
    clients = [Sender(path) for _ in range(senders)]
    everyone = followers + clients
    for client in everyone:
        client.start()
    worst = 0.0
    for number in range(rounds):
        # Under load: every connection made progress since it (re)connected.
        marks = [client.progress for client in everyone]
        deadline = time.monotonic() + 60
        while any(c.progress <= m or not c.connected_at for c, m in zip(everyone, marks)):
            if time.monotonic() > deadline:
                fail(f"round {number}: the clients made no progress after the last restart")
            time.sleep(0.05)
        killed = time.monotonic()
        subprocess.run(["systemctl", "kill", "-s", "KILL", SERVICE], check=True, timeout=30)
        # Every connection open at the kill is ended (and its client reconnects) within 5 s.
        while time.monotonic() < killed + ENDED_WITHIN + 1 and any(not [e for e in c.ends if e >= killed] for c in everyone):
            time.sleep(0.05)
        for index, client in enumerate(everyone):
            ends = [e for e in client.ends if e >= killed]
            if not ends:
                fail(f"round {number}: client {index} still waits {ENDED_WITHIN} s after the kill, neither served nor ended")
            worst = max(worst, ends[0] - killed)
            if ends[0] - killed > ENDED_WITHIN:
                fail(f"round {number}: client {index}'s connection ended {ends[0] - killed:.1f} s after the kill")
        # Restart=on-failure restarts it; five starts in a row would reach StartLimitBurst=.
        subprocess.run(["systemctl", "reset-failed", SERVICE], check=False, timeout=30)
    for client in clients:
        client.stopping = True
    for client in clients:
        client.join(timeout=60)
    after = current_count(path)
    deadline = time.monotonic() + 60
    while any(not f.seqs or f.seqs[-1] < after for f in followers) and time.monotonic() < deadline:
        time.sleep(0.05)
    for index, client in enumerate(everyone):
        if client.problem:
            fail(f"client {index}: {client.problem}")
    sent = sum(c.sent for c in clients)
    acknowledged = sum(c.acknowledged for c in clients)
    if not acknowledged <= after - before <= sent:
        fail(f"{acknowledged} Sends acknowledged and {sent} sent, but the count went from {before} to {after}")
    for index, follower in enumerate(followers):
        seqs = follower.seqs
        if not seqs or seqs[-1] < after or seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            fail(f"subscriber {index}: not every change once, in order, up to {after}: {seqs}")
    print(
        f"PASS {rounds} x kill -9 under load ({senders} senders pipelining, {subscribers} subscribers): every connection "
        f"ended within {worst:.1f} s of the kill and its client reconnected; {acknowledged} Sends acknowledged of {sent}, "
        f"the count rose {after - before}; every subscriber resumed with since, no snapshot, no gap, no duplicate"
    )


if __name__ == "__main__":
    if sys.argv[2] == "restart":
        restart(sys.argv[1], *map(int, sys.argv[3:6]), *sys.argv[6:8])
    elif sys.argv[2] == "reexecute":
        reexecute(sys.argv[1], *map(int, sys.argv[3:6]))
    else:
        crash(sys.argv[1], *map(int, sys.argv[3:6]))
