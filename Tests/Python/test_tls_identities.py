"""Who a TLS client is, wherever the daemon names its clients: `Status` and the metrics count
connections by listener and certificate identity (and the handshakes, connections over the cap
and calls the policy denied, by listener and identity), and
the journal records the certificate's name as the sender of a change, for `Journal`, a
subscriber that asks for causes, and `switchyard log`."""

import os
import shutil
import subprocess
import tempfile
import time

from conftest import INCR, STORE, SWITCHYARDD
from test_tls import TLSConnection, certificates, running_tls_daemon  # noqa: F401 (a fixture)

ADMIN_RULES = {"operator": {"commonName": "operator", "allow": ["read", "write", "admin"]}}


def tcp_listener(connection):
    return next(listener for listener in connection.call("Status")["parameters"]["listeners"]
                if listener["address"].startswith("tcp:"))


def test_status_and_metrics_count_connections_by_listener_and_identity(certificates):
    ca, operator = certificates["ca"], certificates["operator"]
    with running_tls_daemon(certificates, rules=ADMIN_RULES) as daemon:
        address = f"tcp:127.0.0.1:{daemon.port}"
        with TLSConnection(daemon.port, ca, operator) as first, TLSConnection(daemon.port, ca, operator) as second:
            assert "error" not in second.call("Get")
            listener = tcp_listener(first)
            assert listener["connections"] == 2 and listener["identities"] == [{"identity": "operator", "connections": 2}], listener
            refused_before = listener["refusedHandshakes"]
            with TLSConnection(daemon.port, ca) as stranger:  # no certificate
                assert stranger.call("Get") is None
            listener = tcp_listener(first)
            assert listener["refusedHandshakes"] == refused_before + 1, listener
            metrics = first.call("Metrics")["parameters"]["text"]
            assert f'switchyard_listener_connections{{listener="{address}",identity="operator"}} 2' in metrics, metrics
            assert f'switchyard_listener_refused_handshakes_total{{listener="{address}"}} {refused_before + 1}' in metrics, metrics
            with daemon.raw() as local:
                unix = local.call("Status")["parameters"]["listeners"][0]
                assert {"identity": f"uid {os.getuid()}", "connections": 1} in unix["identities"], unix
        with daemon.raw() as local:
            listener = local.call("Status")["parameters"]["listeners"][1]
            assert listener["connections"] == 0 and listener["identities"] == [], listener
            metrics = local.call("Metrics")["parameters"]["text"]
            assert 'identity="operator"' not in metrics, "an identity's series goes with its last connection"


def test_the_journal_names_the_certificate_that_sent_a_change(certificates):
    ca, operator = certificates["ca"], certificates["operator"]
    state = tempfile.mkdtemp(prefix="switchyard-state-")
    try:
        with running_tls_daemon(certificates, rules=ADMIN_RULES, environment={"SWITCHYARD_STATE_DIRECTORY": state}) as daemon:
            with TLSConnection(daemon.port, ca, operator) as watcher, TLSConnection(daemon.port, ca, operator) as sender:
                watcher.send("Subscribe", {"path": "/primes", "causes": True}, more=True)
                assert "state" in watcher.read()["parameters"]
                assert "error" not in sender.call("Send", {"action": INCR})
                cause = watcher.read()["parameters"]["cause"]
                assert cause["origin"] == "request" and cause["certificate"] == "operator", cause
            with daemon.raw() as local:
                entries = local.call("Journal", {})["parameters"]["entries"]
                assert "error" not in local.call("Send", {"action": INCR})
                local_entry = local.call("Journal", {"since": entries[-1]["seq"]})["parameters"]["entries"][0]
            remote = entries[-1]
            assert remote["certificate"] == "operator" and remote["origin"] == "request", remote
            assert "certificate" not in local_entry and local_entry["uid"] == os.getuid(), local_entry
            log = subprocess.run([os.path.join(os.path.dirname(SWITCHYARDD), "switchyard"), "--socket", daemon.socket_path, "log"],
                                 capture_output=True, text=True, timeout=30)
            assert log.returncode == 0, log.stderr
            assert "request certificate operator" in log.stdout, log.stdout
    finally:
        shutil.rmtree(state, ignore_errors=True)


def served(connect):
    """A connection `connect` makes once the daemon serves it: the probes that saw it start may
    still be counted against the cap for a moment."""
    for _ in range(50):
        connection = connect()
        reply = connection.call("Status")
        if reply and "error" not in reply:
            return connection
        connection.close()
        time.sleep(0.1)
    raise AssertionError("never served under the cap")


def test_connections_over_the_cap_are_counted_by_listener(certificates):
    ca, operator = certificates["ca"], certificates["operator"]
    with running_tls_daemon(certificates, rules=ADMIN_RULES, limits={"maxConnections": 2}) as daemon:
        address = f"tcp:127.0.0.1:{daemon.port}"
        with served(daemon.raw) as local, served(lambda: TLSConnection(daemon.port, ca, operator)):
            unix, tcp = local.call("Status")["parameters"]["listeners"]
            with daemon.raw() as over:
                assert over.read()["error"] == f"{STORE}.TooManyConnections"
            with TLSConnection(daemon.port, ca, operator) as over:
                assert over.read()["error"] == f"{STORE}.TooManyConnections"
            unix_after, tcp_after = local.call("Status")["parameters"]["listeners"]
            assert unix_after["refusedConnections"] == unix["refusedConnections"] + 1, unix_after
            assert tcp_after["refusedConnections"] == tcp["refusedConnections"] + 1, tcp_after
            metrics = local.call("Metrics")["parameters"]["text"]
            assert (f'switchyard_listener_refused_connections_total{{listener="{address}"}} '
                    f'{tcp_after["refusedConnections"]}') in metrics, metrics
            assert (f'switchyard_listener_refused_connections_total{{listener="{unix["address"]}"}} '
                    f'{unix_after["refusedConnections"]}') in metrics, metrics
        status = subprocess.run([os.path.join(os.path.dirname(SWITCHYARDD), "switchyard"), "--socket", daemon.socket_path,
                                 "status"], capture_output=True, text=True, timeout=30)
        assert "over the cap refused" in status.stdout, status.stdout


def test_calls_the_policy_denies_are_counted_by_listener_and_identity(certificates):
    ca = certificates["ca"]
    with running_tls_daemon(certificates) as daemon:
        address = f"tcp:127.0.0.1:{daemon.port}"
        with TLSConnection(daemon.port, ca, certificates["reader"]) as reader:
            assert "error" not in reader.call("Get", {"path": "/primes"})
            assert reader.call("Send", {"action": INCR})["error"] == f"{STORE}.PermissionDenied"
            assert reader.call("Send", {"action": INCR})["error"] == f"{STORE}.PermissionDenied"
        with TLSConnection(daemon.port, ca, certificates["stranger"]) as stranger:
            assert stranger.call("Get")["error"] == f"{STORE}.PermissionDenied"
        with TLSConnection(daemon.port, ca, certificates["operator"]) as operator:
            assert "error" not in operator.call("Send", {"action": INCR})
        with daemon.raw() as local:
            listener = local.call("Status")["parameters"]["listeners"][1]
            metrics = local.call("Metrics")["parameters"]["text"]
        assert listener["deniedCalls"] == 3, listener
        denied = {identity["identity"]: identity.get("deniedCalls") for identity in listener["identities"]}
        assert denied == {"reader": 2, "stranger": 1}, listener
        assert f'switchyard_listener_denied_calls_total{{listener="{address}",identity="reader"}} 2' in metrics, metrics
        assert f'switchyard_listener_denied_calls_total{{listener="{address}",identity="stranger"}} 1' in metrics, metrics
        assert f'switchyard_listener_denied_calls_total{{listener="{address}",identity="operator"}}' not in metrics
