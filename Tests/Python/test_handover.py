"""A restart through systemd's file descriptor store drops nobody (issue 34).

The test plays systemd (fdstore.FdStoreManager): it keeps what the daemon stores and starts the
next daemon with it, as `systemctl restart` does. Clients keep their connections: pipelined
calls are all answered, subscriptions go on with the next change — no snapshot, no gap, no
duplicate. After a kill -9 the connections are ended, so no client waits for nothing. A client
that hangs up during the handover is not taken up, and a full store refuses connections, saying so.
`switchyard status` and the log say what each start took over.
"""

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import termios
import threading
import time

import pytest

from conftest import INCR, SWITCHYARDD, RawConnection
from fdstore import FdStoreManager

# `make test-handover` runs these alone; `make python-test` with the rest.
pytestmark = pytest.mark.handover
CLI = os.path.join(os.path.dirname(SWITCHYARDD), "switchyard")


def started_manager(capacity=64):
    folder = tempfile.mkdtemp(prefix="switchyard-handover-")
    socket_path = os.path.join(folder, "switchyard.sock")
    m = FdStoreManager(
        folder, SWITCHYARDD, ["--socket", socket_path], {"SWITCHYARD_STATE_DIRECTORY": os.path.join(folder, "state")},
        capacity=capacity,
    )
    m.socket_path = socket_path
    m.start()
    return m


@contextlib.contextmanager
def running_manager(capacity=64):
    """A started manager, closed and its folder removed at the end."""
    m = started_manager(capacity)
    try:
        yield m
    finally:
        m.close()
        shutil.rmtree(m.folder, ignore_errors=True)


@pytest.fixture
def manager():
    with running_manager() as m:
        yield m


def status(manager, *arguments):
    """`switchyard status` on the manager's daemon."""
    out = subprocess.run(
        [CLI, "--socket", manager.socket_path, "status", *arguments], capture_output=True, text=True, timeout=30,
        env={k: v for k, v in os.environ.items() if not k.startswith("SWITCHYARD_")},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def took_over(manager):
    """The log lines of the latest start that say what it took over."""
    latest = manager.log().rsplit("--- switchyardd-", 1)[-1]
    return [line for line in latest.splitlines() if "took over the connections of the process before" in line]


def incr(conn):
    reply = conn.call("Send", {"action": INCR})
    assert "error" not in reply, reply
    return reply


def subscribed(manager):
    """A connection subscribed to /primes/count, past its snapshot of a fresh daemon."""
    subscriber = RawConnection(manager.socket_path)
    subscriber.send("Subscribe", {"path": "/primes/count"}, more=True)
    assert subscriber.read()["parameters"]["state"] == 0
    return subscriber


def changes(subscriber, count):
    """The next `count` replies of a subscription."""
    replies = [subscriber.read() for _ in range(count)]
    assert all(r is not None for r in replies), f"the subscription ended: {replies}"
    return replies


def test_a_restart_keeps_every_connection_and_every_subscription_in_place(manager):
    subscriber = subscribed(manager)
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
    count = sender.call("Get", {"path": "/primes/count"})
    assert count["parameters"]["state"] == 3 + 3 * 21
    log = manager.log()
    assert "handed the connections over" in log
    lines = took_over(manager)
    assert len(lines) == 1 and "info" in lines[0] and "connections=2" in lines[0] and "subscriptions=1" in lines[0], lines
    handed = json.loads(status(manager, "--json"))["handOver"]
    assert (handed["connections"], handed["subscriptions"], handed["ended"]) == (2, 1, 0), handed
    assert 0 <= handed["pause"] < 20, handed
    text = status(manager)
    assert "Restart: took over 2 connections and 1 subscription from the process before, serving paused" in text, text
    # A handover ends the worker at once rather than waiting for it to stop by itself.
    ended = [line for line in manager.log().splitlines() if "worker ended" in line and "shut down by the supervisor" in line]
    assert len(ended) == 3 and all("with SIGKILL" in line for line in ended), ended
    assert manager.stop() == 0


def test_replies_the_client_has_not_read_yet_go_out_before_its_connection_is_handed_over(manager):
    """Most connections have nothing waiting to be written at a handover and go at once; one whose
    client has not read its replies goes once they are written, and loses none of them."""
    caller = RawConnection(manager.socket_path)
    total = 20000
    # More replies than the socket holds: the rest wait in the old process's channel, and the
    # calls behind them in the socket, until the client reads.
    sender = threading.Thread(target=lambda: [caller.send("Get", {"path": "/primes"}) for _ in range(total)], daemon=True)
    sender.start()
    time.sleep(0.5)
    replies = []
    reader = threading.Thread(target=lambda: (time.sleep(0.5), replies.extend(caller.read() for _ in range(total))), daemon=True)
    reader.start()
    manager.restart()
    reader.join(timeout=60)
    sender.join(timeout=60)
    assert len(replies) == total, f"{len(replies)} of {total} replies\n{manager.log()}"
    assert all(r is not None and "error" not in r for r in replies), [r for r in replies if r is None or "error" in r][:3]
    assert "handed the connections over" in manager.log()
    lines = took_over(manager)
    assert len(lines) == 1 and "connections=1" in lines[0], lines


def test_a_burst_of_connections_past_what_the_managers_queue_holds_is_kept_soon_after():
    # systemd's notification socket queues 10 datagrams (net.unix.max_dgram_qlen): a manager
    # that reads nothing meanwhile lets most of a burst fail to be stored as it is admitted.
    with running_manager(capacity=256) as m:
        with m.lock:
            connections = [RawConnection(m.socket_path) for _ in range(60)]
            for connection in connections:
                assert "error" not in connection.call("Get", {"path": "/primes/count"})
        deadline = time.monotonic() + 10
        while len([n for n in m.stored_names() if n.startswith("conn-")]) < len(connections):
            assert time.monotonic() < deadline, f"kept: {m.stored_names()}"
            time.sleep(0.05)
        assert m.stop() == 0


def test_connections_past_one_adoption_batch_are_all_taken_over_and_a_starting_worker_answers_them():
    # The next process adopts 32, then 512 at a time, and serves them before its worker is up:
    # each of 600 connections (three batches) has a Send to the worker-hosted counter in flight,
    # answered once it is.
    with running_manager(capacity=1024) as m:
        senders = []
        while len(senders) < 600:
            # A burst past the listening socket's backlog is refused for a moment (EAGAIN).
            try:
                senders.append(RawConnection(m.socket_path))
            except BlockingIOError:
                time.sleep(0.01)
        # Ones the store missed in the burst are kept soon after, or else at the handover.
        for sender in senders:
            incr(sender)
        for sender in senders:
            sender.send("Send", {"action": INCR})
        m.restart()
        replies = [sender.read() for sender in senders]
        assert all(r is not None and "error" not in r for r in replies), f"{replies}\n{m.log()}"
        count = senders[-1].call("Get", {"path": "/primes/count"})
        assert count["parameters"]["state"] == 2 * len(senders)
        # Every connection goes on being served by the next process: none was closed.
        after = [sender.call("Get", {"path": "/primes/count"}) for sender in senders]
        assert all("error" not in r for r in after), after
        handed = json.loads(status(m, "--json"))["handOver"]
        assert (handed["connections"], handed["ended"]) == (len(senders), 0), handed
        assert m.stop() == 0


def test_a_client_that_hangs_up_during_the_handover_is_neither_taken_up_nor_left_in_the_store(manager):
    subscriber = subscribed(manager)
    # A client that pipelines and reads nothing: the replies (Describe's are kilobytes) fill its
    # socket, and the old process cannot hand the connection over before they are written.
    hog = RawConnection(manager.socket_path)
    assert "error" not in hog.call("Describe")
    frame = json.dumps({"method": "io.switchyard.Store.Describe"}).encode() + b"\0"

    def flood():
        try:
            hog.sock.settimeout(None)
            hog.sock.sendall(frame * 20000)
        except OSError:
            pass

    flooding = threading.Thread(target=flood, daemon=True)
    flooding.start()
    kept = [n for n in manager.stored_names() if n.startswith("conn-")]
    assert len(kept) == 2, kept
    # The daemon is stuck on the hog once the replies waiting in its socket stop growing.
    unread, deadline = -1, time.monotonic() + 30
    while unread != (unread := waiting_bytes(hog.sock)) or unread == 0:
        assert time.monotonic() < deadline, "the hog's replies never filled its socket"
        time.sleep(0.5)
    manager.process.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert manager.process.poll() is None, f"the old process did not wait for the replies it owed:\n{manager.log()}"
    hog.sock.shutdown(socket.SHUT_RDWR)
    hog.close()
    started = time.monotonic()
    assert manager.process.wait(8) == 0, manager.log()
    assert time.monotonic() - started < 5, "the old process waited for a client that had hung up"
    manager.start()
    names = [n for n in manager.stored_names() if n.startswith("conn-")]
    assert len(names) == 1, f"the hung-up connection is still in the store: {names}"
    lines = took_over(manager)
    assert len(lines) == 1 and "connections=1" in lines[0] and "subscriptions=1" in lines[0], lines
    # The subscription that stayed goes on from where it was.
    count = RawConnection(manager.socket_path).call("Get", {"path": "/primes/count"})["parameters"]
    incr(RawConnection(manager.socket_path))
    seqs = []
    while not seqs or seqs[-1] < count["seq"] + 1:
        reply = subscriber.read()
        assert reply is not None and "state" not in reply["parameters"], reply
        seqs.append(reply["parameters"]["seq"])
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert manager.stop() == 0


def waiting_bytes(sock):
    """How many bytes the socket has received and its client not read."""
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]


def test_a_full_store_refuses_the_connections_over_it_with_an_error_and_says_so():
    # Four places: one for the state handed over, three for connections.
    with running_manager(capacity=4) as manager:
        kept = [RawConnection(manager.socket_path) for _ in range(3)]
        for conn in kept:
            incr(conn)
        refused = RawConnection(manager.socket_path)
        error = refused.read()
        assert error is not None and error.get("error") == "io.switchyard.Store.TooManyConnections", error
        assert refused.read() is None, "the refused connection is closed"
        assert "the file descriptor store is full" in manager.log()
        assert len([n for n in manager.stored_names() if n.startswith("conn-")]) == 3
        manager.restart()
        for conn in kept:
            incr(conn)
        again = RawConnection(manager.socket_path)
        assert again.read().get("error") == "io.switchyard.Store.TooManyConnections"
        # A place freed is a place for the next connection.
        kept.pop().close()
        deadline = time.monotonic() + 5
        while len([n for n in manager.stored_names() if n.startswith("conn-")]) > 2:
            assert time.monotonic() < deadline, manager.stored_names()
            time.sleep(0.05)
        incr(RawConnection(manager.socket_path))
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
    subscriber = subscribed(manager)
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
    lines = took_over(manager)
    assert len(lines) == 1 and "connections=0" in lines[0] and "ended=2" in lines[0], lines
    handed = json.loads(status(manager, "--json"))["handOver"]
    assert (handed["connections"], handed["ended"], "pause" in handed) == (0, 2, False), handed
    assert "ended 2 connections the process before left no state for (it crashed)" in status(manager)
    assert manager.stop() == 0
