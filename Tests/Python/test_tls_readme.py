"""The README's remote-clients section works as written (issue 35, point 4).

Its `openssl` commands are run as they stand in an empty folder; its configuration is the
daemon's, with only the listening address and the files' folder changed; its `switchyard` command
line is run with only the address changed. Then the two identities it makes do what its rules say:
the operator reads, the application sends a counter action and may not read.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

import pytest

from conftest import INCR, SWITCHYARDD, Daemon
from test_metrics import free_port, wait_until_listening
from test_tls import TLSConnection

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
CLI = os.path.join(os.path.dirname(SWITCHYARDD), "switchyard")


def block_after(text, marker, language):
    """The first fenced block of `language` after the line containing `marker`."""
    start = text.index(marker)
    match = re.compile(rf"^```{language}\n(.*?)^```", re.S | re.M).search(text, start)
    assert match, f"no ```{language} block after {marker!r} in the README"
    return match.group(1)


@pytest.fixture(scope="module")
def readme():
    return README.read_text()


@pytest.fixture(scope="module")
def folder(readme):
    """The README's commands, run in an empty folder."""
    path = tempfile.mkdtemp(prefix="switchyard-readme-tls-")
    try:
        commands = block_after(readme, "A CA, the daemon's certificate, and two clients", "sh")
        run = subprocess.run(["bash", "-e", "-c", commands], cwd=path, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, f"the README's openssl commands failed:\n{run.stdout}\n{run.stderr}"
        assert "server.crt: OK" in run.stdout and "billing.crt: OK" in run.stdout, run.stdout
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def daemon(readme, folder):
    """A daemon with the README's configuration: its TLS listener on a free loopback port."""
    section = json.loads("{" + block_after(readme, "The daemon's part of the configuration", "json") + "}")
    port = free_port()
    section["tls"]["listen"] = [f"tcp:127.0.0.1:{port}"]
    for name in ("certificate", "key", "ca"):
        section["tls"][name] = section["tls"][name].replace("/etc/switchyard/tls", folder)
    state = tempfile.mkdtemp(prefix="switchyard-py-")
    path = os.path.join(state, "switchyard.json")
    with open(path, "w") as f:
        json.dump({"switchyard": section}, f)
    try:
        daemon = Daemon(state, arguments=("--config", path))
        daemon.port = port
        wait_until_listening(port)
        yield daemon
        assert daemon.terminate() == 0, daemon.log()
    finally:
        shutil.rmtree(state, ignore_errors=True)


def test_the_operators_command_line_works_as_written(readme, folder, daemon):
    line = next(l for l in block_after(readme, "Every `switchyard` subcommand takes the address", "sh").splitlines() if l.strip())
    arguments = line.split()[1:]
    arguments[arguments.index("--address") + 1] = f"tcp:localhost:{daemon.port}"
    run = subprocess.run([CLI, *arguments], cwd=folder, capture_output=True, text=True, timeout=30,
                         env={k: v for k, v in os.environ.items() if not k.startswith("SWITCHYARD_")})
    assert run.returncode == 0, f"{line}\n{run.stdout}\n{run.stderr}\n{daemon.log()}"
    assert "Listeners" in run.stdout, run.stdout


def test_the_application_sends_what_its_rule_allows_and_reads_nothing(folder, daemon):
    identity = (os.path.join(folder, "billing.crt"), os.path.join(folder, "billing.key"))
    with TLSConnection(daemon.port, os.path.join(folder, "ca.crt"), identity) as billing:
        sent = billing.call("Send", {"action": INCR})
        assert sent is not None and "error" not in sent, sent
        read = billing.call("Get", {"path": "/primes/count"})
        assert read is not None and read.get("error") == "io.switchyard.Store.PermissionDenied", read
    identity = (os.path.join(folder, "operator.crt"), os.path.join(folder, "operator.key"))
    with TLSConnection(daemon.port, os.path.join(folder, "ca.crt"), identity) as operator:
        count = operator.call("Get", {"path": "/primes/count"})
        assert count is not None and count["parameters"]["state"] == 1, count

