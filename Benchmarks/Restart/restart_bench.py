"""How long a restart through systemd's file descriptor store pauses serving, seen by its clients.

    SWITCHYARDD=… python3 restart_bench.py RESTARTS CONNECTIONS SUBSCRIBERS

CONNECTIONS clients each keep one call in flight (Get, read-only, so that replies are dense and
the subscribers' traffic stays small), one more sends TICKS changes a second, and SUBSCRIBERS
follow the path it changes. The daemon is restarted RESTARTS times by the test's stand-in for
systemd (Tests/Python/fdstore.py), or, with SYSTEMD_UNIT set (inside `make bench-restart-systemd`'s
container), by `systemctl restart` of that unit, whose socket is at SOCKET. With REEXECUTE=1 each
restart is a SIGUSR2 instead: the daemon runs its executable again in its own process, with the
connections handed over (under systemd, `systemctl kill -s SIGUSR2 --kill-whom=main`). The pause of a restart
is the longest time in which no client got a reply, around it: from the old process's last reply
to the new one's first, as the clients saw them. Prints the pause's p50/p99/max and what the
clients saw (errors, connections that ended and were made again, gaps, duplicates and snapshots
in the subscriptions); writes the figures to .build-bench/restart.json (under OUT when set).
"""

import json
import os
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "Python"))
from fdstore import FdStoreManager  # noqa: E402


class SystemdUnit:
    """The part the stand-in plays, played by systemd itself: `unit` was installed with its socket
    unit and a file descriptor store large enough for every client."""

    def __init__(self, unit):
        self.unit = unit

    def start(self, timeout):
        subprocess.run(["systemctl", "start", self.unit], check=True, timeout=timeout)

    def restart(self, timeout):
        # Type=notify: systemctl returns once the next process has sent READY=1.
        subprocess.run(["systemctl", "restart", self.unit], check=True, timeout=timeout)

    def reexecute(self, timeout):
        """SIGUSR2 to the main process; returns once the unit is active again, its reload (the
        old image's RELOADING=1) ended by the next image's READY=1."""
        state = lambda: subprocess.run(["systemctl", "show", "-P", "ActiveState", self.unit],
                                       capture_output=True, text=True, check=True).stdout.strip()
        subprocess.run(["systemctl", "kill", "--kill-whom=main", "-s", "SIGUSR2", self.unit], check=True, timeout=timeout)
        end = time.monotonic() + timeout
        time.sleep(0.05)
        while state() != "active":
            if time.monotonic() > end:
                raise RuntimeError(f"{self.unit} is {state()}, not active again")
            time.sleep(0.02)

    def stored_names(self):
        # systemd 252 cannot list its store (`systemd-analyze fdstore` is 254+): a connection
        # missing from it would show as one that ended.
        return None

    def stop(self):
        subprocess.run(["systemctl", "stop", self.unit], check=True, timeout=60)
        shown = subprocess.run(["systemctl", "show", "-P", "ExecMainStatus", self.unit],
                               capture_output=True, text=True, check=True).stdout.strip()
        return int(shown or 0)

    def close(self):
        pass

TICKS = float(os.environ.get("TICKS", "20"))
REEXECUTE = os.environ.get("REEXECUTE") == "1"


def reexecute(manager, timeout):
    """SIGUSR2 to the daemon, which runs its executable again in its process; returns once the
    next image said READY=1."""
    if isinstance(manager, SystemdUnit):
        return manager.reexecute(timeout)
    manager.ready.clear()
    manager.process.send_signal(signal.SIGUSR2)
    if not manager.ready.wait(timeout):
        raise RuntimeError(f"no READY=1 within {timeout} s after SIGUSR2:\n{manager.log()}")
GET = json.dumps({"method": "io.switchyard.Store.Get", "parameters": {"path": "/primes/count"}}).encode() + b"\0"
INCR = json.dumps({"method": "io.switchyard.Store.Send", "parameters": {"action": {"counter": {"incrTapped": {}}}}}).encode() + b"\0"


class Client:
    """One connection: a caller (one Get in flight), the ticker, or a subscriber."""

    def __init__(self, bench, kind):
        self.bench, self.kind = bench, kind
        self.seqs, self.history = [], None
        self.last_reply = None
        self.connect()

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # Only after a connection ended is there no daemon to take one: until the next is up.
        for _ in range(600):
            try:
                self.sock.connect(self.bench.socket_path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                time.sleep(0.05)
        self.sock.setblocking(False)
        self.buffer = b""
        self.bench.selector.register(self.sock, selectors.EVENT_READ, self)
        if self.kind == "subscriber":
            parameters = {"path": "/primes/count"}
            if self.seqs:
                parameters.update(since=self.seqs[-1], history=self.history)
            message = {"method": "io.switchyard.Store.Subscribe", "parameters": parameters, "more": True}
            self.sock.sendall(json.dumps(message).encode() + b"\0")
        elif self.kind == "caller":
            self.sock.sendall(GET)

    def readable(self, now):
        try:
            chunk = self.sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        except ConnectionError:
            chunk = b""
        if not chunk:
            self.bench.ended += 1
            self.bench.selector.unregister(self.sock)
            self.sock.close()
            self.connect()
            return
        self.buffer += chunk
        *messages, self.buffer = self.buffer.split(b"\0")
        for message in messages:
            self.reply(json.loads(message), now)

    def send(self, message):
        # A connection the daemon ended fails here or in the next read: the read reconnects.
        try:
            self.sock.sendall(message)
        except OSError:
            pass

    def reply(self, reply, now):
        bench = self.bench
        if "error" in reply:
            bench.errors.append(reply["error"])
        if self.kind == "caller":
            bench.replies.append(now)
            if self.last_reply is not None and now - self.last_reply > 0.01:
                bench.caller_gaps.append((self.last_reply, now))
            self.last_reply = now
            self.send(GET)
        elif self.kind == "ticker":
            bench.replies.append(now)
            bench.ticking = False
        elif "error" not in reply:
            values = reply["parameters"]
            if "state" in values:
                if self.seqs:
                    bench.snapshots += 1
                self.history = values.get("history")
            elif self.seqs and values["seq"] != self.seqs[-1] + 1:
                if values["seq"] <= self.seqs[-1]:
                    bench.duplicates += 1
                else:
                    bench.gaps += 1
            self.seqs.append(values["seq"])


class Bench:
    def __init__(self, restarts, connections, subscribers):
        self.restarts, self.connections, self.subscribers = restarts, connections, subscribers
        self.folder = tempfile.mkdtemp(prefix="switchyard-restart-bench-")
        total = connections + subscribers + 1
        if unit := os.environ.get("SYSTEMD_UNIT"):
            self.socket_path = os.environ["SOCKET"]
            self.manager = SystemdUnit(unit)
        else:
            self.socket_path = os.path.join(self.folder, "switchyard.sock")
            config = os.path.join(self.folder, "switchyard.json")
            with open(config, "w") as f:
                json.dump({"switchyard": {
                    "socket": {"path": self.socket_path},
                    "limits": {"maxConnections": total + 16},
                    "state": {"directory": os.path.join(self.folder, "state")},
                }}, f)
            self.manager = FdStoreManager(self.folder, os.environ["SWITCHYARDD"], ["--config", config], {}, capacity=total + 17)
        self.selector = selectors.DefaultSelector()
        self.replies, self.errors, self.caller_gaps = [], [], []
        self.ended = self.snapshots = self.gaps = self.duplicates = 0
        self.ticking = False
        self.quiescing = self.stopping = False

    def serve(self, clients, ticker):
        """The clients' loop, until `stopping`: replies as they come, a change TICKS times a second."""
        next_tick = time.monotonic()
        while not self.stopping:
            now = time.monotonic()
            if now >= next_tick and not self.ticking and not self.quiescing:
                self.ticking = True
                ticker.send(INCR)
                next_tick = now + 1 / TICKS
            for key, _ in self.selector.select(timeout=0.005):
                key.data.readable(time.monotonic())

    def run(self):
        self.manager.start(timeout=120)
        clients = []
        for index in range(self.connections + self.subscribers):
            clients.append(Client(self, "caller" if index < self.connections else "subscriber"))
            if index % 50 == 49:
                time.sleep(0.05)  # the stand-in keeps up with the store messages
        ticker = Client(self, "ticker")
        loop = threading.Thread(target=self.serve, args=(clients, ticker), daemon=True)
        loop.start()
        total = len(clients) + 1
        # A connection the store could not take at once (its manager read too slowly) is kept at
        # the first handover: said, not fatal.
        deadline = time.monotonic() + 30
        while (names := self.manager.stored_names()) is not None and \
                (stored := len([n for n in names if n.startswith("conn-")])) < total:
            if time.monotonic() > deadline:
                print(f"{total - stored} of {total} connections not in the store before the first restart")
                break
            time.sleep(0.1)
        time.sleep(1 if names is not None else 3)
        windows = []
        for _ in range(self.restarts):
            terminated = time.monotonic()
            if REEXECUTE:
                reexecute(self.manager, timeout=120)
            else:
                self.manager.restart(timeout=120)
            ready = time.monotonic()
            time.sleep(2)
            windows.append((terminated, ready))
        # The last change reaches every subscriber before the count of who is behind: a tick
        # stopped mid-delivery would leave most of them one change short.
        self.quiescing = True
        time.sleep(1)
        self.stopping = True
        loop.join()
        replies = sorted(self.replies)
        pauses = [longest_gap(replies, start - 0.5, ready + 1.5) for start, ready in windows]
        # What the caller that waited longest saw, at each restart.
        worst = [max((b - a for a, b in self.caller_gaps if start - 0.5 <= a and b <= ready + 1.5), default=0)
                 for start, ready in windows]
        if os.environ.get("TIMELINE"):
            # The wall clock of each pause's ends, to set beside the daemons' own timestamps.
            offset = time.time() - time.monotonic()
            for start, ready in windows:
                first, last = gap_ends(replies, start - 0.5, ready + 1.5)
                print(f"restart: SIGTERM {start + offset:.6f}, last reply {first + offset:.6f}, "
                      f"first reply {last + offset:.6f}, READY seen {ready + offset:.6f}")
        status = self.manager.stop()
        self.manager.close()
        shutil.rmtree(self.folder, ignore_errors=True)
        subscribed = [c for c in clients if c.kind == "subscriber"]
        final = max((c.seqs[-1] for c in subscribed if c.seqs), default=0)
        behind = sum(1 for c in subscribed if not c.seqs or c.seqs[-1] < final)
        return {
            "restarts": self.restarts, "connections": self.connections, "subscribers": self.subscribers,
            "pause_ms": {"p50": percentile(pauses, 50) * 1e3, "p99": percentile(pauses, 99) * 1e3, "max": max(pauses) * 1e3},
            "longest_caller_wait_ms": {"p50": percentile(worst, 50) * 1e3, "p99": percentile(worst, 99) * 1e3, "max": max(worst) * 1e3},
            "restart_ms": {
                "p50": percentile([r - t for t, r in windows], 50) * 1e3, "max": max(r - t for t, r in windows) * 1e3,
            },
            "replies": len(replies), "errors": len(self.errors), "error_names": sorted(set(self.errors)),
            "ended_connections": self.ended, "subscriber_gaps": self.gaps, "subscriber_duplicates": self.duplicates,
            "snapshots_after_the_first": self.snapshots, "subscribers_behind": behind, "exit_status": status,
        }


def longest_gap(times, start, end):
    inside = [t for t in times if start <= t <= end]
    return max((b - a for a, b in zip(inside, inside[1:])), default=end - start)


def gap_ends(times, start, end):
    inside = [t for t in times if start <= t <= end]
    return max(zip(inside, inside[1:]), key=lambda pair: pair[1] - pair[0], default=(start, end))


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, -(-len(ordered) * p // 100) - 1))]


def main():
    restarts, connections, subscribers = map(int, sys.argv[1:4])
    need = 2 * (connections + subscribers) + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, need), hard))
    result = Bench(restarts, connections, subscribers).run()
    out = os.path.join(os.environ.get("OUT", "."), ".build-bench")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "restart.json"), "w") as f:
        json.dump(result, f, indent=2)
    pause, restart = result["pause_ms"], result["restart_ms"]
    through = f"systemctl restart {os.environ['SYSTEMD_UNIT']}" if os.environ.get("SYSTEMD_UNIT") else "the stand-in for systemd"
    if REEXECUTE:
        through = "SIGUSR2 (the executable run again in its process)" + (" under systemd" if os.environ.get("SYSTEMD_UNIT") else "")
    print(f"{restarts} restarts through {through}, {connections} connections calling, {subscribers} subscribers, {TICKS:g} changes/s")
    print(f"serving pause at the clients (last reply of the old process to the first of the new): "
          f"p50 {pause['p50']:.1f} ms, p99 {pause['p99']:.1f} ms, max {pause['max']:.1f} ms")
    worst = result["longest_caller_wait_ms"]
    print(f"the caller that waited longest, each restart: p50 {worst['p50']:.1f} ms, p99 {worst['p99']:.1f} ms, max {worst['max']:.1f} ms")
    print(f"{'SIGUSR2' if REEXECUTE else 'SIGTERM'} to READY=1 of the next process: p50 {restart['p50']:.0f} ms, max {restart['max']:.0f} ms")
    print(f"clients: {result['replies']} replies, {result['errors']} errors {result['error_names'] or ''}, "
          f"{result['ended_connections']} connections ended (made again); subscriptions: {result['subscriber_gaps']} gaps, "
          f"{result['subscriber_duplicates']} duplicates, {result['snapshots_after_the_first']} snapshots after the first, "
          f"{result['subscribers_behind']} behind at the end")
    clean = not (result["errors"] or result["ended_connections"] or result["subscriber_gaps"] or result["subscriber_duplicates"]
                 or result["snapshots_after_the_first"] or result["subscribers_behind"] or result["exit_status"])
    sys.exit(0 if clean else 1)


if __name__ == "__main__":
    main()
