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
            conn.write(b"".join(frame + b"\0" for frame in batch))
            for frame in batch:
                reply = conn.read()
                assert reply is not None, f"seed {SEED}: the daemon closed the connection after {frame[:200]!r}"
                answered += 1
                error = reply.get("error")
                if error is None:
                    # A read, or introspection; a reply of a seq alone answers a Send or SendBatch.
                    assert set(reply["parameters"]) != {"seq"}, f"seed {SEED}: {frame[:300]!r} was applied: {reply}"
                replies_by_error[error] = replies_by_error.get(error, 0) + 1
            sent += len(batch)
            assert daemon.alive(), f"seed {SEED}: the daemon ended:\n{daemon.log()[-3000:]}"
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
