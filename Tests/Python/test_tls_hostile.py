"""The TLS listener under hostile clients, beyond test_tls.py's refusals: a ClientHello trickled
a byte at a time (slowloris), floods of handshakes finished and refused, TLS records that lie
about their length, oversized frames on many connections at once, and the fuzzers' inputs after
a valid handshake — the live fuzzer's calls pipelined, and the frame fuzzer's corpus with
mutations of it written in records of every size. Each must be refused or timed out within the
frame timeout, with the daemon's resident memory bounded, while a well-behaved TLS client keeps
being answered.

SWITCHYARD_FUZZ_INPUTS sets the live fuzzer's size (a twentieth of it goes through TLS here)."""

import os
import random
import socket
import ssl
import threading
import time

from conftest import INCR
from test_live_fuzz import INPUTS, SEED, Generator, pipeline
from test_tls import FRAME_TIMEOUT, TLSConnection, certificates, running_tls_daemon, tls_daemon  # noqa: F401

TLS_INPUTS = max(256, INPUTS // 20)
# What one test may add to the daemon's resident memory; every test here opens hundreds of
# connections, which an unbounded buffer or a leaked TLS state would take past it.
MEMORY_BOUND = 48 << 20
FUZZ_CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "Fuzz", "Corpus")


def resident_bytes(daemon):
    with open(f"/proc/{daemon.process.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class WellBehaved:
    """A TLS client that sends a counter increment every millisecond in a thread of its own, and
    keeps every error it gets."""

    def __init__(self, daemon, certificates):
        self.daemon, self.certificates = daemon, certificates
        self.stop, self.errors, self.sent, self.latencies = threading.Event(), [], 0, []
        self.thread = threading.Thread(target=self.run)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.stop.set()
        self.thread.join(timeout=30)

    def run(self):
        with TLSConnection(self.daemon.port, self.certificates["ca"], self.certificates["operator"]) as conn:
            conn.sock.settimeout(30)
            while not self.stop.is_set():
                started = time.perf_counter()
                reply = conn.call("Send", {"action": INCR})
                self.latencies.append(time.perf_counter() - started)
                if reply is None or "error" in reply:
                    self.errors.append(reply)
                    return
                self.sent += 1
                time.sleep(0.001)

    def check(self):
        assert self.errors == [], f"the well-behaved client got {self.errors[:3]}"
        assert self.sent > 0, "the well-behaved client was never answered"
        # A loop held up by a hostile peer slows every call made meanwhile; one slow call among
        # hundreds is the machine's load (make test runs other lanes beside this one).
        slow = [latency for latency in self.latencies if latency >= FRAME_TIMEOUT]
        assert len(slow) <= max(1, len(self.latencies) // 100), f"{len(slow)} of {len(self.latencies)} well-behaved calls took over {FRAME_TIMEOUT} s: {sorted(slow)[-5:]}"
        assert max(self.latencies) < FRAME_TIMEOUT * 5, f"a well-behaved call took {max(self.latencies):.3f} s"


def ended(sock):
    """Whether the daemon ended the connection (closed it, or reset it with our bytes unread)
    before the socket's timeout."""
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def client_hello(certificates):
    """A real ClientHello, as the standard library's TLS would send it."""
    context = ssl.create_default_context(cafile=certificates["ca"])
    context.load_cert_chain(*certificates["operator"])
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def test_a_handshake_trickled_a_byte_at_a_time_is_closed_at_the_frame_timeout(tls_daemon, certificates):
    hello = client_hello(certificates)
    with WellBehaved(tls_daemon, certificates) as good:
        trickles = [socket.create_connection(("127.0.0.1", tls_daemon.port), timeout=FRAME_TIMEOUT * 5) for _ in range(20)]
        started = time.monotonic()
        open_ones = list(trickles)
        for byte in hello:
            still = []
            for conn in open_ones:
                try:
                    conn.send(bytes([byte]))
                    still.append(conn)
                except OSError:
                    pass
            open_ones = still
            if not open_ones:
                break
            time.sleep(FRAME_TIMEOUT / 10)
        elapsed = time.monotonic() - started
        for conn in trickles:
            conn.close()
    assert not open_ones, "a trickled handshake outlived the whole ClientHello"
    assert elapsed < FRAME_TIMEOUT * 3, f"trickled handshakes were served for {elapsed:.1f} s"
    good.check()
    assert tls_daemon.alive()


def flood(daemon, count, attempt, threads=8):
    """`attempt(port)` `count` times from `threads` threads; returns how many raised nothing."""
    done = []

    def run(n):
        ok = 0
        for _ in range(n):
            try:
                attempt(daemon.port)
                ok += 1
            except (OSError, ssl.SSLError):
                pass
        done.append(ok)

    workers = [threading.Thread(target=run, args=(count // threads,)) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    return sum(done)


def test_floods_of_handshakes_finished_and_refused_leave_memory_bounded_and_others_served(tls_daemon, certificates):
    ca = certificates["ca"]

    def finished(port):
        with TLSConnection(port, ca, certificates["operator"]) as conn:
            assert "error" not in conn.call("Get", {"path": "/primes/count"})

    def refused(port):
        with TLSConnection(port, ca, certificates["foreign"]) as conn:
            conn.call("Get")

    finished(tls_daemon.port)
    before = resident_bytes(tls_daemon)
    with WellBehaved(tls_daemon, certificates) as good:
        started = time.monotonic()
        assert flood(tls_daemon, 400, finished) == 400
        flood(tls_daemon, 400, refused)
        elapsed = time.monotonic() - started
    good.check()
    grown = resident_bytes(tls_daemon) - before
    assert grown < MEMORY_BOUND, f"the daemon grew by {grown >> 20} MiB"
    with TLSConnection(tls_daemon.port, ca, certificates["operator"]) as conn:
        listener = conn.call("Status")["parameters"]["listeners"][1]
    assert listener["connections"] == 1, listener
    assert listener["refusedHandshakes"] >= 400, listener
    assert tls_daemon.log().count("refused a TLS handshake") == 1, "one line for the peer, not four hundred"
    print(f"\n800 handshakes in {elapsed:.1f} s; the daemon grew by {grown >> 10} KiB")


def test_records_that_lie_about_their_length_and_garbage_are_closed(tls_daemon, certificates):
    generator = random.Random(SEED)
    lies = [
        b"\x16\x03\x01\xff\xff" + b"\x01" * 100,  # a handshake record of 65535 bytes that never come
        b"\x16\x03\x03\x40\x01" + bytes(16385),  # a record over TLS's 16 KiB
        b"\x17\x03\x03\x00\x10" + bytes(16),  # application data before any handshake
        b"\x80\x2e\x01\x00\x02" + bytes(43),  # an SSLv2 ClientHello
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    ] + [bytes(generator.randrange(256) for _ in range(generator.randrange(1, 4096))) for _ in range(40)]
    before = resident_bytes(tls_daemon)
    with WellBehaved(tls_daemon, certificates) as good:
        for lie in lies:
            with socket.create_connection(("127.0.0.1", tls_daemon.port), timeout=FRAME_TIMEOUT * 5) as conn:
                started = time.monotonic()
                try:
                    conn.sendall(lie)
                except OSError:
                    pass
                assert ended(conn), f"seed {SEED}: {lie[:16]!r} was not closed"
                assert time.monotonic() - started < FRAME_TIMEOUT * 3, f"seed {SEED}: {lie[:16]!r} was held"
    good.check()
    assert resident_bytes(tls_daemon) - before < MEMORY_BOUND
    assert tls_daemon.alive()


def test_oversized_frames_on_many_connections_at_once_are_closed(tls_daemon, certificates):
    ca, operator = certificates["ca"], certificates["operator"]
    before = resident_bytes(tls_daemon)
    with WellBehaved(tls_daemon, certificates) as good:
        big = [TLSConnection(tls_daemon.port, ca, operator) for _ in range(50)]
        for conn in big:
            try:
                conn.sock.sendall(b"x" * 70000)  # over the 64 KiB limit, with no NUL
            except (OSError, ssl.SSLError):
                pass
        for conn in big:
            assert conn.read() is None, "an oversized frame did not close its connection"
            conn.close()
    good.check()
    assert resident_bytes(tls_daemon) - before < MEMORY_BOUND
    assert tls_daemon.alive()


def test_the_live_fuzzers_calls_after_a_valid_handshake_change_nothing(certificates, capsys):
    """test_live_fuzz's invalid calls, pipelined over TLS, beside a well-behaved TLS client: each
    gets one reply, an error or a read, and the state is what the well-behaved client made."""
    with running_tls_daemon(certificates) as daemon:
        generator = Generator(SEED)
        replies = {}
        with WellBehaved(daemon, certificates) as good:
            with TLSConnection(daemon.port, certificates["ca"], certificates["operator"]) as conn:
                conn.sock.settimeout(30)
                sent = 0
                while sent < TLS_INPUTS:
                    batch = [generator.call() for _ in range(min(256, TLS_INPUTS - sent))]
                    pipeline(daemon, conn, batch, replies)
                    sent += len(batch)
        good.check()
        seq, state = daemon.get()
        assert seq == good.sent, f"seed {SEED}: {seq - good.sent} changes came from invalid input"
        assert state["primes"]["count"] == good.sent
        with capsys.disabled():
            print(f"\nlive fuzz over TLS: {TLS_INPUTS} inputs, seed {SEED}; replies "
                  f"{dict(sorted((k or 'reads', v) for k, v in replies.items()))}")


def mutations(seeds, count, generator):
    """The frame fuzzer's committed inputs and `count` mutations of them: bytes flipped, NULs and
    runs inserted, inputs joined and cut, some past the 64 KiB message limit."""
    yield from seeds
    for _ in range(count):
        data = bytearray(generator.choice(seeds))
        for _ in range(generator.randrange(1, 6)):
            kind = generator.randrange(5)
            at = generator.randrange(len(data) + 1)
            if kind == 0 and data:
                data[min(at, len(data) - 1)] ^= 1 << generator.randrange(8)
            elif kind == 1:
                data[at:at] = b"\0"
            elif kind == 2:
                data[at:at] = bytes([generator.randrange(256)]) * generator.choice([1, 100, 70000])
            elif kind == 3:
                data += generator.choice(seeds)
            else:
                del data[at:at + generator.randrange(1, 32)]
        yield bytes(data) or b"\0"


def frame_seeds(generator):
    """The frame fuzzer's inputs (a chunk size, then bytes), and the call envelope fuzzer's calls
    as frames in that form."""
    seeds = []
    for name in sorted(os.listdir(os.path.join(FUZZ_CORPUS, "FuzzFrameDecoder"))):
        with open(os.path.join(FUZZ_CORPUS, "FuzzFrameDecoder", name), "rb") as f:
            seeds.append(f.read() or b"\x00")
    for name in sorted(os.listdir(os.path.join(FUZZ_CORPUS, "FuzzCallEnvelope"))):
        with open(os.path.join(FUZZ_CORPUS, "FuzzCallEnvelope", name), "rb") as f:
            seeds.append(bytes([generator.randrange(256)]) + f.read() + b"\0")
    return seeds


def test_the_frame_fuzzers_inputs_through_tls_are_answered_or_closed(tls_daemon, certificates):
    """Each input on a connection of its own after a valid handshake, written in TLS records of
    the size its first byte picks (as the frame fuzzer chunks it), then a GetInfo: the GetInfo is
    answered, or the connection is closed (a message over the limit), or a subscription the
    input started goes on; never a hang."""
    generator = random.Random(SEED)
    seeds = frame_seeds(generator)
    answered = closed = subscribed = 0
    before = resident_bytes(tls_daemon)
    with WellBehaved(tls_daemon, certificates) as good:
        for data in mutations(seeds, max(100, TLS_INPUTS // 20), generator):
            chunk, payload = data[0] % 32 + 1, data[1:]
            with TLSConnection(tls_daemon.port, certificates["ca"], certificates["operator"]) as conn:
                conn.sock.settimeout(FRAME_TIMEOUT * 5)
                try:
                    for offset in range(0, len(payload), chunk if len(payload) < 4096 else 16384):
                        conn.sock.sendall(payload[offset:offset + (chunk if len(payload) < 4096 else 16384)])
                    conn.sock.sendall(b"\0" + b'{"method":"org.varlink.service.GetInfo"}\0')
                except (OSError, ssl.SSLError):
                    closed += 1
                    continue
                while True:
                    reply = conn.read()
                    if reply is None:
                        closed += 1
                        break
                    if reply.get("continues"):
                        subscribed += 1  # the GetInfo waits for its end
                        break
                    if "vendor" in (reply.get("parameters") or {}):
                        answered += 1
                        break
    good.check()
    assert answered > 0 and closed > 0, (answered, closed, subscribed)
    assert resident_bytes(tls_daemon) - before < MEMORY_BOUND
    assert tls_daemon.alive()
