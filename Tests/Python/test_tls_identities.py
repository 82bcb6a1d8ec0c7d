"""Who a TLS client is, wherever the daemon names its clients: `Status` and the metrics count
connections by listener and certificate identity (and the handshakes a listener refused), and
the journal records the certificate's name as the sender of a change, for `Journal`, a
subscriber that asks for causes, and `switchyard log`."""

import os
import shutil
import subprocess
import tempfile

from conftest import INCR, SWITCHYARDD
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
