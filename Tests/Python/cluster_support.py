"""What the cluster's tests stand on: three daemons in three network namespaces on one
PostgreSQL in a fourth, clients in a fifth, joined by a bridge in the database's namespace; TLS
between them, with certificates made here. A client pipelining Sends to whichever daemon leads,
a subscriber per daemon, and what systemd's `Restart=on-failure` does for a daemon that stopped
because it lost its lease. Skipped where namespaces cannot be made (not root) or PostgreSQL 15
is not installed."""

import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import Daemon, RawConnection
from test_tls import Authority

NET = "10.233.91"
DATABASE_ADDRESS = f"{NET}.10"
PORT = 7601
POSTGRES = "/usr/lib/postgresql/15/bin"
# journal.leaseDuration's default, written out: the checks of a leader cut off or paused need it.
LEASE = 2.0
WINDOW = 8
INCREMENT = {"action": {"counter": {"incrTapped": {}}}}
NAMES = ("n1", "n2", "n3")
CLONE_NEWNET = 0x40000000


def run(*command):
    subprocess.run(command, check=True, capture_output=True)


def inside(namespace, *command):
    return ["ip", "netns", "exec", namespace, *command]


def enter(namespace):
    """Moves the calling thread (only it) into the network namespace: its sockets are there."""
    with open(f"/run/netns/{namespace}") as handle:
        if ctypes.CDLL(None, use_errno=True).setns(handle.fileno(), CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns")


@pytest.fixture
def network():
    suffix = str(os.getpid() % 10000)
    namespaces = {role: f"sy{role}{suffix}" for role in ("db", *NAMES, "cl")}
    addresses = {"n1": f"{NET}.1", "n2": f"{NET}.2", "n3": f"{NET}.3", "cl": f"{NET}.100"}
    try:
        run("ip", "netns", "add", namespaces["db"])
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"cannot make a network namespace here: {error}")
    links = {}
    try:
        bridge = f"sybr{suffix}"
        database = namespaces["db"]
        run(*inside(database, "ip", "link", "add", bridge, "type", "bridge"))
        run(*inside(database, "ip", "addr", "add", f"{DATABASE_ADDRESS}/24", "dev", bridge))
        for link in (bridge, "lo"):
            run(*inside(database, "ip", "link", "set", link, "up"))
        for role, address in addresses.items():
            namespace, inner, outer = namespaces[role], f"sy{role}i{suffix}", f"sy{role}o{suffix}"
            run("ip", "netns", "add", namespace)
            run("ip", "link", "add", inner, "type", "veth", "peer", "name", outer)
            run("ip", "link", "set", inner, "netns", namespace)
            run("ip", "link", "set", outer, "netns", database)
            run(*inside(database, "ip", "link", "set", outer, "master", bridge))
            run(*inside(database, "ip", "link", "set", outer, "up"))
            run(*inside(namespace, "ip", "addr", "add", f"{address}/24", "dev", inner))
            for link in (inner, "lo"):
                run(*inside(namespace, "ip", "link", "set", link, "up"))
            links[role] = (namespace, inner)
        yield namespaces, addresses, links
    finally:
        for namespace in namespaces.values():
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(namespace in listed for namespace in namespaces.values()), "a namespace was left behind"


@pytest.fixture
def database(network):
    """PostgreSQL 15 from initdb, as nobody, listening on the bridge in its own namespace."""
    if not os.access(f"{POSTGRES}/initdb", os.X_OK):
        pytest.skip(f"PostgreSQL 15 is not installed ({POSTGRES}/initdb)")
    namespaces, _, _ = network
    folder = tempfile.mkdtemp(prefix="switchyard-cluster-pg-")
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] if os.getuid() == 0 else []
    environment = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    if os.getuid() == 0:
        os.chown(folder, 65534, 65534)
    os.chmod(folder, 0o700)
    server = None
    try:
        subprocess.run(
            [*as_nobody, f"{POSTGRES}/initdb", "-D", f"{folder}/data", "-U", "switchyard", "-A", "trust", "-E", "UTF8", "--no-sync"],
            check=True, capture_output=True, env=environment,
        )
        with open(f"{folder}/data/pg_hba.conf", "a") as hba:
            hba.write(f"host all all {NET}.0/24 trust\n")
        server = subprocess.Popen(
            inside(namespaces["db"], *as_nobody, f"{POSTGRES}/postgres", "-D", f"{folder}/data",
                   "-c", f"listen_addresses={DATABASE_ADDRESS}", "-c", f"unix_socket_directories={folder}",
                   "-c", "fsync=off", "-c", "max_connections=200"),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(f"{folder}/postgres.log", "wb"), env=environment,
        )
        POSTGRES_FOLDER[0] = folder
        deadline = time.monotonic() + 30
        while subprocess.run([f"{POSTGRES}/pg_isready", "-q", "-h", folder, "-U", "switchyard", "-d", "postgres"]).returncode != 0:
            assert server.poll() is None and time.monotonic() < deadline, "PostgreSQL did not start"
            time.sleep(0.05)
        run(f"{POSTGRES}/createdb", "-h", folder, "-U", "switchyard", "cluster")
        yield f"host={DATABASE_ADDRESS} port=5432 user=switchyard dbname=cluster sslmode=disable"
    finally:
        if server is not None:
            server.send_signal(signal.SIGQUIT)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(folder, ignore_errors=True)


# The test PostgreSQL's folder (its socket and its log), for what a failure prints.
POSTGRES_FOLDER = [None]


def postgres_diagnostics(namespace):
    """What PostgreSQL and the member's namespace looked like: the sessions, the locks waited
    for, the log's end, the routes and neighbours."""
    folder, lines = POSTGRES_FOLDER[0], []
    if folder:
        for title, query in (
            ("sessions (pid, state, wait, age of its transaction, blocked by, query)",
             "SELECT pid, state, wait_event_type, wait_event, now() - xact_start, pg_blocking_pids(pid), left(query, 100) "
             "FROM pg_stat_activity WHERE datname = 'cluster'"),
            ("locks not granted", "SELECT pid, locktype, mode, relation::regclass, objid FROM pg_locks WHERE NOT granted"),
        ):
            shown = subprocess.run(
                [f"{POSTGRES}/psql", "-h", folder, "-U", "switchyard", "-d", "cluster", "-Atc", query],
                capture_output=True, text=True, timeout=10,
            )
            lines += [f"{title}:", shown.stdout + shown.stderr]
        with open(f"{folder}/postgres.log", errors="replace") as log:
            lines += ["postgres.log (end):", log.read()[-3000:]]
    for what in ("route", "neigh", "link"):
        shown = subprocess.run(["ip", "-n", namespace, what], capture_output=True, text=True)
        lines += [f"ip {what} in {namespace}:", shown.stdout + shown.stderr]
    return "\n".join(lines)


class Member:
    """One daemon of the cluster in its namespace: its own state directory, its TLS listener."""

    def __init__(self, name, namespace, address, folder, configuration):
        self.name, self.namespace, self.address, self.folder = name, namespace, address, folder
        self.configuration = configuration
        self.daemon = None
        self.starts = 0

    def start(self):
        self.starts += 1
        self.daemon = Daemon(self.folder, arguments=("--config", self.configuration), launcher=("ip", "netns", "exec", self.namespace))

    def call(self, method, parameters=None):
        with RawConnection(self.daemon.socket_path) as connection:
            return connection.call(method, parameters)

    def cluster(self):
        try:
            reply = self.call("Status")
        except (OSError, AssertionError):
            return None
        return reply.get("parameters", {}).get("cluster")

    def kill(self):
        if self.daemon is not None and self.daemon.alive():
            self.daemon.process.kill()
            self.daemon.process.wait()


@pytest.fixture
def cluster(network, database):
    namespaces, addresses, links = network
    folder = tempfile.mkdtemp(prefix="switchyard-cluster-")
    members = []
    try:
        authority = Authority(folder, "ca")
        operator = authority.issue("operator", "operator")
        for name in NAMES:
            home = os.path.join(folder, name)
            os.makedirs(home)
            certificate, key = authority.issue(name, name, f"IP:{addresses[name]}")
            configuration = os.path.join(home, "switchyard.json")
            with open(configuration, "w") as f:
                json.dump({"switchyard": {
                    "tls": {"listen": [f"tcp:{addresses[name]}:{PORT}"], "certificate": certificate, "key": key, "ca": authority.certificate},
                    "access": {"rules": {"operator": {"commonName": "operator", "allow": ["read", "write"]}}},
                    "state": {"directory": os.path.join(home, "state")},
                    "durability": {"mode": "strict"},
                    "journal": {"engine": "postgresql", "postgresql": database, "leaseHolder": name, "leaseDuration": LEASE,
                                "advertise": f"tcp:{addresses[name]}:{PORT}"},
                }}, f)
            members.append(Member(name, namespaces[name], addresses[name], home, configuration))
        for member in members:
            member.start()
        tls = ssl.create_default_context(cafile=authority.certificate)
        tls.load_cert_chain(*operator)
        yield members, tls, namespaces, links
    finally:
        for member in members:
            member.kill()
        shutil.rmtree(folder, ignore_errors=True)


class Sender(threading.Thread):
    """A client in its namespace: Sends pipelined WINDOW at a time over TLS, to the leader a
    standby names, or to the next address when one cannot be reached; every acknowledgement
    kept as (seq, address, when)."""

    def __init__(self, namespace, addresses, tls):
        super().__init__(daemon=True)
        self.namespace, self.addresses, self.tls = namespace, addresses, tls
        self.acknowledged, self.failures = [], []
        self.stopping = threading.Event()

    def run(self):
        enter(self.namespace)
        current = 0
        while not self.stopping.is_set():
            address = self.addresses[current]
            try:
                current = self.pipeline(address, current)
            except (OSError, ValueError):
                current = (current + 1) % len(self.addresses)
                time.sleep(0.02)

    def pipeline(self, address, current):
        host, port = address[len("tcp:"):].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=1) as plain, self.tls.wrap_socket(plain, server_hostname=host) as tls:
            tls.settimeout(1.5)
            buffer, in_flight = b"", 0
            message = json.dumps({"method": "io.switchyard.Store.Send", "parameters": INCREMENT}).encode() + b"\0"
            while not self.stopping.is_set():
                while in_flight < WINDOW:
                    tls.sendall(message)
                    in_flight += 1
                while b"\0" not in buffer:
                    chunk = tls.recv(65536)
                    if not chunk:
                        raise OSError("closed")
                    buffer += chunk
                text, _, buffer = buffer.partition(b"\0")
                reply, in_flight = json.loads(text), in_flight - 1
                error = reply.get("error")
                if error is None:
                    self.acknowledged.append((reply["parameters"]["seq"], address, time.monotonic()))
                elif error == "io.switchyard.Store.NotLeader":
                    # Refused, so applied nowhere: sent again to the leader it names.
                    leader = reply["parameters"].get("address", "")
                    return self.addresses.index(leader) if leader in self.addresses and leader != address else (current + 1) % len(self.addresses)
                else:
                    self.failures.append(error)
                    raise OSError(error)
        return current


class Subscriber(threading.Thread):
    """Follows one daemon's whole state through its Unix socket, resuming with `since` after each
    drop; the seqs it was given, and the gaps: a change skipped, or a snapshot instead of the
    changes from a daemon that survived (one killed and started again may send a snapshot)."""

    def __init__(self, member):
        super().__init__(daemon=True)
        self.member = member
        self.seqs, self.gaps = [], []
        self.stopping = threading.Event()

    def run(self):
        since, history, starts = None, None, self.member.starts
        while not self.stopping.is_set():
            try:
                connection = RawConnection(self.member.daemon.socket_path)
            except OSError:
                time.sleep(0.05)
                continue
            restarted, starts = self.member.starts != starts, self.member.starts
            try:
                connection.sock.settimeout(0.5)
                parameters = {} if since is None else {"since": since, "history": history}
                connection.send("Subscribe", parameters, more=True)
                while not self.stopping.is_set():
                    try:
                        reply = connection.read()
                    except socket.timeout:
                        continue
                    if reply is None or "error" in reply:
                        break
                    update = reply["parameters"]
                    if "state" in update:
                        if since is not None and update["seq"] != since and not restarted:
                            self.gaps.append((since, update["seq"], "a snapshot instead of the changes"))
                        history = update.get("history", history)
                    elif since is not None and update["seq"] != since + 1:
                        self.gaps.append((since, update["seq"], "a change skipped", self.seqs[-5:]))
                    self.seqs.append(update["seq"])
                    since = update["seq"]
            except OSError:
                pass
            finally:
                connection.close()
            time.sleep(0.02)


# The reasons a daemon stops on its own when it no longer leads (its last line before exiting 1).
LOST_LEASE = re.compile(
    r"(took the journal's lease|the journal's lease was taken by|did not answer for .*a whole lease).*switchyardd cannot run"
)


class Restarts(threading.Thread):
    """What the unit's `Restart=on-failure` does: a daemon that stopped on its own because it lost
    the lease (deposed after a pause longer than a lease, or cut off from the database) is
    started again, to follow as a standby. Any other end is kept in `unexpected` for the test to
    fail on. The members a test kills or cuts off itself are `held` meanwhile. Used as a context,
    it watches from its start to its end."""

    def __init__(self, members):
        super().__init__(daemon=True)
        self.members = members
        self.restarted, self.unexpected = [], []
        self.lock = threading.Lock()
        self.held = set()
        self.stopping = threading.Event()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *_):
        self.stopping.set()
        self.join(timeout=30)

    @contextlib.contextmanager
    def holding(self, member):
        with self.lock:
            self.held.add(member.name)
        try:
            yield
        finally:
            with self.lock:
                self.held.discard(member.name)

    def run(self):
        while not self.stopping.wait(0.05):
            for member in self.members:
                with self.lock:
                    if member.name in self.held or member.daemon.alive():
                        continue
                    log = member.daemon.log()
                    if member.daemon.process.returncode == 1 and LOST_LEASE.search(log[-2000:]):
                        self.restarted.append(member.name)
                        try:
                            member.start()
                        except RuntimeError as error:
                            self.unexpected.append((member.name, "not started again", str(error)))
                            self.held.add(member.name)
                    else:
                        self.unexpected.append((member.name, member.daemon.process.returncode, log[-3000:]))
                        self.held.add(member.name)


def leader_of(members, deadline=20):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        for member in members:
            if member.daemon.alive() and (member.cluster() or {}).get("role") == "leader":
                return member
        time.sleep(0.05)
    raise AssertionError("no daemon leads")


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]
