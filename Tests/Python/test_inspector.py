"""The inspector's HTTP routes as a browser and a hostile local user reach them: the token that
only an admin's Status gives, the timeline's pages, past states, the live event stream and its
resumption, and the bounds on what a client can make the daemon hold."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from conftest import INCR
from inspector_support import EventStream, fetch, inspected_daemon, read_json, start_inspected_daemon
from test_metrics import samples, value

DECR = {"counter": {"decrTapped": {}}}


@pytest.fixture
def inspected():
    yield from inspected_daemon()


def send(daemon, *actions):
    with daemon.raw() as connection:
        reply = connection.call("SendBatch", {"actions": list(actions)})
    assert "error" not in reply, reply
    return reply["parameters"]["seq"]


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def test_status_gives_an_admin_the_inspectors_url_with_its_token(inspected):
    assert inspected.inspector == f"http://127.0.0.1:{inspected.http_port}/inspector?token={inspected.token}"
    assert len(inspected.token) == 64
    status, page = fetch(inspected, "/inspector")
    assert status == 200
    assert b"Switchyard inspector" in page


PEER_CALL = os.path.join(os.path.dirname(__file__), "..", "DaemonTests", "Access", "peer_call.py")


@pytest.fixture
def open_socket_daemon():
    """Its socket open to every user, so that what a caller gets is the policy's doing."""
    yield from inspected_daemon({"SWITCHYARD_SOCKET_MODE": "0666"})


def test_status_gives_the_url_to_no_caller_who_may_not_read_the_journal(open_socket_daemon):
    os.chmod(open_socket_daemon.folder, 0o755)
    # A member of the socket's group (root's here) may read and write, not administer.
    member = subprocess.run(
        ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--groups=0", "/usr/bin/python3", PEER_CALL,
         open_socket_daemon.socket_path, json.dumps({"method": "io.switchyard.Store.Status"})],
        capture_output=True, text=True, timeout=30,
    )
    reply = json.loads(member.stdout.splitlines()[0])
    assert "error" not in reply, reply
    assert "seq" in reply["parameters"]
    assert "inspector" not in reply["parameters"]
    assert open_socket_daemon.token and open_socket_daemon.token not in member.stdout


@pytest.mark.parametrize("environment", [
    {"SWITCHYARD_HTTP_INSPECTOR": "off"},
    # On every address: its token would cross the network in the clear, so not without asking.
    {"SWITCHYARD_HTTP_LISTEN": "0.0.0.0:{port}"},
])
def test_the_inspector_is_served_only_where_it_may_be(environment):
    folder = tempfile.mkdtemp(prefix="switchyard-py-")
    try:
        daemon = start_inspected_daemon(folder, environment)
        try:
            assert daemon.inspector is None
            status, _ = fetch(daemon, "/inspector", token=None)
            assert status == 404
            assert fetch(daemon, "/metrics", token=None)[0] == 200
        finally:
            assert daemon.terminate() == 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_every_read_needs_the_token_and_the_pages_files_do_not(inspected):
    wrong_of_same_length = ("0" if inspected.token[0] != "0" else "1") + inspected.token[1:]
    for path in ("/inspector", "/inspector/api/health", "/inspector/api/journal", "/inspector/api/state", "/inspector/events"):
        for token in (None, "x", wrong_of_same_length):
            status, body = fetch(inspected, path, token=token)
            assert status == 401, (path, token, status)
            assert b"switchyard status" in body
    # The bearer header is as good as the query.
    status, _ = fetch(inspected, "/inspector/api/health", token=None, headers={"Authorization": f"Bearer {inspected.token}"})
    assert status == 200
    status, _ = fetch(inspected, "/inspector/api/health", token=None, headers={"Authorization": "Bearer nope"})
    assert status == 401
    # The page's own files hold nothing of the daemon.
    for name in ("app.js", "inspector.css", "icon.svg"):
        status, _ = fetch(inspected, f"/inspector/assets/{name}", token=None)
        assert status == 200, name


def test_the_page_is_served_with_headers_that_keep_its_token_to_itself(inspected):
    import urllib.request

    with urllib.request.urlopen(f"{inspected.inspector}", timeout=10) as response:
        assert response.headers["Referrer-Policy"] == "no-referrer"
        assert response.headers["Cache-Control"] == "no-store"
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]


def test_the_timeline_pages_back_newest_first_through_the_whole_journal(inspected):
    last = send(inspected, *([INCR] * 25 + [DECR] * 5))
    page = read_json(inspected, "/inspector/api/journal", limit=10)
    assert [entry["seq"] for entry in page["entries"]] == list(range(last, last - 10, -1))
    assert page["latest"] == last
    assert page["entries"][0]["case"] == "counter.decrTapped"
    assert page["entries"][0]["feature"] == "primes"
    assert page["entries"][0]["origin"] == "request"
    assert page["entries"][0]["uid"] == 0 and page["entries"][0]["pid"] > 0
    seen = [entry["seq"] for entry in page["entries"]]
    while page["next"] is not None:
        page = read_json(inspected, "/inspector/api/journal", limit=10, before=page["next"])
        seen += [entry["seq"] for entry in page["entries"]]
    assert seen == sorted(set(seen), reverse=True)
    assert set(range(last - 29, last + 1)) <= set(seen)
    # Filtered by action case: only the increments, newest first.
    page = read_json(inspected, "/inspector/api/journal", action="counter.incrTapped", limit=100)
    assert [entry["case"] for entry in page["entries"]] == ["counter.incrTapped"] * len(page["entries"])
    assert len(page["entries"]) >= 25
    assert read_json(inspected, "/inspector/api/journal", feature="nope")["entries"] == []
    # After a seq: the changes that follow it, newest first.
    page = read_json(inspected, "/inspector/api/journal", after=last - 3)
    assert [entry["seq"] for entry in page["entries"]] == [last, last - 1, last - 2]


def test_each_change_says_how_long_its_reduction_took_as_the_metrics_measured_it(inspected):
    send(inspected, INCR)  # primes: a worker process times it and sends the time with its answer
    send(inspected, {"signUp": {"emailChanged": "ada@example.com"}})  # signUp: an actor on the loop
    entries = {entry["feature"]: entry for entry in read_json(inspected, "/inspector/api/journal", limit=2)["entries"]}
    assert set(entries) == {"primes", "signUp"}
    assert all(entry["reduceNanoseconds"] > 0 for entry in entries.values()), entries
    # signUp reduced one action: the histogram's sum is that one measurement, the journal's.
    status, body = fetch(inspected, "/metrics", token=None)
    assert status == 200
    parsed = samples(body.decode())
    assert value(parsed, "switchyard_reduce_duration_seconds_count", feature="signUp") == 1
    journaled = entries["signUp"]["reduceNanoseconds"] / 1e9
    assert value(parsed, "switchyard_reduce_duration_seconds_sum", feature="signUp") == pytest.approx(journaled, abs=1e-9)
    assert value(parsed, "switchyard_reduce_duration_seconds_sum", feature="primes") >= entries["primes"]["reduceNanoseconds"] / 1e9 - 1e-9


def test_subscribers_per_path_are_a_figure_of_the_metrics_the_health_view_reads(inspected):
    with inspected.raw() as first, inspected.raw() as second, inspected.raw() as third:
        for connection, path in ((first, "/primes/count"), (second, "/primes/count"), (third, "/signUp")):
            connection.send("Subscribe", {"path": path}, more=True)
            assert "error" not in connection.read()
        status, body = fetch(inspected, "/metrics", token=None)
        parsed = samples(body.decode())
        assert value(parsed, "switchyard_path_subscribers", path="/primes/count") == 2
        assert value(parsed, "switchyard_path_subscribers", path="/signUp") == 1
        assert value(parsed, "switchyard_subscribers") == 3
    # A path nobody follows any more is gone from the figure.
    deadline = time.monotonic() + 5
    while "switchyard_path_subscribers{" in fetch(inspected, "/metrics", token=None)[1].decode() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "switchyard_path_subscribers{" not in fetch(inspected, "/metrics", token=None)[1].decode()


def test_health_gives_the_history_and_the_journals_size(inspected):
    send(inspected, INCR)
    health = read_json(inspected, "/inspector/api/health")
    with inspected.raw() as connection:
        subscribed = connection.call("Subscribe", {"path": "/primes/count"}, more=True)["parameters"]
    # The journal's id is the history's, which a subscriber resumes in.
    assert health["status"]["durability"]["journal"] == subscribed["history"]
    assert health["journalBytes"] > 4096
    assert health["status"]["durability"]["mode"] in ("strict", "batched", "off")


def test_the_state_at_a_seq_before_and_after_a_change(inspected):
    last = send(inspected, INCR, INCR, INCR)
    now = read_json(inspected, "/inspector/api/state", path="/primes")
    assert now["seq"] == last
    before = read_json(inspected, "/inspector/api/state", path="/primes", at=last - 1)
    after = read_json(inspected, "/inspector/api/state", path="/primes", at=last)
    assert after["state"]["count"] == before["state"]["count"] + 1
    status, body = fetch(inspected, f"/inspector/api/state?path=/primes&at={last + 100}")
    assert status == 404 and b"not journaled yet" in body
    status, _ = fetch(inspected, "/inspector/api/state?path=/nowhere")
    assert status == 404


def test_health_is_status_and_the_features(inspected):
    send(inspected, INCR)
    health = read_json(inspected, "/inspector/api/health")
    assert health["status"]["actions"] >= 1
    assert "inspector" not in health["status"]
    names = {feature["name"]: feature for feature in health["features"]}
    assert names["primes"]["isolation"] == "process"
    assert any(feature["isolation"] == "process" for feature in health["features"])


def test_the_replay_check_reports_what_replaying_the_journal_found(inspected):
    last = send(inspected, INCR, INCR, DECR)
    report = read_json(inspected, "/inspector/api/replay")
    assert report["replayed"] == last and report["to"] == last
    assert "difference" not in report
    status, _ = fetch(inspected, "/inspector/api/replay?since=x")
    assert status == 400


def test_bad_paths_methods_and_queries_are_refused_and_the_daemon_goes_on(inspected):
    cases = [
        ("/inspector/nothing", 404),
        ("/inspector/assets/../api/health", 404),
        ("/inspector/assets/%2e%2e/x", 404),
        ("/inspector/api/journal?before=abc", 400),
        ("/inspector/api/journal?limit=100000", 400),
        ("/inspector/api/journal?before=99999999999999999999999", 400),
        ("/inspector/api/state?path=nopointer", 400),
        ("/inspector/api/journal?feature=%ZZ", 400),
        ("/inspector/api/journal?feature=" + "x" * 2000, 400),
        ("/inspector/api/journal?" + "&".join(f"p{i}=1" for i in range(40)), 400),
    ]
    for path, expected in cases:
        status, _ = fetch(inspected, path)
        assert status == expected, (path, status)
    import urllib.error
    import urllib.request

    request = urllib.request.Request(inspected.inspector, data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=10)
    assert error.value.code == 405
    # A query of hundreds of kilobytes: the connection is closed before the daemon holds it.
    before = resident_kib(inspected.process.pid)
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", inspected.http_port), timeout=10) as hostile:
            try:
                hostile.sendall(b"GET /inspector/api/journal?feature=" + b"a" * (1 << 20) + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            try:
                assert not hostile.recv(64).startswith(b"HTTP/1.1 200")
            except ConnectionResetError:
                pass
    assert resident_kib(inspected.process.pid) - before < 16 * 1024
    assert inspected.get("/primes/count")[1] == 0


def test_the_event_stream_follows_new_changes_and_resumes_after_the_last_id(inspected):
    first = send(inspected, INCR)
    stream = EventStream(inspected, since=first)
    assert stream.status == 200
    assert stream.response.headers["Content-Type"].startswith("text/event-stream")
    last = send(inspected, INCR, DECR, INCR)
    events = [stream.next() for _ in range(3)]
    assert [int(event["id"]) for event in events] == [first + 1, first + 2, last]
    assert [event["event"] for event in events] == ["change"] * 3
    assert [event["data"]["case"] for event in events] == ["counter.incrTapped", "counter.decrTapped", "counter.incrTapped"]
    assert events[0]["data"]["patch"][0]["path"] == "/primes/count"
    stream.close()
    # Gone while changes are made: the browser comes back with the last id it saw.
    newest = send(inspected, INCR, INCR)
    resumed = EventStream(inspected, since=0, last_event_id=first + 2)
    assert [int(resumed.next()["id"]) for _ in range(newest - first - 2)] == list(range(first + 3, newest + 1))
    resumed.close()


def test_event_streams_are_bounded_in_number(inspected):
    # From other addresses than the test's: each address holds a few of the endpoint's connections.
    streams = [EventStream(inspected, source=f"127.0.3.{1 + i}") for i in range(8)]
    try:
        assert [stream.status for stream in streams] == [200] * 8
        refused = EventStream(inspected, source="127.0.3.20")
        assert refused.status == 503
        refused.close()
    finally:
        for stream in streams:
            stream.close()
    # Closed viewers give their slots back.
    deadline = time.monotonic() + 5
    while True:
        again = EventStream(inspected, source="127.0.3.30")
        status = again.status
        again.close()
        if status == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert status == 200


def test_a_viewer_that_stops_reading_is_dropped_with_memory_bounded_and_varlink_undisturbed(inspected):
    send(inspected, INCR)
    slow = EventStream(inspected, receive_buffer=4096)
    assert slow.status == 200
    before = resident_kib(inspected.process.pid)
    stop = threading.Event()
    sent = [0]

    def load():
        while not stop.is_set():
            send(inspected, *([INCR] * 200))
            sent[0] += 200

    writer = threading.Thread(target=load, daemon=True)
    writer.start()
    worst = 0.0
    try:
        # Past the stream's write timeout (10 s) with changes coming all along; meanwhile a
        # Varlink client is answered promptly.
        deadline = time.monotonic() + 14
        while time.monotonic() < deadline:
            started = time.monotonic()
            inspected.get("/primes/count")
            worst = max(worst, time.monotonic() - started)
            time.sleep(0.1)
        grown = resident_kib(inspected.process.pid) - before
    finally:
        stop.set()
        writer.join()
    # The daemon closed the stream: what the kernel holds of it ends, however long it is read.
    slow.connection.sock.settimeout(5)
    ended = False
    try:
        while slow.connection.sock.recv(65536):
            pass
        ended = True
    except socket.timeout:
        pass
    except OSError:
        ended = True
    slow.close()
    assert sent[0] > 2000
    assert ended, f"the daemon still streams to a viewer that stopped reading ({sent[0]} changes sent)"
    assert worst < 2.0, f"a Get took {worst:.2f} s while a viewer did not read"
    assert grown < 64 * 1024, f"the daemon grew by {grown} KiB for a viewer that does not read"


def test_every_event_stream_open_under_load_keeps_memory_bounded_and_varlink_prompt(inspected):
    # The most streams there may be, each from its own address, each read at once, while changes come.
    streams = [EventStream(inspected, source=f"127.0.4.{1 + i}") for i in range(8)]
    assert [stream.status for stream in streams] == [200] * 8
    # A resumption header of any length is read for its first digits only.
    hostile = EventStream(inspected, source="127.0.4.20", last_event_id="9" * 4000)
    assert hostile.status == 503
    hostile.close()
    counts = [0] * len(streams)
    lasts = [0] * len(streams)

    def read(index):
        try:
            while (event := streams[index].next()) is not None:
                counts[index] += 1
                lasts[index] = int(event["id"])
        except (OSError, ValueError):
            pass  # closed by the test

    readers = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(len(streams))]
    for reader in readers:
        reader.start()
    before = resident_kib(inspected.process.pid)
    worst, last = 0.0, 0
    try:
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            last = send(inspected, *([INCR] * 200))
            started = time.monotonic()
            inspected.get("/primes/count")
            worst = max(worst, time.monotonic() - started)
        caught_up = time.monotonic() + 15
        while min(lasts) < last and time.monotonic() < caught_up:
            time.sleep(0.05)
        grown = resident_kib(inspected.process.pid) - before
    finally:
        for stream in streams:
            stream.close()
    assert lasts == [last] * len(streams), f"the viewers fell behind: {lasts} of {last}"
    assert min(counts) >= last - 200
    assert worst < 2.0, f"a Get took {worst:.2f} s with every event stream open"
    assert grown < 64 * 1024, f"the daemon grew by {grown} KiB for {len(streams)} viewers"
