"""A restart through systemd's file descriptor store drops nobody (issue 34).

The test plays systemd (fdstore.FdStoreManager): it keeps what the daemon stores and starts the
next daemon with it, as `systemctl restart` does. Clients keep their connections: pipelined
calls are all answered, subscriptions go on with the next change — no snapshot, no gap, no
duplicate. After a kill -9 the connections are ended, so no client waits for nothing.
"""

import os
import shutil
import tempfile

import pytest

from conftest import INCR, SWITCHYARDD, RawConnection
from fdstore import FdStoreManager

# The handover is opt-in while a subscriber can stall across a restart (README): these run in
# `make test-handover` and `make systemd-soak`, not in `make test`.
pytestmark = pytest.mark.handover


@pytest.fixture
def manager():
    folder = tempfile.mkdtemp(prefix="switchyard-handover-")
    socket_path = os.path.join(folder, "switchyard.sock")
    m = FdStoreManager(
        folder, SWITCHYARDD, ["--socket", socket_path], {"SWITCHYARD_STATE_DIRECTORY": os.path.join(folder, "state")}
    )
    m.socket_path = socket_path
    try:
        m.start()
        yield m
    finally:
        m.close()
        shutil.rmtree(folder, ignore_errors=True)


def incr(conn):
    reply = conn.call("Send", {"action": INCR})
    assert "error" not in reply, reply
    return reply


def changes(subscriber, count):
    """The next `count` replies of a subscription."""
    replies = [subscriber.read() for _ in range(count)]
    assert all(r is not None for r in replies), f"the subscription ended: {replies}"
    return replies


def test_a_restart_keeps_every_connection_and_every_subscription_in_place(manager):
    subscriber = RawConnection(manager.socket_path)
    subscriber.send("Subscribe", {"path": "/primes/count"}, more=True)
    first = subscriber.read()
    assert first["parameters"]["state"] == 0
    sender = RawConnection(manager.socket_path)
    for _ in range(3):
        incr(sender)
    seqs = [r["parameters"]["seq"] for r in changes(subscriber, 3)]

    for restart in range(3):
        # Sent before the restart, answered by whichever process reads them.
        for _ in range(20):
            sender.send("Send", {"action": INCR})
        manager.restart()
        try:
            replies = [sender.read() for _ in range(20)]
        except TimeoutError:
            pytest.fail(f"restart {restart}: a pipelined call was not answered\n{manager.log()}")
        assert all(r is not None and "error" not in r for r in replies), f"restart {restart}: {replies}\n{manager.log()}"
        incr(sender)
        try:
            delivered = changes(subscriber, 21)
        except TimeoutError:
            pytest.fail(f"restart {restart}: the subscriber got nothing more\n{manager.log()}")
        assert all("state" not in r["parameters"] for r in delivered), f"a snapshot after the first: {delivered}"
        seqs += [r["parameters"]["seq"] for r in delivered]

    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"not contiguous: {seqs}"
    status = sender.call("Get", {"path": "/primes/count"})
    assert status["parameters"]["state"] == 3 + 3 * 21
    log = manager.log()
    assert "handed the connections over" in log
    assert manager.stop() == 0


def test_a_connection_closed_during_the_handover_is_not_kept(manager):
    kept = RawConnection(manager.socket_path)
    incr(kept)
    gone = RawConnection(manager.socket_path)
    incr(gone)
    assert len([n for n in manager.stored_names() if n.startswith("conn-")]) == 2
    manager.stop()
    gone.close()
    manager.start()
    incr(kept)
    names = [n for n in manager.stored_names() if n.startswith("conn-")]
    assert len(names) == 1, names
    assert "handover-state" not in manager.stored_names(), "the state is read once, then out of the store"
    assert manager.stop() == 0


def test_after_a_crash_the_connections_are_ended_not_left_waiting(manager):
    subscriber = RawConnection(manager.socket_path)
    subscriber.send("Subscribe", {"path": "/primes/count"}, more=True)
    assert subscriber.read()["parameters"]["state"] == 0
    sender = RawConnection(manager.socket_path)
    incr(sender)
    assert subscriber.read()["parameters"]["seq"] >= 1
    manager.kill()
    manager.start()
    assert subscriber.read() is None, "the subscription's connection is ended: its client reconnects"
    assert sender.read() is None
    assert not [n for n in manager.stored_names() if n.startswith("conn-")]
    fresh = RawConnection(manager.socket_path)
    assert fresh.call("Get", {"path": "/primes/count"})["parameters"]["state"] == 1, "what was acknowledged survives"
    assert "ended without handing over" in manager.log()
    assert manager.stop() == 0
