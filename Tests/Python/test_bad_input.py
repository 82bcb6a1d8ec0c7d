"""Bad input gets a Varlink error (or, past the size limit, a closed connection) and changes
nothing: each test compares Get before and after, and checks the daemon still serves others."""

import time

import pytest
import varlink

from conftest import INCR, STORE


@pytest.fixture
def before(daemon):
    """Some state to keep, and Get of it."""
    with daemon.raw() as conn:
        reply = conn.call("SendBatch", {"actions": [INCR, INCR, {"primeModal": {"saveFavoritePrimeTapped": {}}}]})
    # At least 3; 4 when the feed entry that the save's effect sends was applied first.
    assert reply["parameters"]["seq"] >= 3, reply
    deadline = time.monotonic() + 3
    while not daemon.get("/activityFeed")[1] and time.monotonic() < deadline:
        time.sleep(0.01)
    snapshot = daemon.get()
    assert snapshot[1]["activityFeed"], "the activity feed entry never arrived"
    yield snapshot
    assert daemon.alive(), "the daemon died"
    assert daemon.get() == snapshot, "bad input changed the state"


def error_of(reply):
    assert "error" in reply, f"expected an error reply, got {reply}"
    return reply["error"], reply.get("parameters", {})


def test_malformed_json_is_an_invalid_request_and_the_connection_survives(daemon, before):
    with daemon.raw() as conn:
        for garbage in [b'{"method": "io.switchyard.Store.Get", ', b"[1, 2]", b"\xff\xfe", b'"Get"', b"{}"]:
            conn.write(garbage + b"\0")
            name, _ = error_of(conn.read())
            assert name == f"{STORE}.InvalidRequest", garbage
            # The same connection still answers.
            assert conn.call("Get")["parameters"] == {"seq": before[0], "state": before[1]}


def test_a_message_without_its_nul_then_close_changes_nothing(daemon, before):
    with daemon.raw() as conn:
        conn.write(b'{"method": "io.switchyard.Store.Send", "parameters": {"action": {"counter": {"incrTapped": {}}}}}')
    with daemon.raw() as conn:
        conn.write(b'{"method": "io.switchyard.Store.Sen')
    assert daemon.alive()
    assert daemon.get() == before


def test_an_oversized_message_closes_only_its_connection(daemon, before):
    other = daemon.raw()
    try:
        flooder = daemon.raw()
        payload = b'{"method": "io.switchyard.Store.Get", "parameters": {"path": "' + b"a" * ((1 << 20) + 4096)
        try:
            flooder.write(payload + b'"}}\0')
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while we were still writing: also fine
        assert flooder.read() is None, "the connection with the oversized message stayed open"
        flooder.close()
        assert other.call("Get")["parameters"] == {"seq": before[0], "state": before[1]}
    finally:
        other.close()


def test_an_unknown_method_is_method_not_found(daemon, before):
    with daemon.raw() as conn:
        name, parameters = error_of(conn.call(f"{STORE}.Explode", {}))
        assert name == "org.varlink.service.MethodNotFound"
        assert "Explode" in parameters.get("method", "")
        name, _ = error_of(conn.call("org.varlink.service.Explode", {}))
        assert name == "org.varlink.service.MethodNotFound"


def test_an_unknown_interface_is_interface_not_found(daemon, before):
    with daemon.raw() as conn:
        name, parameters = error_of(conn.call("com.example.Nope.Get", {}))
        assert (name, parameters) == ("org.varlink.service.InterfaceNotFound", {"interface": "com.example.Nope"})


@pytest.mark.parametrize(
    "method, parameters, wrong",
    [
        ("Send", {}, "action"),
        ("Send", None, "action"),
        ("SendBatch", {"actions": "x"}, "actions"),
        ("SendBatch", {"actions": {"counter": {"incrTapped": {}}}}, "actions"),
        ("Get", {"path": 5}, "path"),
        ("Get", {"path": "no-slash"}, "path"),
        ("Get", {"path": ["/primes"]}, "path"),
        ("Get", {"at": -1}, "at"),
        ("Get", {"at": "3"}, "at"),
        ("Journal", {"since": -1}, "since"),
        ("Journal", {"until": 1.5}, "until"),
        ("Journal", {"limit": 0}, "limit"),
        ("Journal", {"feature": 5}, "feature"),
        ("Replay", {"since": "0"}, "since"),
        ("org.varlink.service.GetInterfaceDescription", {"interface": 5}, "interface"),
    ],
)
def test_wrong_parameters_are_invalid_parameter(daemon, before, method, parameters, wrong):
    with daemon.raw() as conn:
        name, reply = error_of(conn.call(method, parameters))
        assert (name, reply) == ("org.varlink.service.InvalidParameter", {"parameter": wrong})


@pytest.mark.parametrize("since", [-1, "3", 1.5])
def test_subscribe_with_a_wrong_since_is_invalid_parameter(daemon, before, since):
    with daemon.raw() as conn:
        name, reply = error_of(conn.call("Subscribe", {"since": since}, more=True))
        assert (name, reply) == ("org.varlink.service.InvalidParameter", {"parameter": "since"})


def test_a_path_with_nothing_there_is_path_not_found(store, before):
    with pytest.raises(varlink.VarlinkError) as raised:
        store.Get(path="/nope")
    assert raised.value.error() == f"{STORE}.PathNotFound"
    assert raised.value.parameters() == {"path": "/nope"}


@pytest.mark.parametrize(
    "action, path",
    [
        ({"counter": {"incrTapped": {"by": "x"}}}, "counter.incrTapped.by"),
        ({"favoritePrimes": {"deleteFavoritePrimes": ["x"]}}, "favoritePrimes.deleteFavoritePrimes[0]"),
        ({"favoritePrimes": {"deleteFavoritePrimes": 0}}, "favoritePrimes.deleteFavoritePrimes"),
        # Foundation's form of an IndexSet, with two ranges whose counts add up past Int.max.
        (
            {"favoritePrimes": {"deleteFavoritePrimes": {"indexes": [
                {"location": 0, "length": 10}, {"location": 0, "length": (1 << 63) - 10}]}}},
            "favoritePrimes.deleteFavoritePrimes",
        ),
        ({"counter": {"incrTapped": {}}, "extra": 1}, "extra"),
        ({"counter": {"explode": {}}}, "counter.explode"),
        ({"explode": {}}, "explode"),
    ],
)
def test_an_unknown_action_is_invalid_action_naming_the_path(store, before, action, path):
    with pytest.raises(varlink.VarlinkError) as raised:
        store.Send(action=action)
    assert raised.value.error() == f"{STORE}.InvalidAction"
    assert raised.value.parameters()["path"] == path
    assert raised.value.parameters()["reason"]


def test_a_batch_with_one_unknown_action_applies_none_of_it(store, before):
    with pytest.raises(varlink.VarlinkError) as raised:
        store.SendBatch(actions=[INCR, {"counter": {"incrTapped": {"by": 1}}}, INCR])
    assert raised.value.error() == f"{STORE}.InvalidAction"
    assert raised.value.parameters()["path"] == "counter.incrTapped.by"


def test_subscribe_without_more_is_expected_more(store, before):
    with pytest.raises(varlink.VarlinkError) as raised:
        store.Subscribe()
    assert raised.value.error() == "org.varlink.service.ExpectedMore"
    # The library connection is still usable afterwards.
    assert store.Get(path="/primes/count") == {"seq": before[0], "state": 2}


def test_all_of_it_on_one_connection_then_nothing_changed(daemon, before):
    with daemon.raw() as conn:
        conn.write(b"{oops\0")
        assert error_of(conn.read())[0] == f"{STORE}.InvalidRequest"
        assert error_of(conn.call(f"{STORE}.Explode", {}))[0] == "org.varlink.service.MethodNotFound"
        assert error_of(conn.call("com.example.Nope.Get", {}))[0] == "org.varlink.service.InterfaceNotFound"
        assert error_of(conn.call("Get", {"path": 5}))[0] == "org.varlink.service.InvalidParameter"
        assert error_of(conn.call("Send", {"action": "incr"}))[0] == f"{STORE}.InvalidAction"
        assert error_of(conn.call("Subscribe", {}))[0] == "org.varlink.service.ExpectedMore"
        assert conn.call("Get")["parameters"] == {"seq": before[0], "state": before[1]}
    with daemon.raw() as conn:
        conn.write(b'{"method": "io.switchyard.Store.Send", "parameters": {"action": ')
    flooder = daemon.raw()
    try:
        flooder.write(b"a" * ((1 << 20) + 4096))
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert flooder.read() is None
    flooder.close()
