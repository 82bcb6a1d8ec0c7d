"""What made each change, for the subscribers that ask (Subscribe with "causes"): a reply field that
clients which do not ask never see, since asyncvarlink's typed clients refuse replies with fields
they do not know."""

from conftest import INCR, STORE


def test_causes_come_only_to_subscribers_that_ask(daemon):
    with daemon.raw() as plain, daemon.raw() as asking, daemon.raw() as conn:
        plain.send("Subscribe", {"path": "/primes"}, more=True)
        asking.send("Subscribe", {"path": "/primes", "causes": True}, more=True)
        assert "cause" not in plain.read()["parameters"]
        assert "cause" not in asking.read()["parameters"], "a snapshot has no cause"
        assert "error" not in conn.call("Send", {"action": INCR})
        assert plain.read()["parameters"] == {"seq": 1, "patch": [{"op": "replace", "path": "/count", "value": 1}]}
        # Without a journal the daemon records no cause: only the feature is known.
        assert asking.read()["parameters"] == {
            "seq": 1,
            "patch": [{"op": "replace", "path": "/count", "value": 1}],
            "cause": {"feature": "primes"},
        }


def test_causes_must_be_a_boolean(daemon):
    with daemon.raw() as conn:
        reply = conn.call("Subscribe", {"causes": "yes"}, more=True)
    assert reply == {"error": "org.varlink.service.InvalidParameter", "parameters": {"parameter": "causes"}}
