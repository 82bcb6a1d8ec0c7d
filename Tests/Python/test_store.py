"""Every method of io.switchyard.Store through the PyPI `varlink` package, and a replica of the
state rebuilt with `jsonpatch` from what Subscribe streams."""

import time

import jsonpatch
import pytest

from conftest import INCR, STORE

SAVE = {"primeModal": {"saveFavoritePrimeTapped": {}}}
DELETE_FIRST = {"favoritePrimes": {"deleteFavoritePrimes": [0]}}
PATCH_OPS = {"add", "remove", "replace", "move", "copy", "test"}


def eventually(condition, what, seconds=3.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)


def seq_and_state(reply):
    return reply["seq"], reply["state"]


class Replica:
    """The state at a path, rebuilt from one Subscribe stream."""

    def __init__(self, replies):
        self.replies = replies
        self.state = None
        self.seq = None
        self.history = None
        self.snapshots = 0
        self.patches = 0

    def apply_next(self):
        reply = next(self.replies)
        seq = reply["seq"]
        if reply.get("state") is not None:
            assert reply.get("patch") is None, reply
            self.state = reply["state"]
            self.history = reply["history"]
            self.snapshots += 1
        else:
            patch = reply.get("patch")
            assert isinstance(patch, list) and patch, reply
            assert self.seq is not None, f"a patch before any snapshot: {reply}"
            assert seq > self.seq, f"seq went from {self.seq} to {seq}"
            for operation in patch:
                assert operation["op"] in PATCH_OPS, operation
            self.state = jsonpatch.apply_patch(self.state, patch)
            self.patches += 1
        self.seq = seq
        return reply

    def catch_up(self, get):
        """Reads until the replica is at the seq `get()` reports, and compares it there."""
        for _ in range(50):
            seq, state = get()
            while self.seq < seq:
                self.apply_next()
            if self.seq == seq:
                assert self.state == state, f"replica differs from Get at seq {seq}"
                return seq
        pytest.fail("the replica never met Get at the same seq")

    def settle(self, get):
        """For a subscription to a path: its seq moves only with changes there, so the global seq
        Get reports may be ahead. Reads until the replica equals Get, never past Get's seq."""
        for _ in range(50):
            seq, state = get()
            assert self.seq <= seq
            if self.state == state:
                return
            self.apply_next()
        pytest.fail("the path replica never met Get")


def test_send_replies_with_the_seq_that_includes_it(store):
    assert store.Send(action=INCR) == {"seq": 1}
    assert store.Send(action=INCR) == {"seq": 2}
    assert store.Get(path="/primes/count") == {"seq": 2, "state": 2}


def test_every_form_of_an_action_is_the_same_action_however_the_daemon_reads_it(daemon):
    """PrimeTime's actions read the plain form of their cases straight from the bytes and leave
    everything else to Codable: each form below is one incrTapped, whichever read it."""
    forms = [
        b'{"counter":{"incrTapped":{}}}',
        b'{"counter":{"_0":{"incrTapped":{}}}}',
        b'{"\\u0063ounter":{"incr\\u0054apped":{}}}',
        b'{"counter":{"incrTapped":{}},"note":null}',
        b'{"counter":{"incrTapped":{"note":null}}}',
        b' { "counter" : { "incrTapped" : { } } } ',
    ]
    with daemon.raw() as conn:
        for n, form in enumerate(forms, start=1):
            conn.write(b'{"method":"io.switchyard.Store.Send","parameters":{"action":' + form + b"}}\0")
            reply = conn.read()
            assert reply == {"parameters": {"seq": n}}, (form, reply)
    assert daemon.get("/primes/count") == (len(forms), len(forms))


def test_the_worst_of_an_action_shaped_input_is_refused_and_the_daemon_serves_on(daemon):
    """Nesting past the depth limit, a key of a hundred thousand bytes, thousands of members:
    each an InvalidRequest or InvalidAction, nothing applied, the daemon alive."""
    deep = b'{"counter":' * 5000 + b"{}" + b"}" * 5000
    long_key = b'{"' + b"c" * 100_000 + b'":{}}'
    many = b"{" + b",".join(b'"k%d":null' % i for i in range(5000)) + b',"counter":{"incrTapped":{}}}'
    escaped = b'{"counter":{"' + b"\\u0069" * 20_000 + b'":{}}}'
    with daemon.raw() as conn:
        for action, error in ((deep, "InvalidRequest"), (long_key, "InvalidAction"), (escaped, "InvalidAction")):
            conn.write(b'{"method":"io.switchyard.Store.Send","parameters":{"action":' + action + b"}}\0")
            reply = conn.read()
            assert reply["error"] == f"{STORE}.{error}", reply
        # Thousands of null members beside the case: Codable's to read, and it takes them.
        conn.write(b'{"method":"io.switchyard.Store.Send","parameters":{"action":' + many + b"}}\0")
        assert conn.read() == {"parameters": {"seq": 1}}
    assert daemon.alive()
    assert daemon.get("/primes/count") == (1, 1)


def test_send_batch_applies_in_order_with_one_reply(store):
    store.Send(action=INCR)
    reply = store.SendBatch(actions=[INCR, INCR, {"counter": {"decrTapped": {}}}, INCR])
    assert reply == {"seq": 5}
    assert store.Get(path="/primes/count") == {"seq": 5, "state": 3}


def test_get_with_and_without_a_path(store):
    store.SendBatch(actions=[INCR, INCR, INCR])
    whole = store.Get()
    assert whole["seq"] == 3
    assert set(whole["state"]) == {"primes", "activityFeed", "signUp"}
    assert whole["state"]["primes"]["count"] == 3
    assert store.Get(path="") == whole
    assert store.Get(path="/primes") == {"seq": 3, "state": whole["state"]["primes"]}
    assert store.Get(path="/primes/count") == {"seq": 3, "state": 3}
    assert store.Get(path="/signUp/email") == {"seq": 3, "state": ""}


def test_describe_lists_the_features(store):
    description = store.Describe()
    worker = description["features"][0]["worker"]
    assert (worker["feature"], worker["state"], worker["restarts"]) == ("primes", "running", 0)
    assert worker["pid"] > 0
    cases = [feature.pop("cases") for feature in description["features"]]
    assert description == {
        "features": [
            {"name": "primes", "state": "/primes", "readOnly": False, "action": "PrimeTime.Primes.Action", "actions": ["counter", "primeModal", "favoritePrimes"],
             "internalActions": ["counter.nthPrimeResponse", "counter.restarted", "primeModal.favoritesChanged", "favoritePrimes.saved",
                                 "favoritePrimes.loaded", "favoritePrimes.storageFailed", "favoritePrimes.favoritesChanged"],
             "isolation": "process",
             "worker": description["features"][0]["worker"],
             "dates": {"state": [], "action": []}, "actionPrefix": ""},
            {"name": "activityFeed", "state": "/activityFeed", "readOnly": True, "action": "PrimeTime.FavoritesChange", "actions": [], "internalActions": ["added", "removed"], "isolation": "actor",
             "dates": {"state": ["/*/timestamp"], "action": []}},
            {"name": "signUp", "state": "/signUp", "readOnly": False, "action": "PrimeTime.SignUp.Action", "actions": ["emailChanged", "passwordChanged", "submitTapped"], "internalActions": [], "isolation": "actor",
             "dates": {"state": [], "action": []}, "actionPrefix": "signUp"},
        ],
        "access": {"read": True, "write": True, "admin": True},
    }
    # Every case of each feature's action, read from the enums' declarations.
    assert [[c["name"] for c in feature] for feature in cases] == [
        ["counter", "primeModal", "favoritePrimes"], ["added", "removed"], ["emailChanged", "passwordChanged", "submitTapped"]]
    counter = cases[0][0]["payload"]
    assert [(p.get("label"), p["type"]) for p in counter] == [(None, "Counter.Action")]
    response = next(c for c in counter[0]["cases"] if c["name"] == "nthPrimeResponse")
    assert response == {"name": "nthPrimeResponse", "internal": True, "payload": [{"label": "n", "type": "Int"}, {"label": "prime", "type": "Int?"}]}
    favorites = cases[0][2]["payload"][0]["cases"]
    assert favorites[0] == {"name": "deleteFavoritePrimes", "internal": False, "payload": [{"type": "IndexSet"}]}
    assert cases[1] == [{"name": name, "internal": True, "payload": [{"type": "[Int]"}]} for name in ("added", "removed")]
    # An action built from the description as the interface says (no payload: {}; one unlabeled
    # value: the value itself) is one the daemon takes.
    samples = {"String": "someone@example.com"}
    for case in cases[2]:
        value = samples[case["payload"][0]["type"]] if case["payload"] else {}
        assert store.Send(action={"signUp": {case["name"]: value}})["seq"] > 0
    assert store.Get(path="/signUp/email")["state"] == "someone@example.com"


def test_status_counts(daemon, store):
    status = store.Status()
    assert set(status) == {"uptime", "features", "connections", "subscribers", "actions", "seq", "workers", "durability", "timers"}
    assert status["durability"] == {"mode": "none"}, "the test daemon has no state directory"
    assert status["timers"] == {"maxPending": 10000, "features": []}
    assert [(w["feature"], w["state"]) for w in status["workers"]] == [("primes", "running")]
    assert isinstance(status["uptime"], (int, float)) and status["uptime"] >= 0
    assert status["features"] == 3
    assert status["connections"] >= 1
    assert (status["subscribers"], status["actions"], status["seq"]) == (0, 0, 0)

    store.Send(action=INCR)
    store.SendBatch(actions=[INCR, INCR, INCR])
    status = store.Status()
    assert (status["actions"], status["seq"]) == (4, 4)

    with daemon.client() as client:
        subscription = client.open(STORE)
        replies = subscription.Subscribe(_more=True)
        assert next(replies)["seq"] == 4
        eventually(lambda: store.Status()["subscribers"] == 1, "the subscriber is counted")
        subscription.close()
    eventually(lambda: store.Status()["subscribers"] == 0, "the subscriber that hung up is forgotten")


def test_replicas_follow_the_primetime_scenario(daemon, store):
    with daemon.client() as client:
        whole_con = client.open(STORE)
        primes_con = client.open(STORE)
        whole = Replica(whole_con.Subscribe(_more=True))
        primes = Replica(primes_con.Subscribe(path="/primes", _more=True))
        whole.apply_next()
        primes.apply_next()
        assert (whole.seq, whole.snapshots) == (0, 1)
        assert primes.state == store.Get(path="/primes")["state"]

        def get_whole():
            reply = store.Get()
            return reply["seq"], reply["state"]

        def get_primes():
            reply = store.Get(path="/primes")
            return reply["seq"], reply["state"]

        def feed():
            return store.Get(path="/activityFeed")["state"]

        store.Send(action=INCR)
        store.Send(action=INCR)
        assert whole.catch_up(get_whole) == 2
        primes.settle(get_primes)
        assert whole.state["primes"]["count"] == 2

        store.Send(action=SAVE)
        # The feed hears of it through the modal's effect, so it lands a little later.
        eventually(lambda: len(feed()) == 1, "the activity feed entry for saving 2")
        whole.catch_up(get_whole)
        primes.settle(get_primes)
        assert whole.state["primes"]["favoritePrimes"] == [2]
        assert whole.state["activityFeed"][0]["kind"] == {"addedFavoritePrime": 2}

        store.Send(action=DELETE_FIRST)
        eventually(lambda: len(feed()) == 2, "the activity feed entry for deleting 2")
        final_seq = whole.catch_up(get_whole)
        primes.settle(get_primes)
        assert whole.state["primes"]["favoritePrimes"] == []
        assert whole.state["activityFeed"][1]["kind"] == {"removedFavoritePrime": 2}

        # Every change reached the whole-state subscriber as a patch: no gaps, no re-snapshots.
        assert (whole.snapshots, whole.patches) == (1, final_seq)
        assert primes.snapshots == 1
        assert primes.state == whole.state["primes"]
        whole_con.close()
        primes_con.close()


def test_subscribe_since_resumes_with_patches_only(daemon, store):
    store.Send(action=INCR)
    with daemon.client() as client:
        first = client.open(STORE)
        replica = Replica(first.Subscribe(_more=True))
        replica.apply_next()
        assert replica.seq == 1
        first.close()

        store.SendBatch(actions=[INCR, INCR])
        store.Send(action=SAVE)
        eventually(lambda: len(store.Get(path="/activityFeed")["state"]) == 1, "the feed entry")

        resumed = client.open(STORE)
        replica.replies = resumed.Subscribe(since=replica.seq, history=replica.history, _more=True)
        reply = replica.apply_next()
        assert reply.get("state") is None, "a resumed subscription starts with a patch, not a snapshot"
        assert reply["seq"] == 2
        replica.catch_up(lambda: seq_and_state(store.Get()))
        assert replica.snapshots == 1
        assert replica.state["primes"]["favoritePrimes"] == [3]
        resumed.close()


def test_subscribe_since_without_its_history_starts_with_a_snapshot(daemon, store):
    # A number alone may come from a run of the daemon before a restart: it means nothing here.
    store.Send(action=INCR)
    with daemon.client() as client:
        con = client.open(STORE)
        first = Replica(con.Subscribe(_more=True))
        first.apply_next()
        con.close()
        for history in (None, "a-history-of-another-run"):
            con = client.open(STORE)
            replies = con.Subscribe(since=0, history=history, _more=True) if history else con.Subscribe(since=0, _more=True)
            reply = next(replies)
            assert reply.get("state") is not None and reply["history"] == first.history, reply
            con.close()


def test_subscribe_since_older_than_the_history_starts_with_a_snapshot(daemon, store):
    # The default history keeps 1024 changes.
    store.SendBatch(actions=[INCR] * 1100)
    with daemon.client() as client:
        con = client.open(STORE)
        history = Replica(con.Subscribe(_more=True))
        history.apply_next()
        con.close()
        con = client.open(STORE)
        replica = Replica(con.Subscribe(since=0, history=history.history, _more=True))
        reply = replica.apply_next()
        assert reply.get("state") is not None, "changes the daemon no longer holds are replaced by a snapshot"
        assert replica.seq == 1100 and replica.state["primes"]["count"] == 1100
        con.close()
