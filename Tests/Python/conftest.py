"""Fixtures for a third-party client's view of switchyardd.

Every test starts its own daemon on a socket in a fresh temporary folder, waits until the socket
accepts connections, and at teardown sends SIGTERM and expects exit status 0 and the socket gone.
The daemon binary comes from the environment variable SWITCHYARDD (`make python-test` sets it).
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import varlink

SWITCHYARDD = os.environ.get("SWITCHYARDD", "")
STORE = "io.switchyard.Store"
INCR = {"counter": {"incrTapped": {}}}
TIMEOUT = 5.0
# The varlink package's sockets have no timeout of their own: a missing reply fails, not hangs.
socket.setdefaulttimeout(10.0)


def pytest_configure(config):
    if not SWITCHYARDD or not os.access(SWITCHYARDD, os.X_OK):
        raise pytest.UsageError(
            f"SWITCHYARDD must name the built switchyardd binary (is {SWITCHYARDD!r}); run `make python-test`"
        )
    # A run stopped with SIGTERM (a deadline, pkill) ends as one stopped with ^C: the fixtures'
    # teardowns still stop the daemons, PostgreSQL and the namespaces the tests started.
    signal.signal(signal.SIGTERM, _interrupted)


def _interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


class Daemon:
    def __init__(self, folder, environment=None, arguments=(), launcher=(), executable=None):
        self.folder = folder
        self.socket_path = os.path.join(folder, "switchyard.sock")
        self.address = f"unix:{self.socket_path}"
        self.log_path = os.path.join(folder, "switchyardd.log")
        self._log = open(self.log_path, "wb")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SWITCHYARD_")}
        env.update(environment or {})
        self.process = subprocess.Popen(
            [*launcher, executable or SWITCHYARDD, "--socket", self.socket_path, *arguments],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=folder,
            env=env,
        )
        self._wait_until_accepting()

    def _wait_until_accepting(self):
        deadline = time.monotonic() + 15
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"switchyardd exited with {self.process.returncode}:\n{self.log()}")
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                    probe.connect(self.socket_path)
                return
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"switchyardd never accepted on {self.socket_path}:\n{self.log()}")
                time.sleep(0.02)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def alive(self):
        return self.process.poll() is None

    def client(self):
        return varlink.Client(address=self.address)

    def raw(self):
        return RawConnection(self.socket_path)

    def get(self, path=None):
        """Get over a connection of its own: (seq, state)."""
        with self.raw() as conn:
            reply = conn.call("Get", {} if path is None else {"path": path})
        assert "error" not in reply, reply
        return reply["parameters"]["seq"], reply["parameters"]["state"]

    def terminate(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None
        finally:
            self._log.close()


class RawConnection:
    """A Varlink connection written by hand: NUL-ended JSON on a Unix stream socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(TIMEOUT)
        self.sock.connect(path)
        self.buffer = b""

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()

    def close(self):
        self.sock.close()

    def write(self, data: bytes):
        self.sock.sendall(data)

    def send(self, method, parameters=None, **flags):
        message = {"method": method if "." in method else f"{STORE}.{method}"}
        if parameters is not None:
            message["parameters"] = parameters
        message.update(flags)
        self.write(json.dumps(message).encode() + b"\0")

    def read(self):
        """The next message, or None when the daemon closed the connection."""
        while b"\0" not in self.buffer:
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                return None
            if not chunk:
                assert self.buffer == b"", f"the daemon closed mid-message: {self.buffer[:200]!r}"
                return None
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method, parameters=None, **flags):
        self.send(method, parameters, **flags)
        reply = self.read()
        assert reply is not None, f"the daemon closed the connection instead of answering {method}"
        return reply


@pytest.fixture
def daemon():
    folder = tempfile.mkdtemp(prefix="switchyard-py-")
    try:
        d = Daemon(folder)
        try:
            yield d
        finally:
            status = d.terminate()
            log = d.log()
            assert status == 0, f"switchyardd exited with {status} after SIGTERM:\n{log}"
            assert not os.path.exists(d.socket_path), "switchyardd left its socket behind"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def store(daemon):
    """A varlink-library connection to io.switchyard.Store (parsed from the daemon's description)."""
    with daemon.client() as client:
        con = client.open(STORE)
        try:
            yield con
        finally:
            con.close()
