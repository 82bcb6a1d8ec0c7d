"""A daemon in one network namespace and its clients in another, joined by a veth pair: every
method over TLS through the `switchyard` CLI, a `watch` that carries on across the link taken
down and up, and the certificates reloaded under load with no connection dropped. The namespaces
are made and removed by the test; it is skipped where they cannot be made (not root)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import SWITCHYARDD, Daemon
from test_tls import Authority

SERVER, CLIENT = "10.233.71.1", "10.233.71.2"
PORT = 7501


def ip(*arguments, namespace=None):
    command = ["ip", "netns", "exec", namespace, "ip", *arguments] if namespace else ["ip", *arguments]
    subprocess.run(command, check=True, capture_output=True)


@pytest.fixture
def namespaces():
    suffix = str(os.getpid() % 100000)
    daemon_ns, client_ns = f"sy-d{suffix}", f"sy-c{suffix}"
    daemon_end, client_end = f"syd{suffix}", f"syc{suffix}"
    try:
        subprocess.run(["ip", "netns", "add", daemon_ns], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"cannot make a network namespace here: {error}")
    try:
        ip("netns", "add", client_ns)
        ip("link", "add", daemon_end, "type", "veth", "peer", "name", client_end)
        ip("link", "set", daemon_end, "netns", daemon_ns)
        ip("link", "set", client_end, "netns", client_ns)
        for namespace, end, address in ((daemon_ns, daemon_end, SERVER), (client_ns, client_end, CLIENT)):
            ip("addr", "add", f"{address}/24", "dev", end, namespace=namespace)
            ip("link", "set", end, "up", namespace=namespace)
            ip("link", "set", "lo", "up", namespace=namespace)
        yield {"daemon": daemon_ns, "client": client_ns, "client_end": client_end}
    finally:
        for namespace in (daemon_ns, client_ns):
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert daemon_ns not in listed and client_ns not in listed, "a namespace was left behind"


@pytest.fixture
def remote(namespaces):
    folder = tempfile.mkdtemp(prefix="switchyard-netns-")
    try:
        ca = Authority(folder, "ca")
        certificate, key = ca.issue("server", "server", f"IP:{SERVER}")
        operator = ca.issue("operator", "operator")
        configuration = os.path.join(folder, "switchyard.json")
        with open(configuration, "w") as f:
            json.dump({"switchyard": {
                "tls": {"listen": [f"tcp:{SERVER}:{PORT}"], "certificate": certificate, "key": key, "ca": ca.certificate},
                "access": {"rules": {"operator": {"commonName": "operator", "allow": ["read", "write"]}}},
            }}, f)
        daemon = Daemon(folder, arguments=("--config", configuration), launcher=("ip", "netns", "exec", namespaces["daemon"]))
        daemon.authority, daemon.operator = ca, operator
        try:
            cli = [
                "ip", "netns", "exec", namespaces["client"], os.path.join(os.path.dirname(SWITCHYARDD), "switchyard"),
                "--address", f"tcp:{SERVER}:{PORT}", "--ca", ca.certificate, "--cert", operator[0], "--key", operator[1],
            ]
            yield daemon, cli, namespaces
        finally:
            status = daemon.terminate()
            assert status == 0, f"switchyardd exited with {status} after SIGTERM:\n{daemon.log()}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(cli, *arguments):
    for _ in range(100):
        done = subprocess.run([*cli, *arguments], capture_output=True, text=True, timeout=30)
        if done.returncode != 3:  # 3: not listening yet
            return done
        time.sleep(0.05)
    return done


def test_every_method_from_another_namespace(remote):
    daemon, cli, _ = remote
    assert run(cli, "send", "counter.incrTapped").returncode == 0
    assert run(cli, "send", "primeModal.saveFavoritePrimeTapped").returncode == 0
    got = run(cli, "get", "/primes/count")
    assert got.returncode == 0 and got.stdout.strip() == "1", got
    for command in (("status",), ("describe",), ("call", "org.varlink.service.GetInfo")):
        done = run(cli, *command)
        assert done.returncode == 0, (command, done.stderr)
    assert run(cli, "metrics").returncode == 0
    assert daemon.alive()


def test_a_watch_carries_on_across_the_link_taken_down_and_up(remote):
    daemon, cli, namespaces = remote
    assert run(cli, "get").returncode == 0
    watch = subprocess.Popen([*cli, "watch", "--json", "/primes"], stdout=subprocess.PIPE, text=True)
    try:
        first = json.loads(watch.stdout.readline())
        ip("link", "set", namespaces["client_end"], "down", namespace=namespaces["client"])
        with daemon.raw() as local:
            for _ in range(3):
                assert "error" not in local.call("Send", {"action": {"counter": {"incrTapped": {}}}})
        time.sleep(1)
        ip("link", "set", namespaces["client_end"], "up", namespace=namespaces["client"])
        seen = first["seq"]
        deadline = time.monotonic() + 30
        while seen < first["seq"] + 3:
            assert time.monotonic() < deadline, "the watch never caught up"
            line = watch.stdout.readline()
            assert line, "the watch ended"
            seen = json.loads(line)["seq"]
    finally:
        watch.kill()
        watch.wait()


def load(namespaces, daemon, mode, *arguments, **popen):
    """tls_load.py MODE in the client namespace, against the daemon, as the operator."""
    script = os.path.join(os.path.dirname(__file__), "tls_load.py")
    return subprocess.Popen(
        ["ip", "netns", "exec", namespaces["client"], sys.executable, script, mode, SERVER, str(PORT),
         daemon.authority.certificate, *daemon.operator, *arguments], stdout=subprocess.PIPE, text=True, **popen)


def test_certificates_reloaded_under_load_drop_no_connection(remote):
    daemon, cli, namespaces = remote
    assert run(cli, "get").returncode == 0
    old = load(namespaces, daemon, "fingerprint").communicate(timeout=30)[0].strip()
    watches = [subprocess.Popen([*cli, "watch", "--json", "/primes/count"], stdout=subprocess.PIPE, text=True) for _ in range(3)]
    senders = [load(namespaces, daemon, "send", "4") for _ in range(4)]
    try:
        firsts = [json.loads(watch.stdout.readline())["seq"] for watch in watches]
        time.sleep(1)
        # A new server certificate and key from the same CA, in place of the old, then SIGHUP.
        daemon.authority.issue("server", "server", f"IP:{SERVER}")
        daemon.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "TLS certificates reloaded" not in daemon.log():
            assert time.monotonic() < deadline, daemon.log()
            time.sleep(0.05)
        new = load(namespaces, daemon, "fingerprint").communicate(timeout=30)[0].strip()
        assert new and new != old, "a handshake after the reload still got the old certificate"
        results = [json.loads(sender.communicate(timeout=60)[0]) for sender in senders]
        assert all(result["error"] is None for result in results), results
        assert sum(result["sent"] for result in results) > 0
        last, _ = daemon.get()
        for watch, first in zip(watches, firsts):
            seen = first
            deadline = time.monotonic() + 30
            while seen < last:
                assert time.monotonic() < deadline, "a watch fell silent after the reload"
                line = watch.stdout.readline()
                assert line, "a watch ended: its connection was dropped"
                seen = json.loads(line)["seq"]
    finally:
        for process in [*watches, *senders]:
            process.kill()
            process.wait()
    assert daemon.alive()
