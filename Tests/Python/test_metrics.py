"""The daemon's metrics as a Prometheus server reads them: the text of io.switchyard.Store.Metrics
and of the HTTP endpoint (metrics.listen) parses with the reference client's own parser, and after a
known sequence of calls the counters and histograms hold exactly what those calls made."""

import os
import shutil
import socket
import tempfile
import threading
import time
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import INCR, STORE, Daemon


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def scraped_daemon():
    yield from serve_metrics()


@pytest.fixture
def impatient_daemon():
    """A daemon whose metrics endpoint waits one second for a whole request."""
    yield from serve_metrics({"SWITCHYARD_METRICS_REQUEST_TIMEOUT": "1"})


def serve_metrics(environment=None):
    folder = tempfile.mkdtemp(prefix="switchyard-py-")
    port = free_port()
    try:
        d = Daemon(folder, environment={"SWITCHYARD_METRICS_LISTEN": f"127.0.0.1:{port}", **(environment or {})})
        d.metrics_port = port
        d.metrics_url = f"http://127.0.0.1:{port}/metrics"
        wait_until_listening(port)
        try:
            yield d
        finally:
            assert d.terminate() == 0, d.log()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def wait_until_listening(port):
    """The endpoint binds once the daemon runs, a moment after its Varlink socket accepts."""
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def samples(text):
    """{(name, frozenset(labels)): value} of every sample, through prometheus_client's parser."""
    result = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            result[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return result


def value(parsed, name, **labels):
    return parsed.get((name, frozenset(labels.items())))


def scrape(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return response.read().decode()


def test_metrics_after_a_known_sequence_of_calls(scraped_daemon):
    with scraped_daemon.raw() as conn:
        for _ in range(3):
            assert "error" not in conn.call("Send", {"action": INCR})
        assert conn.call("Get", {"path": "/nope"})["error"] == f"{STORE}.PathNotFound"
        assert conn.call("Explode")["error"] == "org.varlink.service.MethodNotFound"
        reply = conn.call("Metrics")
    text = reply["parameters"]["text"]
    parsed = samples(text)

    calls = "switchyard_calls_total"
    send = f"{STORE}.Send"
    assert value(parsed, calls, method=send, result="ok") == 3
    assert value(parsed, calls, method=f"{STORE}.Get", result=f"{STORE}.PathNotFound") == 1
    assert value(parsed, calls, method=f"{STORE}.Explode", result="org.varlink.service.MethodNotFound") is None
    assert value(parsed, calls, method="other", result="org.varlink.service.MethodNotFound") == 1
    # The Metrics call itself is counted once it is answered: in the next scrape, not its own.
    assert value(parsed, calls, method=f"{STORE}.Metrics", result="ok") is None

    duration = "switchyard_call_duration_seconds"
    assert value(parsed, duration + "_count", method=send) == 3
    assert value(parsed, duration + "_bucket", method=send, le="+Inf") == 3
    assert 0 < value(parsed, duration + "_sum", method=send) < 30

    # The counter lives in a worker process: the worker timed each reduction and sent the time.
    reduce = "switchyard_reduce_duration_seconds"
    assert value(parsed, reduce + "_count", feature="primes") == 3
    assert value(parsed, reduce + "_count", feature="activityFeed") == 0
    assert value(parsed, reduce + "_count", feature="signUp") == 0
    assert value(parsed, "switchyard_mailbox_depth", feature="primes") == 0

    assert value(parsed, "switchyard_actions_total") == 3
    assert value(parsed, "switchyard_sequence_number") == 3
    assert value(parsed, "switchyard_connections") == 1
    assert value(parsed, "switchyard_subscribers") == 0
    assert value(parsed, "switchyard_worker_restarts_total", feature="primes") == 0
    assert value(parsed, "switchyard_worker_up", feature="primes") == 1
    assert value(parsed, "switchyard_worker_resident_memory_bytes", feature="primes") > 1 << 20
    assert value(parsed, "process_resident_memory_bytes") > 1 << 20

    # The HTTP endpoint serves the same metrics, now with the Metrics call counted.
    over_http = samples(scrape(scraped_daemon.metrics_url))
    assert value(over_http, calls, method=send, result="ok") == 3
    assert value(over_http, calls, method=f"{STORE}.Metrics", result="ok") == 1
    assert value(over_http, reduce + "_count", feature="primes") == 3


def test_metrics_count_subscribers_and_their_queues(daemon):
    with daemon.raw() as watcher, daemon.raw() as conn:
        watcher.send("Subscribe", {"path": "/primes"}, more=True)
        assert watcher.read()["parameters"]["seq"] == 0
        assert "error" not in conn.call("Send", {"action": INCR})
        assert watcher.read()["parameters"]["seq"] == 1
        parsed = samples(conn.call("Metrics")["parameters"]["text"])
    assert value(parsed, "switchyard_subscribers") == 1
    assert value(parsed, "switchyard_connections") == 2
    assert value(parsed, "switchyard_subscriber_queued_changes") == 0
    assert value(parsed, "switchyard_subscriber_resnapshots_total") == 0


def test_the_http_endpoint_answers_only_metrics(scraped_daemon):
    base = scraped_daemon.metrics_url.removesuffix("/metrics")
    for path, status in (("/", 404), ("/metrics/x", 404)):
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(base + path, timeout=10)
        assert error.value.code == status
    request = urllib.request.Request(scraped_daemon.metrics_url, data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=10)
    assert error.value.code == 405


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def test_requests_sent_without_reading_the_answers_wait_in_the_kernel(scraped_daemon):
    # 20,000 scrapes (some 40 bytes each) from a client that never reads: answered all at once,
    # their texts (a few KiB each) would pile up in the daemon, about 100 MiB of them. Answered
    # only while the client reads, they wait in the socket buffers as requests.
    port = int(scraped_daemon.metrics_url.split(":")[2].split("/")[0])
    before = resident_kib(scraped_daemon.process.pid)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as hostile:
        hostile.setblocking(False)
        request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
        pending = request * 20_000
        deadline = time.monotonic() + 5
        while pending and time.monotonic() < deadline:
            try:
                pending = pending[hostile.send(pending):]
            except BlockingIOError:
                time.sleep(0.01)
        time.sleep(0.5)
        grown = resident_kib(scraped_daemon.process.pid) - before
        assert grown < 16 * 1024, f"the daemon grew by {grown} KiB for a client that does not read"
        # Other scrapers are served meanwhile.
        assert "switchyard_connections" in scrape(scraped_daemon.metrics_url)
        # And the client that reads again gets its answers, in order.
        hostile.setblocking(True)
        assert hostile.recv(64).startswith(b"HTTP/1.1 200 OK")


def test_connections_past_the_limit_are_closed(scraped_daemon):
    port = scraped_daemon.metrics_port
    # From eight addresses (any 127.x.y.z is this machine), three each: within each peer's share.
    held = [
        socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(f"127.0.1.{1 + i % 8}", 0))
        for i in range(24)
    ]
    try:
        answered = 0
        for connection in held:
            try:
                connection.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                answered += connection.recv(64).startswith(b"HTTP/1.1 200 OK")
            except (ConnectionResetError, BrokenPipeError):
                pass
        # No more than 16 open at once: the others were closed without an answer.
        assert 8 <= answered <= 16
    finally:
        for connection in held:
            connection.close()
    # Once they are closed, scrapes are served again.
    deadline = time.monotonic() + 10
    while True:
        try:
            assert "switchyard_connections" in scrape(scraped_daemon.metrics_url)
            break
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class Slowloris:
    """Connections that each send the start of a request, then one byte of a header that never
    ends every 0.2 s — well within any idle timeout — until the daemon closes them."""

    def __init__(self, port, sources, refill=False):
        self.port = port
        self.connections = [self._open(source) for source in sources]
        if refill:
            # A connection closed at once took no slot, or found one still held by a connection
            # the daemon has not yet seen close (the fixture's probe): opened again until each is
            # held, so that the slowloris holds every slot it can.
            for _ in range(20):
                time.sleep(0.1)
                closed = [i for i, connection in enumerate(self.connections) if is_closed(connection)]
                if not closed:
                    break
                for i in closed:
                    self.connections[i].close()
                    self.connections[i] = self._open(sources[i])
        self.closed_at = {}
        self.started = time.monotonic()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._dribble, daemon=True)
        self.thread.start()

    def _open(self, source):
        connection = socket.create_connection(("127.0.0.1", self.port), timeout=10, source_address=(source, 0))
        try:
            connection.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        except OSError:
            pass  # closed at once: over a limit
        return connection

    def _dribble(self):
        while not self.stopping.wait(0.2):
            for connection in self.connections:
                if connection in self.closed_at:
                    continue
                try:
                    connection.sendall(b"a")
                    closed = is_closed(connection)
                except OSError:
                    closed = True
                if closed:
                    self.closed_at[connection] = time.monotonic() - self.started

    def stop(self):
        self.stopping.set()
        self.thread.join()
        for connection in self.connections:
            connection.close()


def is_closed(connection):
    """Whether the daemon has closed `connection`, without waiting."""
    connection.setblocking(False)
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        connection.setblocking(True)
        connection.settimeout(10)


def scrape_from(port, source):
    """One scrape over a connection from `source`: the status line, or "" when the connection is
    closed without an answer."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0)) as connection:
            connection.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return connection.recv(64).split(b"\r\n")[0].decode()
    except OSError:
        return ""


def test_a_slowloris_from_one_address_takes_only_its_share(impatient_daemon):
    port = impatient_daemon.metrics_port
    hostile = Slowloris(port, ["127.0.0.2"] * 16)
    try:
        # The scraper, from another address, is served at once, while the slowloris dribbles.
        assert scrape_from(port, "127.0.0.1") == "HTTP/1.1 200 OK"
        # And every one of the hostile connections is closed, the last at the request deadline.
        deadline = time.monotonic() + 10
        while len(hostile.closed_at) < 16 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(hostile.closed_at) == 16, f"{16 - len(hostile.closed_at)} still open after 10 s"
        assert max(hostile.closed_at.values()) < 5
    finally:
        hostile.stop()
    assert impatient_daemon.alive()


def test_a_slowloris_that_takes_every_slot_holds_them_only_until_the_request_deadline(impatient_daemon):
    port = impatient_daemon.metrics_port
    # Sixteen connections, four from each of four addresses: every slot, each within its share.
    hostile = Slowloris(port, [f"127.0.0.{2 + i % 4}" for i in range(16)], refill=True)
    try:
        started = time.monotonic()
        while scrape_from(port, "127.0.0.1") != "HTTP/1.1 200 OK":
            assert time.monotonic() - started < 8, "the scraper is still kept out"
            time.sleep(0.1)
        # Let in because the request deadline (1 s) closed the slowloris's connections, though
        # they kept sending: every one of them.
        deadline = time.monotonic() + 5
        while len(hostile.closed_at) < 16 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(hostile.closed_at) == 16, f"{16 - len(hostile.closed_at)} still open"
    finally:
        hostile.stop()
    assert impatient_daemon.alive()


def test_a_metrics_address_in_use_stops_the_start_before_anything_is_served():
    """The port taken by another process: the daemon says so, naming the setting and the address,
    and exits before it listens on its socket or starts a worker."""
    folder = tempfile.mkdtemp(prefix="switchyard-py-")
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(RuntimeError) as failed:
            Daemon(folder, environment={"SWITCHYARD_METRICS_LISTEN": f"127.0.0.1:{port}"})
        log = str(failed.value)
        assert f"cannot serve the metrics on 127.0.0.1:{port} (metrics.listen)" in log, log
        assert "] listening" not in log and "worker started" not in log and "no state directory" not in log, log
        assert not os.path.exists(os.path.join(folder, "switchyard.sock"))
    finally:
        taken.close()
        shutil.rmtree(folder, ignore_errors=True)
