"""org.varlink.service as the PyPI `varlink` package and its command line see it."""

import subprocess
import sys

import pytest
import varlink

from conftest import STORE

INTERFACES = ["org.varlink.service", STORE]
METHODS = {"Send", "SendBatch", "Get", "Subscribe", "Describe", "Status", "Journal", "Replay", "Metrics"}
ERRORS = {
    "InvalidRequest", "InvalidAction", "ActionNotRouted", "PathNotFound", "ShuttingDown", "PermissionDenied",
    "InternalAction", "NoJournal", "SeqNotRetained",
}


def test_get_info_through_the_client(daemon):
    with daemon.client() as client:
        assert client.get_interfaces() == INTERFACES
        service = client.open("org.varlink.service")
        info = service.GetInfo()
        service.close()
    assert info["vendor"] == "Switchyard"
    assert info["product"] == "switchyardd"
    assert info["version"].count(".") == 2
    assert info["url"].startswith("https://")
    assert info["interfaces"] == INTERFACES


def run_cli(*args):
    result = subprocess.run(
        [sys.executable, "-m", "varlink.cli", *args], capture_output=True, text=True, timeout=30
    )
    # varlink.cli exits 0 even when the call failed: the error is on stderr.
    return result.returncode, result.stdout, result.stderr


def test_get_info_through_the_command_line(daemon):
    status, out, err = run_cli("info", daemon.address)
    assert (status, err) == (0, "")
    assert "Vendor: Switchyard" in out
    assert "Product: switchyardd" in out
    listed = [line.strip() for line in out.split("Interfaces:")[1].splitlines() if line.strip()]
    assert listed == INTERFACES


def test_command_line_call_and_error(daemon):
    status, out, err = run_cli("call", f"{daemon.address}/{STORE}.Get", '{"path": "/primes/count"}')
    assert (status, err) == (0, "")
    assert '"state": 0' in out
    status, out, err = run_cli("call", f"{daemon.address}/{STORE}.Get", '{"path": "/nope"}')
    assert f"{STORE}.PathNotFound" in err


def test_open_parses_the_store_description_with_varlinks_parser(daemon):
    with daemon.client() as client:
        con = client.open(STORE)
        try:
            for method in METHODS:
                assert callable(getattr(con, method)), method
            assert con.Get(path="/primes/count") == {"seq": 0, "state": 0}
        finally:
            con.close()


@pytest.mark.parametrize("name", INTERFACES)
def test_interface_description_parses(daemon, name):
    with daemon.client() as client:
        service = client.open("org.varlink.service")
        description = service.GetInterfaceDescription(interface=name)["description"]
        service.close()
    interface = varlink.Interface(description)
    assert interface.name == name
    if name == STORE:
        members = interface.members
        assert METHODS <= set(members)
        assert ERRORS <= set(members)
        assert "Feature" in members
        assert interface.get_method("Subscribe").signature == (
            "Subscribe(path: ?string, since: ?int, history: ?string, causes: ?bool)"
            " -> (seq: int, history: ?string, state: ?object, patch: ?[]object, cause: ?ChangeCause)"
        )
    else:
        assert {"GetInfo", "GetInterfaceDescription"} <= set(interface.members)


def test_description_of_an_unknown_interface(daemon):
    with daemon.client() as client:
        with pytest.raises(varlink.InterfaceNotFound) as raised:
            client.open("com.example.Nope")
    assert raised.value.parameters() == {"interface": "com.example.Nope"}
