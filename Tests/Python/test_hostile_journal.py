"""The journal's read surfaces under hostile use, against the real daemon with a state directory.

A client with only write permission can journal large actions (`signUp.emailChanged` with a
900 KB address); every read of the journal must then cost about one change, never all of them:
a `Journal` page is bounded in bytes, `Get` with `at` and a resume's catch-up read one change at
a time, and nothing is encoded on the event loop, so another client's calls go on meanwhile.
Numbers at the edges (`since`, `at`, `limit`, `until`) get errors or empty pages, and none of
them moves a figure an operator reads.

SWITCHYARD_HOSTILE_JOURNAL_MB sets how many megabytes of entries the daemon journals first (20
in `make test`; the issue's measurement used 200). Each test prints the daemon's peak RSS growth
and a pinger's worst latency during the read.
"""

import json
import os
import shutil
import tempfile
import threading
import time

import pytest

from conftest import INCR, Daemon, RawConnection

ENTRY_BYTES = 900_000
MEGABYTES = int(os.environ.get("SWITCHYARD_HOSTILE_JOURNAL_MB", "20"))
ENTRIES = max(4, MEGABYTES * 1_000_000 // ENTRY_BYTES)
# Growth of the daemon's peak RSS one read may cause: a page is 1 MiB of entries, a state
# rebuilt at a past seq holds one change at a time; this is what parsing and encoding them
# costs, with room, far below what the journal holds.
GROWTH_BOUND = 64 << 20


def rss(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


def reset_peak(pid):
    # Linux resets VmHWM to the current RSS on "5" (proc(5), clear_refs).
    with open(f"/proc/{pid}/clear_refs", "w") as clear:
        clear.write("5")


class Pinger:
    """Calls Get on a connection of its own, every few milliseconds, and keeps its worst latency."""

    def __init__(self, socket_path):
        self.socket_path = socket_path
        self.stop = threading.Event()
        self.worst = 0.0
        self.calls = 0
        self.errors = []
        self.thread = threading.Thread(target=self.run)

    def run(self):
        with RawConnection(self.socket_path) as conn:
            conn.sock.settimeout(60)
            while not self.stop.is_set():
                started = time.perf_counter()
                reply = conn.call("Get", {"path": "/primes/count"})
                self.worst = max(self.worst, time.perf_counter() - started)
                self.calls += 1
                if "error" in reply:
                    self.errors.append(reply)
                time.sleep(0.005)

    def __enter__(self):
        self.thread.start()
        time.sleep(0.05)
        return self

    def __exit__(self, *_):
        self.stop.set()
        self.thread.join(timeout=60)


@pytest.fixture(scope="module")
def journaled():
    """A daemon whose journal holds ENTRIES changes of about 1.8 MB each (action and patch), all
    after its one snapshot."""
    folder = tempfile.mkdtemp(prefix="switchyard-hostile-journal-")
    state = os.path.join(folder, "state")
    daemon = Daemon(folder, {"SWITCHYARD_STATE_DIRECTORY": state, "SWITCHYARD_SNAPSHOTS_EVERY": "1000000"})
    try:
        with RawConnection(daemon.socket_path) as conn:
            conn.sock.settimeout(60)
            for index in range(ENTRIES):
                email = f"{index:06d}" + "x" * (ENTRY_BYTES - 6)
                reply = conn.call("Send", {"action": {"signUp": {"emailChanged": email}}})
                assert "error" not in reply, reply
            reply = conn.call("Send", {"action": INCR})
            daemon.latest = reply["parameters"]["seq"]
            conn.send("Subscribe", {"path": "/primes/count"}, more=True)
            daemon.history = conn.read()["parameters"]["history"]
        yield daemon
    finally:
        status = daemon.terminate()
        log = daemon.log()
        shutil.rmtree(folder, ignore_errors=True)
        assert status == 0, f"switchyardd exited with {status} after SIGTERM:\n{log}"


def measured(daemon, read, capsys, what):
    """Runs `read` with a pinger going; returns its result, asserting the daemon's peak RSS grew
    by less than GROWTH_BOUND."""
    pid = daemon.process.pid
    reset_peak(pid)
    before = rss(pid, "VmRSS")
    with Pinger(daemon.socket_path) as pinger:
        result = read()
    growth = rss(pid, "VmHWM") - before
    with capsys.disabled():
        print(f"\n{what} over {ENTRIES} entries of {ENTRY_BYTES // 1000} KB: peak RSS +{growth / 1e6:.1f} MB, "
              f"pinger worst {pinger.worst * 1e3:.1f} ms over {pinger.calls} calls")
    assert pinger.errors == []
    assert growth < GROWTH_BOUND, f"{what}: the daemon's peak RSS grew by {growth / 1e6:.0f} MB"
    return result


def test_a_journal_page_of_large_entries_is_bounded_in_bytes_and_the_rest_follows(journaled, capsys):
    def read_all():
        seqs, since, largest, pages = [], None, 0, 0
        with RawConnection(journaled.socket_path) as conn:
            conn.sock.settimeout(60)
            while True:
                conn.send("Journal", {} if since is None else {"since": since})
                while b"\0" not in conn.buffer:
                    conn.buffer += conn.sock.recv(1 << 20)
                largest = max(largest, conn.buffer.index(b"\0"))
                reply = conn.read()
                assert "error" not in reply, reply
                entries = reply["parameters"]["entries"]
                assert len(entries) <= 2, f"{len(entries)} entries of 1.8 MB in one page"
                seqs += [entry["seq"] for entry in entries]
                pages += 1
                since = reply["parameters"].get("next")
                if since is None:
                    return seqs, largest, pages

    seqs, largest, pages = measured(journaled, read_all, capsys, "Journal, page after page")
    assert seqs == list(range(1, journaled.latest + 1))
    assert largest < 8_000_000, f"a reply of {largest} bytes"


def test_the_state_at_a_past_seq_is_rebuilt_one_change_at_a_time(journaled, capsys):
    def get_at():
        with RawConnection(journaled.socket_path) as conn:
            conn.sock.settimeout(120)
            return conn.call("Get", {"path": "/signUp/email", "at": journaled.latest - 1})

    reply = measured(journaled, get_at, capsys, "Get at")
    assert reply["parameters"]["state"].startswith(f"{ENTRIES - 1:06d}x")


def test_a_resume_from_far_back_is_caught_up_a_page_at_a_time(journaled, capsys):
    def resume():
        with RawConnection(journaled.socket_path) as conn:
            conn.sock.settimeout(120)
            conn.send("Subscribe", {"path": "/primes/count", "since": 1, "history": journaled.history}, more=True)
            seqs = []
            while not seqs or seqs[-1] < journaled.latest:
                seqs.append(conn.read()["parameters"]["seq"])
            return seqs

    seqs = measured(journaled, resume, capsys, "Subscribe since 1")
    # Only the last change touched /primes/count: the catch-up reads them all and sends that one.
    assert seqs == [journaled.latest]


def test_reads_abandoned_by_their_clients_stop(journaled, capsys):
    # Five clients ask for the state at a past seq and hang up at once; a sixth then reads the
    # journal. Were the abandoned reads run to the end, the sixth would wait behind them all.
    started = time.monotonic()
    with RawConnection(journaled.socket_path) as conn:
        conn.sock.settimeout(120)
        conn.call("Get", {"path": "/signUp/email", "at": journaled.latest - 1})
    one = time.monotonic() - started
    for _ in range(5):
        conn = RawConnection(journaled.socket_path)
        conn.send("Get", {"path": "/signUp/email", "at": journaled.latest - 1})
        time.sleep(0.01)
        conn.close()
    started = time.monotonic()
    with RawConnection(journaled.socket_path) as conn:
        conn.sock.settimeout(120)
        reply = conn.call("Journal", {"since": journaled.latest - 1})
    after = time.monotonic() - started
    assert [entry["seq"] for entry in reply["parameters"]["entries"]] == [journaled.latest]
    with capsys.disabled():
        print(f"\none Get at: {one * 1e3:.0f} ms; a Journal call after five abandoned ones: {after * 1e3:.0f} ms")
    assert after < 3 * one + 0.5, f"the abandoned reads ran on: {after:.2f} s behind five of {one:.2f} s"


def status_durability(daemon):
    with RawConnection(daemon.socket_path) as conn:
        return conn.call("Status")["parameters"]["durability"]


@pytest.mark.parametrize("since", [2**63 - 1, 1_000_000, "latest+1"])
def test_a_since_beyond_the_newest_change_is_the_clients_mistake_and_moves_no_figure(journaled, since):
    since = journaled.latest + 1 if since == "latest+1" else since
    with RawConnection(journaled.socket_path) as conn:
        reply = conn.call("Subscribe", {"since": since, "history": journaled.history}, more=True)
    assert reply["error"] == "io.switchyard.Store.SeqNotRetained", reply
    assert reply["parameters"]["seq"] == since and reply["parameters"]["latest"] == journaled.latest
    assert "lost" not in status_durability(journaled)
    assert "acknowledged changes are gone" not in journaled.log()


EDGES = [-1, 0, 1, 2**63 - 1, 2**63, 2**64, -(2**63), 1.5, 1e308, "1", None, True, [], {}]


def test_edge_numbers_in_every_journal_read_get_an_answer_and_change_nothing(journaled):
    """Every combination of edge numbers for the journal's read parameters, pipelined: one reply
    each, an error or a read, never a change, and the daemon the same afterwards."""
    calls = []
    for value in EDGES:
        calls += [
            {"method": "io.switchyard.Store.Get", "parameters": {"at": value}},
            {"method": "io.switchyard.Store.Get", "parameters": {"at": value, "path": "/nope"}},
            {"method": "io.switchyard.Store.Journal", "parameters": {"since": value, "limit": 1}},
            {"method": "io.switchyard.Store.Journal", "parameters": {"until": value, "limit": 1}},
            {"method": "io.switchyard.Store.Journal", "parameters": {"limit": value, "since": journaled.latest - 1}},
            {"method": "io.switchyard.Store.Journal", "parameters": {"feature": value, "limit": 1}},
            {"method": "io.switchyard.Store.Replay", "parameters": {"since": value, "until": 0}},
            {"method": "io.switchyard.Store.Backup", "parameters": {"path": value}},
            {"method": "io.switchyard.Store.Subscribe", "parameters": {"since": value, "history": journaled.history,
                                                                        "path": "/nope"}, "more": True},
        ]
    with RawConnection(journaled.socket_path) as conn:
        conn.sock.settimeout(120)
        conn.write(b"".join(json.dumps(call).encode() + b"\0" for call in calls))
        for call in calls:
            reply = conn.read()
            assert reply is not None, f"the daemon closed the connection after {call}"
            assert reply.get("error") or set(reply["parameters"]) != {"seq"}, f"{call} was applied: {reply}"
            if call["method"].endswith("Backup"):
                assert reply["error"] == "org.varlink.service.InvalidParameter", f"{call}: {reply}"
    assert journaled.alive()
    assert journaled.get("/primes/count") == (journaled.latest, 1)
    assert "lost" not in status_durability(journaled)
