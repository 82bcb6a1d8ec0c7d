"""Clients that ride through restarts of switchyard.service (issue 34), run in the container.

    python3 handover_clients.py SOCKET restart RESTARTS SENDERS SUBSCRIBERS
    python3 handover_clients.py SOCKET crash

`restart`: SENDERS connections pipeline Sends across each `systemctl restart` while SUBSCRIBERS
follow /primes/count; every call is answered, no connection drops, and every subscriber's
sequence is contiguous with no snapshot after its first. `crash`: after a kill -9 (and
Restart=on-failure) every connection is ended within 5 s, none left waiting.
Prints one line per finding; exits 1 on the first failure.
"""

import json
import socket
import subprocess
import sys
import threading
import time

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
    sys.exit(1)


def restart(path, restarts, senders, subscribers):
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
        started = time.monotonic()
        subprocess.run(["systemctl", "restart", "switchyard.service"], check=True, timeout=60)
        pauses.append(time.monotonic() - started)
        # Restarts in a row would reach StartLimitBurst=: what is tested is the handover.
        subprocess.run(["systemctl", "reset-failed", "switchyard.service"], check=False, timeout=30)
        for index, client in enumerate(clients):
            for call in range(PER_RESTART):
                reply = client.read()
                if reply is None or "error" in reply:
                    fail(f"restart {number}: sender {index} call {call}: {reply}")
    for thread in readers:
        thread.join(timeout=120)
    for index, (sub, seqs) in enumerate(subs):
        if problems[index]:
            fail(f"subscriber {index}: {problems[index]}")
        if len(seqs) < total + 1:
            fail(f"subscriber {index} got {len(seqs)} replies, not {total + 1}")
        if seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            fail(f"subscriber {index}: not contiguous: {seqs}")
    print(
        f"PASS {restarts} restarts, {senders} senders x {PER_RESTART} pipelined calls each: all answered; "
        f"{subscribers} subscribers contiguous over {total} changes; systemctl restart took "
        f"{min(pauses):.2f}-{max(pauses):.2f} s"
    )


def crash(path):
    sub = Connection(path)
    sub.send("Subscribe", {"path": "/primes/count"}, more=True)
    if sub.read() is None:
        fail("no snapshot")
    sender = Connection(path)
    sender.send("Send", {"action": INCR})
    if sender.read() is None:
        fail("no reply to Send")
    sub.read()
    subprocess.run(["systemctl", "kill", "-s", "KILL", "switchyard.service"], check=True, timeout=30)
    started = time.monotonic()
    for name, conn in (("subscriber", sub), ("sender", sender)):
        conn.sock.settimeout(max(0.1, 15 - (time.monotonic() - started)))
        reply = conn.read()
        if reply is not None:
            fail(f"the {name} got {reply} instead of the end of its connection")
    elapsed = time.monotonic() - started
    if elapsed > 15:
        fail(f"the connections were ended only after {elapsed:.1f} s")
    print(f"PASS after kill -9 both connections were ended within {elapsed:.1f} s (the restart included)")


if __name__ == "__main__":
    if sys.argv[2] == "restart":
        restart(sys.argv[1], *map(int, sys.argv[3:6]))
    else:
        crash(sys.argv[1])
