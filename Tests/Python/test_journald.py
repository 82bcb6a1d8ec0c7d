"""switchyardd's journal entries, as journald would receive them.

journald is not running here (and systemd is not PID 1), so journal_capture.py plays it: in a
private mount namespace (`unshare --mount --propagation private`) it mounts a tmpfs holding
/run/systemd/journal, binds the native socket there, starts switchyardd with stderr connected to
a stream named by JOURNAL_STREAM as systemd does, makes calls that log, sends SIGHUP and SIGTERM,
and prints every datagram's fields as JSON. Outside the namespace nothing changes: the tests check
that /run/systemd/journal and the mount table are as they were.

Needs root and util-linux's unshare and setpriv; skipped otherwise.
"""

import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

import pytest

from conftest import STORE, SWITCHYARDD
from journal_capture import JOURNAL_DIRECTORY, MOUNT_SOURCE, parse_native, receive

HELPER = pathlib.Path(__file__).with_name("journal_capture.py")
SOURCES = pathlib.Path(__file__).resolve().parents[2] / "Sources"
FEATURES = ["primes", "activityFeed", "signUp"]
STANDARD_FIELDS = ["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC"]
# What journald accepts as a field name a client may send.
FIELD_NAME = re.compile(r"[A-Z0-9][A-Z0-9_]{0,63}")


# --- The native protocol, without a daemon --------------------------------------------------


def test_both_native_encodings_are_read():
    data = (
        b"MESSAGE=plain = text\n"
        b"SWITCHYARD_METHOD\n" + (8).to_bytes(8, "little") + b"No\npe\n=x\n"
        b"EMPTY=\n"
        b"SWITCHYARD_EMPTY\n" + (0).to_bytes(8, "little") + b"\n"
        b"PRIORITY=6\n"
    )
    assert parse_native(data) == [
        ("MESSAGE", b"plain = text", False),
        ("SWITCHYARD_METHOD", b"No\npe\n=x", True),
        ("EMPTY", b"", False),
        ("SWITCHYARD_EMPTY", b"", True),
        ("PRIORITY", b"6", False),
    ]


@pytest.mark.parametrize(
    "data",
    [
        b"MESSAGE=no newline at the end",
        b"NAME\n" + (5).to_bytes(8, "little") + b"abc",
        b"NAME\n" + (3).to_bytes(8, "little") + b"abcX",
        b"NAME\n\x01\x00",
    ],
)
def test_a_cut_entry_is_an_error(data):
    with pytest.raises(ValueError):
        parse_native(data)


def test_an_entry_passed_as_a_memfd_is_read_whole():
    payload = b"MESSAGE=large\nSWITCHYARD_BIG\n" + (100_000).to_bytes(8, "little") + b"y" * 100_000 + b"\n"
    memfd = os.memfd_create("journal-entry")
    sender, receiver = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        os.write(memfd, payload)  # the offset stays at the end, as libsystemd leaves it
        socket.send_fds(sender, [b""], [memfd])
        assert receive(receiver, bytearray(1 << 16)) == (payload, True)
        sender.send(b"MESSAGE=small\n")
        assert receive(receiver, bytearray(1 << 16)) == (b"MESSAGE=small\n", False)
    finally:
        os.close(memfd)
        sender.close()
        receiver.close()


# --- In a private mount namespace -------------------------------------------------------------


def host_state():
    """What the namespace must leave alone: whether the journal folder exists, and the mount
    table, which must not show the helper's tmpfs (named by MOUNT_SOURCE)."""
    with open("/proc/self/mountinfo") as f:
        leaked = [line.strip() for line in f if MOUNT_SOURCE in line or JOURNAL_DIRECTORY in line]
    return os.path.lexists(JOURNAL_DIRECTORY), leaked


@pytest.fixture(scope="module")
def namespaces():
    if os.geteuid() != 0:
        pytest.skip("needs root: a private mount namespace with a tmpfs on /run/systemd/journal")
    for tool in ("unshare", "setpriv"):
        if shutil.which(tool) is None:
            pytest.skip(f"needs util-linux's {tool} (a private mount namespace; the daemon dying with the helper)")
    probe = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "true"], capture_output=True, text=True, timeout=30
    )
    if probe.returncode != 0:
        pytest.skip(f"unshare --mount does not work here: {probe.stderr.strip()}")


@pytest.fixture
def capture(namespaces):
    """Runs journal_capture.py in a mount namespace of its own; returns (its result, its pid)."""
    folder = tempfile.mkdtemp(prefix="switchyard-journal-")
    before = host_state()

    def run(*args, timeout=60):
        args = [a.replace("{folder}", folder) for a in args]
        helper = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "--", sys.executable, str(HELPER), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = helper.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # The helper and the daemon share the session and process group the helper leads.
            os.killpg(helper.pid, signal.SIGKILL)
            out, err = helper.communicate()
            pytest.fail(f"journal_capture.py {' '.join(args)} took over {timeout} s:\n{err.decode(errors='replace')}")
        assert helper.returncode == 0, f"journal_capture.py failed ({helper.returncode}):\n{err.decode(errors='replace')}"
        result = json.loads(out)
        assert result["errors"] == [], "the fake journald read datagrams it could not parse"
        assert len(result["transports"]) == len(result["entries"])
        return result, helper.pid

    try:
        yield run
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        assert host_state() == before, "the mount namespace leaked into the host"


def test_the_reader_reads_what_libsystemd_writes_including_a_memfd(capture):
    large = 20 << 20  # past libsystemd's send buffer, so it passes a sealed memfd
    result, _ = capture("libsystemd", "--large-bytes", str(large))
    assert result["sent"] == [0, 0, 0]
    plain, two_lines, big = result["entries"]
    assert plain == {"MESSAGE": "plain", "PRIORITY": "6", "SWITCHYARD_KEY": "a=b", "SYSLOG_IDENTIFIER": "python3"}
    assert two_lines["MESSAGE"] == "two\nlines"
    assert result["transports"][1]["binary"] == ["MESSAGE"]
    assert big["MESSAGE"] == "large"
    assert big["SWITCHYARD_LARGE"] == "x" * large + "\nend"
    assert result["transports"][2]["memfd"] is True


def source_window(code_file, code_line, lines=3):
    """The source lines a CODE_FILE (`#fileID`: `Module/File.swift`) and CODE_LINE point at."""
    module, _, name = code_file.partition("/")
    assert module.startswith("Switchyard"), code_file
    # Each module's sources are in Sources/ under its name without the prefix.
    folder = module.removeprefix("Switchyard")
    matches = list((SOURCES / folder).rglob(name))
    assert len(matches) == 1, f"{code_file} is not one file under Sources/{folder}: {matches}"
    text = matches[0].read_text().splitlines()
    return "\n".join(text[code_line - 1:code_line - 1 + lines])


def test_switchyardd_writes_native_entries_when_stderr_is_the_journal(capture):
    result, helper_pid = capture("daemon", "--daemon", SWITCHYARDD, "--folder", "{folder}", "--stream", "match")
    entries = result["entries"]
    replies = result["replies"]
    assert result["exit_status"] == 0
    assert result["reload_seen"], "no 'configuration reloaded' entry after SIGHUP"
    assert result["journal_stream"] and re.fullmatch(r"\d+:\d+", result["journal_stream"])
    # With JOURNAL_STREAM naming its stderr, nothing goes to stdout or stderr: only the journal.
    assert result["stream_bytes"] == ""
    assert all(not t["memfd"] for t in result["transports"])

    # Every entry: the six standard fields, then SWITCHYARD_ fields journald accepts.
    for entry in entries:
        assert all(not isinstance(v, list) for v in entry.values()), f"a field occurs twice: {entry}"
        assert list(entry)[:6] == STANDARD_FIELDS, entry
        assert entry["MESSAGE"]
        assert entry["PRIORITY"] in {"2", "3", "4", "5", "6", "7"}, entry
        assert entry["SYSLOG_IDENTIFIER"] == "switchyardd"
        assert entry["CODE_FILE"].endswith(".swift"), entry
        assert entry["CODE_LINE"].isdigit() and int(entry["CODE_LINE"]) > 0, entry
        assert entry["CODE_FUNC"], entry
        for name in list(entry)[6:]:
            assert name.startswith("SWITCHYARD_") and FIELD_NAME.fullmatch(name), name
        # CODE_FILE and CODE_LINE name the log call that wrote the entry.
        window = source_window(entry["CODE_FILE"], int(entry["CODE_LINE"]))
        assert f'"{entry["MESSAGE"]}"' in window, (
            f"{entry['CODE_FILE']}:{entry['CODE_LINE']} does not log {entry['MESSAGE']!r} "
            f"(is switchyardd built from these sources?):\n{window}"
        )

    # The primes feature runs in a worker process, whose life is logged as it happens.
    workers = [e for e in entries if e["MESSAGE"].startswith("worker ")]
    assert {e["MESSAGE"] for e in workers} >= {"worker started", "worker ready"}
    assert all(e["SWITCHYARD_FEATURE"] == "primes" and e["SWITCHYARD_PID"].isdigit() for e in workers if "SWITCHYARD_PID" in e)
    messages = [e["MESSAGE"] for e in entries if not e["MESSAGE"].startswith("worker ")]
    assert messages == [
        "no state directory: nothing will outlive the daemon (set state.directory or --state-directory)",
        "feature started", "feature started", "feature started", "listening",
        "error reply", "error reply", "error reply", "configuration reloaded",
        "shutting down: answering the calls in flight, accepting no more", "stopped",
    ], messages

    started = [e for e in entries if e["MESSAGE"] == "feature started"]
    assert [e["SWITCHYARD_FEATURE"] for e in started] == FEATURES
    for entry in started:
        assert entry["PRIORITY"] == "6"
        assert entry["SWITCHYARD_ISOLATION"] == ("process" if entry["SWITCHYARD_FEATURE"] == "primes" else "actor")

    (listening,) = [e for e in entries if e["MESSAGE"] == "listening"]
    assert listening["SWITCHYARD_SOCKET"] == result["socket_path"]
    assert listening["PRIORITY"] == "6"

    # Error replies: one per failed call, none for the good Send, each with the peer's credentials.
    assert "error" not in replies["good send"], replies["good send"]
    errors = {e["SWITCHYARD_METHOD"]: e for e in entries if e["MESSAGE"] == "error reply"}
    # A client's method name is logged with control characters escaped, so it cannot forge lines.
    assert set(errors) == {f"{STORE}.Nope", f"{STORE}.No\\npe", f"{STORE}.Send"}
    # The helper made the calls; unshare ran it without forking, so its pid is the one we started.
    assert result["client_pid"] == helper_pid
    for entry in errors.values():
        assert entry["PRIORITY"] == "6"
        assert entry["SWITCHYARD_PEER_UID"] == str(os.getuid())
        assert entry["SWITCHYARD_PEER_PID"] == str(result["client_pid"])

    unknown_method = errors[f"{STORE}.Nope"]
    assert replies["unknown method"]["error"] == "org.varlink.service.MethodNotFound"
    assert unknown_method["SWITCHYARD_ERROR"].startswith("org.varlink.service.MethodNotFound")
    assert f"{STORE}.Nope" in unknown_method["SWITCHYARD_ERROR"]
    assert "SWITCHYARD_ACTION" not in unknown_method

    escaped = entries.index(errors[f"{STORE}.No\\npe"])
    assert result["transports"][escaped]["binary"] == []

    unknown_action = errors[f"{STORE}.Send"]
    assert replies["unknown action"]["error"] == f"{STORE}.InvalidAction"
    assert "nope" in unknown_action["SWITCHYARD_ACTION"]
    assert json.loads(unknown_action["SWITCHYARD_ACTION"]) == {"nope": {}}
    assert unknown_action["SWITCHYARD_ERROR"].startswith(f"{STORE}.InvalidAction")

    (reloaded,) = [e for e in entries if e["MESSAGE"] == "configuration reloaded"]
    assert reloaded["PRIORITY"] == "5"
    assert reloaded["SWITCHYARD_CHANGED"] == "nothing"

    assert entries[-1]["MESSAGE"] == "stopped"
    assert entries[-1]["PRIORITY"] == "6"


@pytest.mark.parametrize(
    "stream",
    [
        # JOURNAL_STREAM names the stream systemd made, but stderr was redirected to a file.
        "inherited",
        # No JOURNAL_STREAM at all, stderr a socket.
        "absent",
    ],
)
def test_switchyardd_writes_text_to_stderr_when_stderr_is_not_the_journal(capture, stream):
    result, helper_pid = capture("daemon", "--daemon", SWITCHYARDD, "--folder", "{folder}", "--stream", stream)
    assert result["exit_status"] == 0
    assert result["entries"] == [], "switchyardd wrote to the journal though its stderr is not the journal"
    if stream == "inherited":
        assert result["journal_stream"]
        assert result["stream_bytes"] == ""
        text = result["stderr"]
    else:
        assert result["journal_stream"] is None
        text = result["stream_bytes"]
    lines = text.splitlines()
    assert sum("feature started" in line for line in lines) == 3
    assert any(f"socket={result['socket_path']}" in line and "listening" in line for line in lines)
    assert any("error reply" in line and f"peer.pid={helper_pid}" in line and "method=io.switchyard.Store.Nope" in line for line in lines)
    assert any("notice" in line and "configuration reloaded" in line for line in lines)
    assert lines[-1].endswith("stopped")
