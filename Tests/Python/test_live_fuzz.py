"""The live protocol fuzzer: structured and random invalid input for every method, pipelined
into the real daemon, while a well-behaved client keeps calling.

What must hold: the daemon never ends, every fuzz call gets exactly one reply, and every reply
is a Varlink error or a read (no fuzz input is a state change); the well-behaved client's
calls all succeed, and at the end the state is exactly what the well-behaved client made of it.
The well-behaved client's latencies are reported (p50, p99).

SWITCHYARD_FUZZ_INPUTS sets how many inputs (100,000 in `make test`; `make soak` sends
1,000,000); SWITCHYARD_FUZZ_SEED replays a run.
"""

import json
import os
import random
import socket
import threading
import time

from conftest import INCR, RawConnection

INPUTS = int(os.environ.get("SWITCHYARD_FUZZ_INPUTS", "100000"))
SEED = int(os.environ.get("SWITCHYARD_FUZZ_SEED", str(random.randrange(1 << 32))))
BATCH = 256

STORE = "io.switchyard.Store"
READS = ["Get", "Describe", "Status"]
EDGE_NUMBERS = [-1, 0, 1, -(2**63), 2**63 - 1, -(2**63) - 1, 2**63, 2**64, 1e308, -1e308, 1e-400, 0.5,
                9007199254740993.0, 3.0]


class Generator:
    """Inputs the daemon must refuse, or reads that change nothing. Never `oneway` (it would get
    no reply) and never a valid `more` call (it would never end)."""

    def __init__(self, seed):
        self.random = random.Random(seed)

    def value(self, depth=0):
        r = self.random.random()
        if depth > 3 or r < 0.3:
            return self.random.choice(EDGE_NUMBERS + ["", "x" * self.random.randrange(300), None, True, False])
        if r < 0.5:
            return [self.value(depth + 1) for _ in range(self.random.randrange(4))]
        if r < 0.7:
            return {"indexes": [{"location": self.random.choice(EDGE_NUMBERS), "length": self.random.choice(EDGE_NUMBERS)}]}
        return {self.random.choice(["_0", "location", "n", "x", "counter"]): self.value(depth + 1)}

    def bad_action(self):
        """An action no feature may take from a client: unknown cases, wrong payloads, internal actions."""
        choice = self.random.randrange(8)
        if choice == 0:
            return {"counter": {"x_" + str(self.random.randrange(1000)): {}}}
        if choice == 1:
            return {"favoritePrimes": {"deleteFavoritePrimes": self.random.choice([
                [self.random.choice([-1, 2**63, 2**64, 1e308, -1e308, 1e-400, 0.0, 0.5, 9007199254740993.0])],
                {"indexes": [{"location": self.random.choice(EDGE_NUMBERS), "length": self.random.choice([-1, 2**63, 10**7])}]},
                "all", None, [[0]], {"indexes": "x"},
            ])}}
        if choice == 2:
            return self.random.choice([
                {"counter": {"nthPrimeResponse": {"n": self.value(), "prime": 7}}},
                {"favoritePrimes": {"loaded": [self.random.randrange(100) for _ in range(self.random.randrange(50))]}},
                {"primeModal": {"favoritesChanged": {"added": [2]}}},
                {"counter": {"restarted": {}}},
            ])
        if choice == 3:
            # Any string would be a valid email edit: only what is not one.
            payload = self.random.choice(EDGE_NUMBERS + [None, True, [], {"x": 1}])
            return {"signUp": {"emailChanged": payload}} if self.random.random() < 0.5 else {"signUp": self.value()}
        if choice == 4:
            return {"nope": self.value()}
        if choice == 5:
            # (A null there is taken as absent, as for an optional field the encoder omits.)
            return {"counter": {"incrTapped": {}}, "extra": self.value() or 1}
        if choice == 6:
            return {"counter": {"incrTapped": {"unknown": self.value() or 1}}}
        return self.value()

    def call(self):
        """One frame's bytes, NUL excluded."""
        kind = self.random.randrange(10)
        if kind == 0:
            # Random bytes: no NUL inside, or one frame would be two.
            return bytes(self.random.randrange(1, 256) for _ in range(self.random.randrange(1, 200)))
        if kind == 1:
            return self.random.choice([b"{", b"[]", b"null", b'"x"', b"{}", b'{"method":1}', b'{"method":"' + STORE.encode() + b'.Send"',
                                       b"1e-400", b'{"method":"x","parameters":[]}'])
        if kind in (2, 3, 4):
            call = {"method": f"{STORE}.Send", "parameters": {"action": self.bad_action()}}
        elif kind == 5:
            call = {"method": f"{STORE}.SendBatch", "parameters": {"actions": [INCR] * self.random.randrange(3) + [self.bad_action()]}}
        elif kind == 6:
            call = {"method": f"{STORE}.{self.random.choice(READS)}", "parameters": self.random.choice([
                {}, {"path": self.random.choice(["/primes", "/nope", "primes", "/primes/favoritePrimes/-", "", "/~2", 7])},
            ])}
        elif kind == 7:
            call = {"method": f"{STORE}.Subscribe", "parameters": self.random.choice([
                {"path": "/primes"},  # without "more": ExpectedMore
                {"since": self.value()}, {"history": self.value()},
            ])}
            if self.random.random() < 0.5 and call["parameters"].get("path") is None:
                call["more"] = True
                call["parameters"]["path"] = self.random.choice(["/nope", 3, "x"])
        elif kind == 8:
            call = {"method": self.random.choice(["org.varlink.service.GetInfo", "org.varlink.service.GetInterfaceDescription",
                                                   "org.varlink.service.Nope", f"{STORE}.Nope", "io.nope.X", "", "Send"]),
                    "parameters": {"interface": self.value()}}
        else:
            call = {"method": f"{STORE}.Send", "parameters": self.value(), "more": self.random.choice([None, 1, "yes"])}
        return json.dumps(call).encode()


def pipeline(daemon, conn, frames, replies_by_error):
    """Writes `frames` (each without its NUL) at once and reads one reply to each: the connection
    stays open, no reply is a seq alone (a change applied: every input here must be refused or
    only read), and the daemon lives on. Counts the replies by error (None: a read); returns them."""
    conn.write(b"".join(frame + b"\0" for frame in frames))
    replies = []
    for frame in frames:
        reply = conn.read()
        assert reply is not None, f"seed {SEED}: the daemon closed the connection after {frame[:200]!r}"
        error = reply.get("error")
        if error is None:
            # A read, or introspection; a reply of a seq alone answers a Send or SendBatch.
            assert set(reply["parameters"]) != {"seq"}, f"seed {SEED}: {frame[:300]!r} was applied: {reply}"
        replies_by_error[error] = replies_by_error.get(error, 0) + 1
        replies.append(reply)
    assert daemon.alive(), f"seed {SEED}: the daemon ended:\n{daemon.log()[-3000:]}"
    return replies


def well_behaved(daemon, stop, results):
    latencies, sent = [], 0
    with RawConnection(daemon.socket_path) as conn:
        while not stop.is_set():
            started = time.perf_counter()
            reply = conn.call("Send", {"action": INCR})
            latencies.append(time.perf_counter() - started)
            if "error" in reply:
                results["errors"].append(reply)
                break
            sent += 1
            time.sleep(0.001)
    results["latencies"], results["sent"] = latencies, sent


def test_invalid_input_for_every_method_changes_nothing_and_stalls_no_one(daemon, capsys):
    generator = Generator(SEED)
    stop = threading.Event()
    results = {"errors": []}
    good = threading.Thread(target=well_behaved, args=(daemon, stop, results))
    good.start()
    sent = answered = 0
    replies_by_error = {}
    started = time.monotonic()
    try:
        conn = RawConnection(daemon.socket_path)
        conn.sock.settimeout(30)
        while sent < INPUTS:
            batch = [generator.call() for _ in range(min(BATCH, INPUTS - sent))]
            answered += len(pipeline(daemon, conn, batch, replies_by_error))
            sent += len(batch)
        conn.close()
    finally:
        stop.set()
        good.join(timeout=30)
    elapsed = time.monotonic() - started

    assert daemon.alive()
    assert results["errors"] == [], f"the well-behaved client got errors: {results['errors'][:3]}"
    assert answered == INPUTS
    seq, state = daemon.get()
    assert seq == results["sent"], f"seed {SEED}: {seq - results['sent']} changes came from invalid input"
    assert state["primes"]["count"] == results["sent"]
    assert state["primes"]["favoritePrimes"] == [] and state["activityFeed"] == []

    latencies = sorted(results["latencies"])
    p50, p99 = latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)]
    with capsys.disabled():
        print(f"\nlive fuzz: {INPUTS} invalid inputs in {elapsed:.1f} s ({INPUTS / elapsed:,.0f}/s), seed {SEED}; "
              f"replies {dict(sorted((k or 'reads', v) for k, v in replies_by_error.items()))}; "
              f"well-behaved client: {results['sent']} sends, p50 {p50 * 1e6:.0f} µs, p99 {p99 * 1e6:.0f} µs")


JOURNAL_INPUTS = max(1, INPUTS // 10)


def journal_call(generator, history):
    """A call to one of the journal's read surfaces with fuzzed parameters: an error, or a read
    (never a `Backup`, which would write: it always gets a parameter it does not take; never a
    `Subscribe` that could go on: its path is not there, or its `since` is not a number)."""
    r = generator.random
    value = generator.value
    edge = lambda: r.choice(EDGE_NUMBERS + [None, "1", True, [], {}])
    kind = r.randrange(5)
    if kind == 0:
        parameters = {"at": edge()}
        if r.random() < 0.5:
            parameters["path"] = r.choice(["/primes/count", "/nope", "x", 5, ""])
        if r.random() < 0.2:
            parameters[r.choice(["until", "since", "x"])] = value()
        return {"method": f"{STORE}.Get", "parameters": parameters}
    if kind == 1:
        parameters = {name: edge() for name in ("since", "until", "limit") if r.random() < 0.6}
        if r.random() < 0.3:
            parameters["feature"] = r.choice(["primes", "nosuch", "", 5, None, "x" * 300])
        parameters.setdefault("limit", r.choice([1, 2, 5]))
        return {"method": f"{STORE}.Journal", "parameters": parameters}
    if kind == 2:
        return {"method": f"{STORE}.Replay", "parameters": {"since": edge(), "until": r.choice([0, 1, 2, -1, None])}}
    if kind == 3:
        return {"method": f"{STORE}.Backup", "parameters": {r.choice(["path", "to", "x"]): value()}}
    parameters = {"since": edge(), "history": r.choice([history, history, "other", 5, None])}
    if not isinstance(parameters["since"], int) or isinstance(parameters["since"], bool) or r.random() < 0.7:
        parameters["path"] = r.choice(["/nope", 3, "x"])
    else:
        parameters["path"] = "/nope"
    return {"method": f"{STORE}.Subscribe", "parameters": parameters, "more": True}


def test_invalid_journal_reads_change_nothing_move_no_figure_and_stall_no_one(capsys):
    """The journal's read surfaces (`Get` at, `Journal`, `Replay`, `Backup`, `Subscribe` with
    `since`) against a daemon with a state directory, pipelined with edge numbers and wrong types,
    while a well-behaved client keeps sending: every call gets one reply, an error or a read; the
    state is what the well-behaved client made; `Status` reports no loss."""
    import shutil
    import tempfile

    from conftest import Daemon

    folder = tempfile.mkdtemp(prefix="switchyard-fuzz-journal-")
    daemon = Daemon(folder, {"SWITCHYARD_STATE_DIRECTORY": os.path.join(folder, "state"), "SWITCHYARD_SNAPSHOTS_EVERY": "50"})
    try:
        with RawConnection(daemon.socket_path) as conn:
            for _ in range(120):
                assert "error" not in conn.call("Send", {"action": INCR})
            conn.send("Subscribe", {"path": "/primes/count"}, more=True)
            history = conn.read()["parameters"]["history"]
        generator = Generator(SEED)
        stop = threading.Event()
        results = {"errors": []}
        good = threading.Thread(target=well_behaved, args=(daemon, stop, results))
        good.start()
        replies = {}
        started = time.monotonic()
        try:
            conn = RawConnection(daemon.socket_path)
            conn.sock.settimeout(60)
            sent = 0
            while sent < JOURNAL_INPUTS:
                batch = [journal_call(generator, history) for _ in range(min(BATCH, JOURNAL_INPUTS - sent))]
                answers = pipeline(daemon, conn, [json.dumps(call).encode() for call in batch], replies)
                for call, reply in zip(batch, answers):
                    if "error" not in reply:
                        assert not call["method"].endswith(("Backup", "Subscribe")), f"seed {SEED}: {call} got {reply}"
                sent += len(batch)
            conn.close()
        finally:
            stop.set()
            good.join(timeout=30)
        elapsed = time.monotonic() - started
        assert results["errors"] == [], f"the well-behaved client got errors: {results['errors'][:3]}"
        seq, state = daemon.get()
        assert seq == 120 + results["sent"] and state["primes"]["count"] == seq
        with RawConnection(daemon.socket_path) as conn:
            durability = conn.call("Status")["parameters"]["durability"]
        assert "lost" not in durability, durability
        latencies = sorted(results["latencies"])
        p99 = latencies[int(len(latencies) * 0.99)] if latencies else 0
        with capsys.disabled():
            print(f"\nlive fuzz of the journal's reads: {JOURNAL_INPUTS} inputs in {elapsed:.1f} s, seed {SEED}; "
                  f"replies {dict(sorted((k or 'reads', v) for k, v in replies.items()))}; "
                  f"well-behaved client: {results['sent']} sends, p99 {p99 * 1e6:.0f} µs")
    finally:
        status = daemon.terminate()
        log = daemon.log()
        shutil.rmtree(folder, ignore_errors=True)
        assert status == 0, f"switchyardd exited with {status} after SIGTERM:\n{log}"
