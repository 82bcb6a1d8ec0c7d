"""SIGUSR2 runs the daemon's executable again in its own process, connections handed over (issue
34, point 3): nginx's binary upgrade, for a daemon started by hand — and under systemd, where the
main process never exits (Tests/Systemd covers that). The PID stays; pipelined calls are all
answered; a subscription goes on with the next change, no snapshot, gap or duplicate; a new
version installed at the executable's path is the one run; one that cannot be run leaves the
daemon serving.
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import INCR, SWITCHYARDD, Daemon, RawConnection

pytestmark = pytest.mark.handover
CLI = os.path.join(os.path.dirname(SWITCHYARDD), "switchyard")


@pytest.fixture
def folder():
    path = tempfile.mkdtemp(prefix="switchyard-reexec-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def started(folder, executable=None):
    return Daemon(folder, environment={"SWITCHYARD_STATE_DIRECTORY": os.path.join(folder, "state")}, executable=executable)


def logged(daemon, text, within=10):
    """Waits until the daemon's log says `text`."""
    deadline = time.monotonic() + within
    while text not in daemon.log():
        assert time.monotonic() < deadline, f"never logged {text!r}:\n{daemon.log()}"
        time.sleep(0.002)


def runs_again(daemon, starts_before):
    """Waits for the next image's start ("took over" in the log once more) and its socket."""
    deadline = time.monotonic() + 15
    while daemon.log().count("took over the connections of the process before") <= starts_before:
        assert daemon.alive(), f"the daemon exited ({daemon.process.returncode}):\n{daemon.log()}"
        assert time.monotonic() < deadline, f"the next image did not take over:\n{daemon.log()}"
        time.sleep(0.02)


def reexecute(daemon):
    before = daemon.log().count("took over the connections of the process before")
    daemon.process.send_signal(signal.SIGUSR2)
    runs_again(daemon, before)


def handed_over(daemon):
    out = subprocess.run(
        [CLI, "--socket", daemon.socket_path, "status", "--json"], capture_output=True, text=True, timeout=30,
        env={k: v for k, v in os.environ.items() if not k.startswith("SWITCHYARD_")},
    )
    assert out.returncode == 0 and out.stdout.startswith("{"), (out.returncode, out.stdout, out.stderr)
    return json.loads(out.stdout)["handOver"]


def test_sigusr2_runs_the_daemon_again_in_its_process_and_every_connection_and_subscription_goes_on(folder):
    daemon = started(folder)
    pid = daemon.process.pid
    try:
        subscriber = RawConnection(daemon.socket_path)
        subscriber.send("Subscribe", {"path": "/primes/count"}, more=True)
        assert subscriber.read()["parameters"]["state"] == 0
        sender = RawConnection(daemon.socket_path)
        seqs = []
        for round_ in range(3):
            # Sent before the signal, answered by whichever image reads them.
            for _ in range(20):
                sender.send("Send", {"action": INCR})
            reexecute(daemon)
            replies = [sender.read() for _ in range(20)]
            assert all(r is not None and "error" not in r for r in replies), f"round {round_}: {replies}\n{daemon.log()}"
            delivered = [subscriber.read() for _ in range(20)]
            assert all(r is not None and "state" not in r["parameters"] for r in delivered), delivered
            seqs += [r["parameters"]["seq"] for r in delivered]
            assert daemon.process.pid == pid and daemon.alive()
        assert seqs == list(range(1, 61)), f"not contiguous: {seqs}"
        assert sender.call("Get", {"path": "/primes/count"})["parameters"]["state"] == 60
        handed = handed_over(daemon)
        assert (handed["connections"], handed["subscriptions"], handed["ended"]) == (2, 1, 0), handed
        log = daemon.log()
        assert log.count("SIGUSR2: handing the connections over to the executable") == 3
    finally:
        assert daemon.terminate() == 0
    assert not os.path.exists(daemon.socket_path), "the last image removes the socket it bound"


def started_from_a_copy(folder):
    """A daemon run from a copy of the executable in `folder`, which the test may replace."""
    executable = os.path.join(folder, "switchyardd")
    shutil.copy2(SWITCHYARDD, executable)
    return executable, started(folder, executable)


def test_sigusr2_runs_the_new_version_installed_at_the_executables_path(folder):
    executable, daemon = started_from_a_copy(folder)
    try:
        sender = RawConnection(daemon.socket_path)
        assert "error" not in sender.call("Send", {"action": INCR})
        # An upgrade as a package manager makes it: the new file renamed over the old.
        upgrade = os.path.join(folder, "switchyardd.new")
        shutil.copy2(SWITCHYARDD, upgrade)
        os.rename(upgrade, executable)
        assert os.readlink(f"/proc/{daemon.process.pid}/exe").endswith("(deleted)")
        reexecute(daemon)
        assert os.stat(f"/proc/{daemon.process.pid}/exe").st_ino == os.stat(executable).st_ino, "the new file runs"
        assert sender.call("Get", {"path": "/primes/count"})["parameters"]["state"] == 1
    finally:
        assert daemon.terminate() == 0


def test_an_executable_that_cannot_be_run_leaves_the_daemon_serving(folder):
    executable, daemon = started_from_a_copy(folder)
    try:
        connection = RawConnection(daemon.socket_path)
        os.chmod(executable, 0o644)
        daemon.process.send_signal(signal.SIGUSR2)
        logged(daemon, "cannot be run again")
        assert "error" not in connection.call("Send", {"action": INCR})
        assert "took over" not in daemon.log() and daemon.alive()
    finally:
        assert daemon.terminate() == 0


def test_a_second_sigusr2_while_the_next_image_starts_neither_ends_it_nor_runs_it_again(folder):
    daemon = started(folder)
    pid = daemon.process.pid
    try:
        connection = RawConnection(daemon.socket_path)
        for delay in (0.03, 0.06, 0.12, 0.25):
            before = daemon.log().count("took over the connections of the process before")
            # Calls in flight: read by one image, they may be handed over twice.
            for _ in range(5):
                connection.send("Send", {"action": INCR})
            daemon.process.send_signal(signal.SIGUSR2)
            time.sleep(delay)
            daemon.process.send_signal(signal.SIGUSR2)
            runs_again(daemon, before)
            try:
                replies = [connection.read() for _ in range(5)]
                assert all(r is not None and "error" not in r for r in replies), replies
                time.sleep(0.3)
                assert daemon.alive() and daemon.process.pid == pid
                assert "error" not in connection.call("Send", {"action": INCR})
            except (OSError, AssertionError) as error:
                pytest.fail(f"after SIGUSR2 twice {delay} s apart: {error!r}\n{daemon.log()}")
        # A second signal that reaches the next image once it serves runs it again, once.
        assert 4 <= daemon.log().count("took over the connections of the process before") <= 8
        assert connection.call("Get", {"path": "/primes/count"})["parameters"]["state"] == 4 * 6
    finally:
        assert daemon.terminate() == 0


def test_a_stop_during_the_handover_wins_the_daemon_exits_rather_than_running_again(folder):
    daemon = started(folder)
    connection = RawConnection(daemon.socket_path)
    for _ in range(5):
        connection.send("Send", {"action": INCR})
    daemon.process.send_signal(signal.SIGUSR2)
    logged(daemon, "SIGUSR2: handing the connections over")
    daemon.process.send_signal(signal.SIGTERM)
    try:
        assert daemon.process.wait(timeout=15) == 0, daemon.log()
    finally:
        if daemon.alive():
            daemon.process.kill()
            daemon.process.wait()
    log = daemon.log()
    assert "took over the connections of the process before" not in log, "it ran again"
    assert "stopping instead of running the executable again" in log
    assert not os.path.exists(daemon.socket_path), "a daemon that stops removes its socket"
    # Its connections end with it: no client is left waiting.
    while (reply := connection.read()) is not None:
        assert "error" not in reply, reply
