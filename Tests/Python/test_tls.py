"""The TLS listener from a third-party client's side: raw Varlink over Python's standard `ssl`
module, a replica rebuilt with `jsonpatch`, policy by certificate identity, and the hostile cases
(no certificate, another CA's, an expired one, garbage instead of a ClientHello, a handshake that
never finishes, an oversized frame). The CA and certificates are made with `openssl` when the
module starts and removed after it."""

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time

import contextlib

import jsonpatch
import pytest

from conftest import INCR, STORE, Daemon, RawConnection
from test_metrics import free_port, wait_until_listening

FRAME_TIMEOUT = 1


def openssl(*arguments):
    subprocess.run(["openssl", *arguments], check=True, capture_output=True)


class Authority:
    """A CA in a folder, and the certificates it signs."""

    def __init__(self, folder, name):
        self.folder = folder
        self.certificate = os.path.join(folder, f"{name}.crt")
        self.key = os.path.join(folder, f"{name}.key")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", self.key, "-out", self.certificate, "-subj", f"/CN={name}", "-days", "2")

    def issue(self, name, common_name, san=None, days=2):
        key, request, certificate = (os.path.join(self.folder, f"{name}.{ext}") for ext in ("key", "csr", "crt"))
        extensions = os.path.join(self.folder, f"{name}.ext")
        with open(extensions, "w") as f:
            f.write(f"subjectAltName={san}\n" if san else "extendedKeyUsage=clientAuth,serverAuth\n")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", key, "-out", request, "-subj", f"/CN={common_name}")
        openssl("x509", "-req", "-in", request, "-CA", self.certificate, "-CAkey", self.key, "-CAcreateserial",
                "-out", certificate, "-days", str(days), "-extfile", extensions)
        return certificate, key


@pytest.fixture(scope="module")
def certificates():
    folder = tempfile.mkdtemp(prefix="switchyard-tls-")
    try:
        ca = Authority(folder, "ca")
        foreign = Authority(folder, "foreign-ca")
        yield {
            "ca": ca.certificate,
            "server": ca.issue("server", "localhost", "DNS:localhost,IP:127.0.0.1"),
            "operator": ca.issue("operator", "operator", "URI:spiffe://test/operator"),
            "reader": ca.issue("reader", "reader"),
            "stranger": ca.issue("stranger", "stranger"),
            "expired": ca.issue("expired", "operator", days=-1),
            "foreign": foreign.issue("foreign", "operator"),
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


RULES = {
    "operator": {"commonName": "operator", "allow": ["read", "write"]},
    "reader": {"commonName": "reader", "allow": ["read"], "paths": ["/primes"]},
}


@contextlib.contextmanager
def running_tls_daemon(certificates, rules=RULES, environment=None, limits=None):
    """A daemon with a TLS listener on a free loopback port (its `port`), the access `rules`,
    the frame timeout FRAME_TIMEOUT, 64 KiB messages and any other `limits`; ended with SIGTERM,
    which must succeed."""
    folder = tempfile.mkdtemp(prefix="switchyard-py-")
    port = free_port()
    certificate, key = certificates["server"]
    configuration = {"switchyard": {
        "tls": {"listen": [f"tcp:127.0.0.1:{port}"], "certificate": certificate, "key": key, "ca": certificates["ca"]},
        "limits": {"frameTimeout": FRAME_TIMEOUT, "maxMessageBytes": 65536, **(limits or {})},
        "access": {"rules": rules},
    }}
    path = os.path.join(folder, "switchyard.json")
    with open(path, "w") as f:
        json.dump(configuration, f)
    try:
        daemon = Daemon(folder, environment=environment, arguments=("--config", path))
        daemon.port = port
        wait_until_listening(port)
        try:
            yield daemon
        finally:
            status = daemon.terminate()
            assert status == 0, f"switchyardd exited with {status} after SIGTERM:\n{daemon.log()}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def tls_daemon(certificates):
    with running_tls_daemon(certificates) as daemon:
        yield daemon


class TLSConnection(RawConnection):
    """Varlink by hand over TLS: NUL-ended JSON, as on the Unix socket."""

    def __init__(self, port, ca, identity=None):
        context = ssl.create_default_context(cafile=ca)
        context.minimum_version = ssl.TLSVersion.TLSv1_3
        if identity:
            context.load_cert_chain(*identity)
        raw = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock = context.wrap_socket(raw, server_hostname="localhost")
        self.buffer = b""

    def read(self):
        """The next message, or None once the daemon closed the connection (or refused us)."""
        try:
            return super().read()
        except (ssl.SSLError, BrokenPipeError):
            return None

    def call(self, method, parameters=None, **flags):
        """The reply, or None: a refused client is answered by a closed connection."""
        try:
            self.send(method, parameters, **flags)
        except (ssl.SSLError, BrokenPipeError, ConnectionResetError):
            return None
        return self.read()


def test_every_method_over_tls_and_a_replica_rebuilt_with_jsonpatch(tls_daemon, certificates):
    operator = certificates["operator"]
    with TLSConnection(tls_daemon.port, certificates["ca"], operator) as calls, \
            TLSConnection(tls_daemon.port, certificates["ca"], operator) as stream:
        info = calls.call("org.varlink.service.GetInfo")
        assert STORE in info["parameters"]["interfaces"], info
        description = calls.call("Describe")["parameters"]
        assert description["access"] == {"read": True, "write": True, "admin": False}, description
        stream.send("Subscribe", {}, more=True)
        first = stream.read()
        state, seq = first["parameters"]["state"], first["parameters"]["seq"]
        for _ in range(3):
            assert "error" not in calls.call("Send", {"action": INCR})
        batch = calls.call("SendBatch", {"actions": [INCR, INCR]})
        assert "error" not in batch, batch
        target = calls.call("Get")["parameters"]
        while seq < target["seq"]:
            reply = stream.read()["parameters"]
            state, seq = jsonpatch.apply_patch(state, reply["patch"]), reply["seq"]
        assert state == target["state"]
        assert state["primes"]["count"] == 5
        listeners = calls.call("Status")["parameters"]["listeners"]
        # Who holds the connections is told only to an admin, which the operator is not.
        refusals = ("refusedHandshakes", "refusedConnections", "deniedCalls")
        assert [{k: v for k, v in listener.items() if k not in refusals} for listener in listeners] == [
            {"address": f"unix:{tls_daemon.socket_path}", "connections": 0},
            {"address": f"tcp:127.0.0.1:{tls_daemon.port}", "connections": 2},
        ], listeners
        assert "refusedHandshakes" not in listeners[0] and isinstance(listeners[1]["refusedHandshakes"], int)


def test_policy_by_certificate_identity(tls_daemon, certificates):
    ca = certificates["ca"]
    with TLSConnection(tls_daemon.port, ca, certificates["reader"]) as reader:
        assert "error" not in reader.call("Get", {"path": "/primes"})
        assert reader.call("Get", {"path": "/signUp"})["error"] == f"{STORE}.PermissionDenied"
        assert reader.call("Send", {"action": INCR})["error"] == f"{STORE}.PermissionDenied"
    with TLSConnection(tls_daemon.port, ca, certificates["stranger"]) as stranger:
        refused = stranger.call("Get")
        assert refused["error"] == f"{STORE}.PermissionDenied", refused


@pytest.mark.parametrize("identity", [None, "foreign", "expired"])
def test_a_client_without_a_valid_certificate_gets_nothing(tls_daemon, certificates, identity):
    try:
        with TLSConnection(tls_daemon.port, certificates["ca"], certificates.get(identity)) as stranger:
            assert stranger.call("Get") is None
    except (ssl.SSLError, ConnectionResetError):
        pass
    with TLSConnection(tls_daemon.port, certificates["ca"], certificates["operator"]) as good:
        assert "error" not in good.call("Get")
    assert tls_daemon.log().count("refused a TLS handshake") == 1, "logged once for the peer"


def test_hostile_connections_are_closed_and_others_served(tls_daemon, certificates):
    # Garbage instead of a ClientHello.
    with socket.create_connection(("127.0.0.1", tls_daemon.port), timeout=5) as garbage:
        garbage.sendall(json.dumps({"method": f"{STORE}.Get"}).encode() + b"\0")
        assert wait_closed(garbage), "the connection was not closed"
    # A handshake that never finishes: closed at the frame timeout.
    with socket.create_connection(("127.0.0.1", tls_daemon.port), timeout=FRAME_TIMEOUT * 5) as silent:
        started = time.monotonic()
        assert wait_closed(silent)
        assert time.monotonic() - started < FRAME_TIMEOUT * 4
    # An oversized frame after the handshake.
    with TLSConnection(tls_daemon.port, certificates["ca"], certificates["operator"]) as big:
        big.sock.sendall(b" " * 70000)
        assert big.read() is None
    with TLSConnection(tls_daemon.port, certificates["ca"], certificates["operator"]) as good:
        assert "error" not in good.call("Get")
    assert tls_daemon.alive()


def wait_closed(sock):
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, socket.timeout):
        return False


def test_sighup_reloads_certificates_without_dropping_established_connections(tls_daemon, certificates):
    ca = certificates["ca"]
    with TLSConnection(tls_daemon.port, ca, certificates["operator"]) as established:
        assert "error" not in established.call("Get")
        tls_daemon.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 5
        while "TLS certificates reloaded" not in tls_daemon.log():
            assert time.monotonic() < deadline, tls_daemon.log()
            time.sleep(0.02)
        assert "error" not in established.call("Send", {"action": INCR})
        with TLSConnection(tls_daemon.port, ca, certificates["operator"]) as fresh:
            assert "error" not in fresh.call("Get")


def test_a_flood_of_handshakes_that_never_finish_leaves_others_served(tls_daemon, certificates):
    silent = [socket.create_connection(("127.0.0.1", tls_daemon.port), timeout=FRAME_TIMEOUT * 5) for _ in range(200)]
    try:
        with TLSConnection(tls_daemon.port, certificates["ca"], certificates["operator"]) as good:
            assert "error" not in good.call("Get")
        started = time.monotonic()
        assert all(wait_closed(s) for s in silent), "every silent connection is closed at the frame timeout"
        assert time.monotonic() - started < FRAME_TIMEOUT * 4
    finally:
        for s in silent:
            s.close()
    assert tls_daemon.log().count("refused a TLS handshake") == 1, "one line for the peer, not two hundred"
