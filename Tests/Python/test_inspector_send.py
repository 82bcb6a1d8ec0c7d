"""Sending an action from the inspector (`POST /inspector/api/send`) on a real daemon: off unless
`http.inspectorSend` is on, then only as the access policy's `inspector` rules allow, journaled
with `inspector` as its sender; a body too large or not JSON is refused and the daemon goes on."""

import contextlib
import json
import os
import signal
import time

from conftest import INCR, STORE
from inspector_support import inspected_daemon, post_action, read_json

daemon_with = contextlib.contextmanager(inspected_daemon)

DECR = {"counter": {"decrTapped": {}}}
SENDING = {"http": {"inspectorSend": "on"}}
INSPECTOR_MAY_INCREMENT = {"page": {"inspector": True, "allow": ["write"], "actions": ["counter.incrTapped"]}}


def newest(daemon):
    return read_json(daemon, "/inspector/api/journal", limit=1)["entries"][0]


def test_sending_is_off_by_default_and_the_page_is_told():
    with daemon_with() as daemon:
        status, answer = post_action(daemon, {"action": INCR})
        assert status == 403 and "http.inspectorSend" in answer["error"], answer
        assert read_json(daemon, "/inspector/api/health")["inspector"] == {"send": False}
        assert daemon.get("/primes/count")[1] == 0


def test_an_allowed_action_is_journaled_with_the_inspector_as_its_sender():
    configuration = {**SENDING, "access": {"rules": INSPECTOR_MAY_INCREMENT}}
    with daemon_with(configuration=configuration) as daemon:
        assert read_json(daemon, "/inspector/api/health")["inspector"] == {"send": True}
        status, answer = post_action(daemon, {"action": INCR})
        assert status == 200, answer
        assert daemon.get("/primes/count")[1] == 1
        entry = newest(daemon)
        assert entry["seq"] == answer["seq"] and entry["origin"] == "request", entry
        assert entry["certificate"] == "inspector", entry
        with daemon.raw() as connection:
            journaled = connection.call("Journal", {"since": answer["seq"] - 1})["parameters"]["entries"][0]
        assert journaled["certificate"] == "inspector", journaled


def test_an_action_the_policy_does_not_grant_the_inspector_is_refused_with_its_reason():
    for rules in (INSPECTOR_MAY_INCREMENT, {"operators": {"user": "root", "allow": ["read", "write"]}}):
        with daemon_with(configuration={**SENDING, "access": {"rules": rules}}) as daemon:
            status, answer = post_action(daemon, {"action": DECR})
            assert status == 403, answer
            assert "inspector" in answer["error"] and answer["varlink"]["error"] == f"{STORE}.PermissionDenied", answer
            assert daemon.get("/primes/count")[1] == 0


def test_without_rules_the_inspector_may_send_nothing():
    with daemon_with(configuration=SENDING) as daemon:
        status, answer = post_action(daemon, {"action": INCR})
        assert status == 403 and answer["varlink"]["error"] == f"{STORE}.PermissionDenied", answer


def test_a_bad_request_is_refused_and_the_daemon_goes_on():
    configuration = {**SENDING, "access": {"rules": INSPECTOR_MAY_INCREMENT}}
    with daemon_with(configuration=configuration) as daemon:
        cases = [
            ({"action": INCR}, {"Authorization": "Bearer nope"}, 401),
            ({"action": INCR}, {"Content-Type": "text/plain"}, 415),
            ({"action": INCR}, {"Origin": "http://evil.example"}, 403),
            (b'{"action": ' + b"[" * 10_000, {}, 400),
            (b"\xff\xfe{}", {}, 400),
            (b'{"action": {"counter": {"incrTapped": {"pad": "' + b"x" * (100 << 10) + b'"}}}}', {}, 413),
            ({"action": {"counter": {"noSuchCase": {}}}}, {}, 403),
            ({"action": INCR, "more": True}, {}, 400),
            ([INCR], {}, 400),
        ]
        for body, headers, expected in cases:
            status, answer = post_action(daemon, body, headers=headers)
            assert status == expected, (body[:80] if isinstance(body, bytes) else body, status, answer)
        assert daemon.process.poll() is None
        assert daemon.get("/primes/count")[1] == 0
        assert post_action(daemon, {"action": INCR})[0] == 200


def test_a_reload_turns_sending_on_and_off():
    rules = {"access": {"rules": INSPECTOR_MAY_INCREMENT}}
    with daemon_with(configuration=rules) as daemon:
        assert post_action(daemon, {"action": INCR})[0] == 403
        config = os.path.join(daemon.folder, "switchyard.json")
        with open(config, "w") as f:
            json.dump({"switchyard": {**SENDING, **rules}}, f)
        daemon.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while post_action(daemon, {"action": INCR})[0] != 200:
            assert time.monotonic() < deadline, daemon.log()
            time.sleep(0.1)
        assert read_json(daemon, "/inspector/api/health")["inspector"] == {"send": True}
