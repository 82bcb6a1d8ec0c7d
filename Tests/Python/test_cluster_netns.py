"""The cluster on PostgreSQL under failure, end to end (the members, the network and the
database are `cluster_support`'s).

Round after round the leader is killed (kill -9) or cut off (its link down) while a client in
the fifth namespace pipelines Sends over TLS, following the leader a standby names, and a
subscriber follows each daemon through its Unix socket; a leader paused longer than its lease
is deposed. Then the history is checked: every acknowledged Send is in the journal exactly once
and in the final state of every daemon, seq never repeats nor goes back, every subscriber's
sequence is contiguous, and a leader cut off or deposed acknowledged nothing once it no longer
led. SWITCHYARD_CLUSTER_ROUNDS rounds (`make test`: 10; `make soak-cluster`: 100), the lease at
its default; the failover time (leader gone → first Send acknowledged by the next) is printed
as p50 and p99, killed and cut off apart."""

import os
import signal
import subprocess
import time

import pytest

from cluster_support import (  # noqa: F401 (fixtures)
    INCREMENT, LEASE, PORT, Restarts, Sender, Subscriber, cluster, database, inside, leader_of, network, percentile,
    postgres_diagnostics, run,
)
from conftest import RawConnection

ROUNDS = int(os.environ.get("SWITCHYARD_CLUSTER_ROUNDS", "10"))


def load(members, tls, namespaces):
    """A client pipelining Sends over TLS from its namespace, and a subscriber per daemon, started."""
    sender = Sender(namespaces["cl"], [f"tcp:{member.address}:{PORT}" for member in members], tls)
    subscribers = [Subscriber(member) for member in members]
    for thread in (sender, *subscribers):
        thread.start()
    return sender, subscribers


def get(member, path):
    """`Get` on the member's socket; `None` while it is being started again."""
    try:
        return member.call("Get", {"path": path})["parameters"]
    except OSError:
        return None


def check_history(members, sender, subscribers):
    """Every daemon reaches the leader's last change with the same state, and the history holds:
    each seq once in the journal, each acknowledged Send in it, each subscriber's sequence
    contiguous up to the last change. The last change's `{seq, state}`."""
    leader = leader_of(members)
    last = leader.call("Get", {"path": "/primes/count"})["parameters"]
    for member in members:
        end = time.monotonic() + 20
        while get(member, "/primes/count") != last:
            assert time.monotonic() < end, f"{member.name} never reached {last}:\n{member.daemon.log()[-3000:]}"
            time.sleep(0.05)
    time.sleep(0.5)
    for subscriber in subscribers:
        subscriber.stopping.set()
        subscriber.join(timeout=5)
    # A long run's journal is pruned behind its snapshots: it is read from its oldest change.
    entries, since = [], 0
    while True:
        reply = leader.call("Journal", {"since": since, "limit": 1000})
        if not entries and reply.get("error") == "io.switchyard.Store.SeqNotRetained":
            # The journal holds the changes after its oldest state: read from there, once.
            assert since < reply["parameters"]["oldest"], reply
            since = reply["parameters"]["oldest"]
            continue
        assert "error" not in reply, reply
        page = reply["parameters"]
        entries += [entry["seq"] for entry in page["entries"]]
        if page.get("next") is None or not page["entries"]:
            break
        since = page["next"]
    assert entries and entries == list(range(entries[0], last["seq"] + 1)), "the journal holds each seq once, in order"
    assert last["state"] == last["seq"], "each change is one increment: the state is their fold"
    acknowledged = [seq for seq, _, _ in sender.acknowledged]
    assert len(acknowledged) == len(set(acknowledged)), "no seq was acknowledged twice"
    assert all(1 <= seq <= last["seq"] for seq in acknowledged), "every acknowledged Send is in the journal"
    for subscriber in subscribers:
        assert subscriber.gaps == [], f"{subscriber.member.name}'s subscriber saw gaps: {subscriber.gaps[:5]}"
        assert subscriber.seqs and subscriber.seqs[-1] == last["seq"], f"{subscriber.member.name}'s subscriber stopped at {subscriber.seqs[-1:]}"
    return last


def taken_over(sender, gone, address, deadline, while_waiting=lambda: None):
    """Waits for the first Send acknowledged by a daemon other than the one at `address` after
    `gone`; how long after `gone` it came."""
    while not any(when > gone and other != address for _, other, when in sender.acknowledged):
        assert time.monotonic() < deadline, "no daemon took over"
        while_waiting()
        time.sleep(0.01)
    return min(when for _, other, when in sender.acknowledged if when > gone and other != address) - gone


def back_as_standby(member, within=20):
    end = time.monotonic() + within
    while (member.cluster() or {}).get("role") != "standby":
        assert time.monotonic() < end, f"{member.name} did not come back as a standby:\n{member.daemon.log()[-3000:]}"
        time.sleep(0.05)


def run_rounds(members, links, sender, restarts):
    """ROUNDS times, the leader killed or (every other round) cut off, then started again as a
    standby; the failover times by kind, and what a leader cut off acknowledged through its own
    socket (seq, seconds after it was cut off)."""
    failovers, cut_off_acknowledgements = [], []
    round_ = 0
    while round_ < ROUNDS:
        leader = leader_of(members)
        with restarts.holding(leader):
            if not leader.daemon.alive():
                # It stopped on its own since (deposed under load): the restarts bring it back.
                continue
            time.sleep(0.3)
            assert sender.acknowledged, "nothing was acknowledged before the round"
            leader_address = f"tcp:{leader.address}:{PORT}"
            gone = time.monotonic()
            cut = round_ % 2 == 1
            probe = None
            if cut:
                namespace, link = links[leader.name]
                run(*inside(namespace, "ip", "link", "set", link, "down"))
                probe = RawConnection(leader.daemon.socket_path)
                probe.sock.settimeout(0.2)
            else:
                leader.kill()

            def ask_the_cut_off_leader():
                # Through its own socket: a leader cut off acknowledges nothing once its lease ran out.
                if probe is None:
                    return
                try:
                    probe.send("Send", INCREMENT)
                    reply = probe.read()
                    if reply is not None and "error" not in reply:
                        cut_off_acknowledgements.append((reply["parameters"]["seq"], time.monotonic() - gone))
                except (OSError, AssertionError):
                    pass

            try:
                failovers.append(("cut off" if cut else "killed", taken_over(sender, gone, leader_address, gone + 30, ask_the_cut_off_leader)))
            except AssertionError:
                pytest.fail(f"no daemon took over in round {round_}:\n" + "\n".join(m.daemon.log()[-3000:] for m in members))
            if cut:
                probe.close()
                # It stops once it could not reach the database for a whole lease.
                try:
                    leader.daemon.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    leader.kill()
                run(*inside(namespace, "ip", "link", "set", link, "up"))
            try:
                leader.start()
            except RuntimeError as error:
                pytest.fail(f"round {round_} ({'cut off' if cut else 'killed'}): {error}\n{postgres_diagnostics(leader.namespace)}")
            back_as_standby(leader)
        round_ += 1
    return failovers, cut_off_acknowledgements


def test_the_leader_killed_or_cut_off_round_after_round_loses_nothing_acknowledged(cluster):
    members, tls, namespaces, links = cluster
    sender, subscribers = load(members, tls, namespaces)
    with Restarts(members) as restarts:
        try:
            failovers, cut_off_acknowledgements = run_rounds(members, links, sender, restarts)
        finally:
            sender.stopping.set()
            sender.join(timeout=10)
        last = check_history(members, sender, subscribers)
    assert restarts.unexpected == [], f"a daemon stopped on its own, not for its lease: {restarts.unexpected}"
    for kind in ("killed", "cut off"):
        times = [seconds for which, seconds in failovers if which == kind]
        if times:
            print(f"\nfailover, leader {kind}, over {len(times)} rounds: p50 {percentile(times, 0.5) * 1000:.0f} ms, "
                  f"p99 {percentile(times, 0.99) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms")
    late = [(seq, after) for seq, after in cut_off_acknowledgements if after > LEASE]
    assert late == [], f"a leader cut off acknowledged after its lease ran out: {late}"
    assert all(seq <= last["seq"] for seq, _ in cut_off_acknowledgements)
    print(f"{len(sender.acknowledged)} Sends acknowledged, seq {last['seq']}; "
          f"started again after losing the lease on their own: {restarts.restarted or 'none'}")


def test_a_leader_paused_longer_than_its_lease_is_deposed_stops_and_follows_once_started_again(cluster):
    members, tls, namespaces, _ = cluster
    sender, subscribers = load(members, tls, namespaces)
    with Restarts(members) as restarts:
        try:
            leader = leader_of(members)
            time.sleep(0.3)
            assert sender.acknowledged, "nothing was acknowledged before the pause"
            leader_address, starts = f"tcp:{leader.address}:{PORT}", leader.starts
            process = leader.daemon.process
            paused = time.monotonic()
            os.kill(process.pid, signal.SIGSTOP)
            try:
                taken_over(sender, paused, leader_address, paused + 30)
            finally:
                os.kill(process.pid, signal.SIGCONT)
            first_of_the_next = min(seq for seq, address, when in sender.acknowledged if when > paused and address != leader_address)
            # Resumed, it finds the lease taken, answers what it had read with errors and stops;
            # started again (the unit's Restart=on-failure), it follows the new leader.
            assert process.wait(timeout=10) == 1
            end = time.monotonic() + 20
            while leader.starts == starts:
                assert time.monotonic() < end, f"{leader.name} was not started again: {restarts.unexpected}"
                time.sleep(0.05)
            back_as_standby(leader)
            time.sleep(0.5)
        finally:
            sender.stopping.set()
            sender.join(timeout=10)
        check_history(members, sender, subscribers)
    assert restarts.restarted == [leader.name] and restarts.unexpected == [], (restarts.restarted, restarts.unexpected)
    deposed = [seq for seq, address, _ in sender.acknowledged if address == leader_address and seq >= first_of_the_next]
    assert deposed == [], f"the deposed leader acknowledged changes committed after the next leader's first: {deposed}"
