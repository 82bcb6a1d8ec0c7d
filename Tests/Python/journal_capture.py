"""A fake journald for test_journald.py: captures the native datagrams switchyardd sends.

Run it ONLY inside a private mount namespace, as test_journald.py does:

    unshare --mount --propagation private -- python3 journal_capture.py daemon --daemon PATH --folder DIR

It refuses to run in its parent's mount namespace. Inside, it mounts a tmpfs over
/run/systemd/journal (or, when that folder does not exist, over its nearest existing parent, so
that nothing is created on the host's file system), binds an AF_UNIX/SOCK_DGRAM socket at
/run/systemd/journal/socket as journald does, and then:

- `daemon`: starts switchyardd with stdout and stderr connected to a stream socket, as systemd
  connects a service to journald's stdout stream, with `JOURNAL_STREAM` set (`--stream`):
  `match` to that socket's `DEVICE:INODE`; `inherited` to it too but with stderr redirected to a
  file (a child that inherited the variable, not the stream); `absent` to no variable at all. It
  waits until the Varlink socket accepts, makes calls that log (an unknown method, one whose name
  holds a newline, a Send with an unknown action, a good Send), sends SIGHUP and waits for the
  reload, sends SIGTERM and waits for the exit.
- `libsystemd`: sends entries through libsystemd's own `sd_journal_sendv` (one too large for a
  datagram, which libsystemd passes as a sealed memfd), to check this reader against the writer.

It prints one JSON object on stdout: `entries`, a list of dicts field → value (a field that
occurs more than once has a list of values), `transports`, one per entry (`memfd` when the entry
came as a file descriptor, `binary` the fields in the length-prefixed encoding), and what the
mode did (`client_pid`, `replies`, `stderr`, `exit_status`…).

The namespace, and the tmpfs with it, disappears when the last process in it exits; the daemon
dies with this process (`setpriv --pdeathsig`) and is killed by PID on every way out.
"""

import argparse
import array
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

JOURNAL_DIRECTORY = "/run/systemd/journal"
JOURNAL_SOCKET = JOURNAL_DIRECTORY + "/socket"
# Where a tmpfs may be mounted to make JOURNAL_DIRECTORY: the folder itself, or a parent that
# exists when it does not (nothing is ever created outside the tmpfs).
MOUNT_CANDIDATES = [JOURNAL_DIRECTORY, "/run/systemd", "/run"]
# The tmpfs's source name, so that a leak would show in the host's mount table.
MOUNT_SOURCE = "switchyard-test-journal"
STORE = "io.switchyard.Store"
# Large enough for libsystemd's largest datagram (its send buffer, 8 MiB doubled by the kernel).
DATAGRAM_BUFFER = 32 << 20
MAX_FDS = 16


# --- The native protocol -------------------------------------------------------------------


def parse_native(data):
    """The fields of one native journal entry, in order: a list of (name, value bytes, binary).

    Each field is `NAME=value\\n`, or, for a value that may hold a newline, `NAME\\n`, the value's
    length as a 64-bit little-endian integer, the value, and `\\n`.
    """
    fields = []
    i = 0
    while i < len(data):
        end = data.find(b"\n", i)
        if end < 0:
            raise ValueError(f"field at {i} has no newline: {data[i:i + 80]!r}")
        line = data[i:end]
        if b"=" in line:
            name, _, value = line.partition(b"=")
            fields.append((name.decode("ascii"), value, False))
            i = end + 1
        else:
            if end + 9 > len(data):
                raise ValueError(f"binary field {line!r} is cut before its length")
            size = int.from_bytes(data[end + 1:end + 9], "little")
            start = end + 9
            if start + size + 1 > len(data) or data[start + size:start + size + 1] != b"\n":
                raise ValueError(f"binary field {line!r} of {size} bytes is not followed by a newline")
            fields.append((line.decode("ascii"), data[start:start + size], True))
            i = start + size + 1
    return fields


def read_memfd(fd):
    """The whole contents of a file passed by descriptor (its offset is wherever the writer left it)."""
    size = os.fstat(fd).st_size
    chunks = []
    offset = 0
    while offset < size:
        chunk = os.pread(fd, min(size - offset, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def receive(sock, buffer):
    """One datagram: (payload bytes, came as a memfd). Reads a passed descriptor's contents."""
    nbytes, ancillary, flags, _ = sock.recvmsg_into([buffer], socket.CMSG_SPACE(MAX_FDS * 4))
    if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
        raise RuntimeError(f"a datagram was truncated (flags {flags:#x})")
    fds = []
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            passed = array.array("i")
            passed.frombytes(data[: len(data) - len(data) % passed.itemsize])
            fds.extend(passed)
    if not fds:
        return bytes(buffer[:nbytes]), False
    try:
        if len(fds) != 1 or nbytes != 0:
            raise RuntimeError(f"a datagram passed {len(fds)} descriptors and {nbytes} bytes; journald expects one and none")
        return read_memfd(fds[0]), True
    finally:
        for fd in fds:
            os.close(fd)


def entry_json(payload, memfd):
    """An entry as JSON: (dict field → value, transport)."""
    entry = {}
    binary = []
    for name, value, is_binary in parse_native(payload):
        text = value.decode("utf-8", errors="backslashreplace")
        if name in entry:
            previous = entry[name]
            entry[name] = (previous if isinstance(previous, list) else [previous]) + [text]
        else:
            entry[name] = text
        if is_binary:
            binary.append(name)
    return entry, {"memfd": memfd, "binary": binary, "bytes": len(payload)}


class JournalSocket:
    """The fake journald: a datagram socket at JOURNAL_SOCKET, read by a thread of its own, so that
    a sender never blocks on a full queue (net.unix.max_dgram_qlen is small)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(JOURNAL_SOCKET)
        self.sock.settimeout(0.05)
        self.entries = []
        self.transports = []
        self.errors = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        buffer = bytearray(DATAGRAM_BUFFER)
        while True:
            try:
                payload, memfd = receive(self.sock, buffer)
            except socket.timeout:
                if self.stopping.is_set():
                    return  # stopped and drained
                continue
            except Exception as error:  # noqa: BLE001 — reported, not raised in a thread
                self.errors.append(f"{type(error).__name__}: {error}")
                continue
            try:
                entry, transport = entry_json(payload, memfd)
            except Exception as error:  # noqa: BLE001
                self.errors.append(f"unparseable datagram ({error}): {payload[:200]!r}")
                continue
            with self.lock:
                self.entries.append(entry)
                self.transports.append(transport)

    def wait_for(self, message, timeout=10.0):
        def seen():
            with self.lock:
                return any(e.get("MESSAGE") == message for e in self.entries)

        return wait_until(seen, timeout)

    def stop(self):
        """Reads what is queued, then stops."""
        self.stopping.set()
        self.thread.join(timeout=10)
        self.sock.close()


# --- The namespace ---------------------------------------------------------------------------


def mount_namespace(pid="self"):
    return os.readlink(f"/proc/{pid}/ns/mnt")


def make_journal_directory():
    """Mounts a tmpfs that holds JOURNAL_DIRECTORY; returns the mount point."""
    if mount_namespace() == mount_namespace(os.getppid()):
        raise SystemExit("journal_capture.py must run in a mount namespace of its own (unshare --mount)")
    target = next(path for path in MOUNT_CANDIDATES if os.path.isdir(path))
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "mode=0755,size=64m", MOUNT_SOURCE, target],
        check=True,
    )
    os.makedirs(JOURNAL_DIRECTORY, exist_ok=True)
    return target


# --- Modes -----------------------------------------------------------------------------------


class Varlink:
    """A Varlink connection by hand: NUL-ended JSON on a Unix stream socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.buffer = b""

    def call(self, method, parameters=None):
        message = {"method": method}
        if parameters is not None:
            message["parameters"] = parameters
        self.sock.sendall(json.dumps(message).encode() + b"\0")
        while b"\0" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError(f"switchyardd closed the connection instead of answering {method!r}")
            self.buffer += chunk
        reply, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(reply)

    def close(self):
        self.sock.close()


def wait_until_accepting(path, process, timeout=15.0):
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"switchyardd exited with {process.returncode} before accepting")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.connect(path)
            return
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                raise RuntimeError(f"switchyardd never accepted on {path}")
            time.sleep(0.02)


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def run_daemon(args, journal, result):
    socket_path = os.path.join(args.folder, "switchyard.sock")
    stderr_path = os.path.join(args.folder, "stderr.txt")
    result.update(socket_path=socket_path, client_pid=os.getpid(), uid=os.getuid(), stream=args.stream)
    # The stream systemd would connect to stdout and stderr; JOURNAL_STREAM names it.
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    identity = os.fstat(theirs.fileno())
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SWITCHYARD_", "LISTEN_", "WATCHDOG_")) and k not in ("JOURNAL_STREAM", "NOTIFY_SOCKET")
    }
    if args.stream != "absent":
        env["JOURNAL_STREAM"] = f"{identity.st_dev}:{identity.st_ino}"
    result["journal_stream"] = env.get("JOURNAL_STREAM")
    output = open(stderr_path, "wb") if args.stream == "inherited" else None
    captured = bytearray()

    def read_stream():
        while True:
            chunk = ours.recv(65536)
            if not chunk:
                return
            captured.extend(chunk)

    # setpriv (util-linux, as unshare) makes the daemon die with this process, then execs it.
    process = subprocess.Popen(
        ["setpriv", "--pdeathsig", "KILL", "--", args.daemon, "--socket", socket_path],
        stdin=subprocess.DEVNULL,
        stdout=output if output else theirs.fileno(),
        stderr=output if output else theirs.fileno(),
        cwd=args.folder,
        env=env,
    )
    result["daemon_pid"] = process.pid
    theirs.close()
    reader = threading.Thread(target=read_stream, daemon=True)
    reader.start()
    try:
        wait_until_accepting(socket_path, process)
        client = Varlink(socket_path)
        replies = result["replies"] = {}
        try:
            replies["unknown method"] = client.call(f"{STORE}.Nope")
            replies["method with a newline"] = client.call(f"{STORE}.No\npe")
            replies["unknown action"] = client.call(f"{STORE}.Send", {"action": {"nope": {}}})
            replies["good send"] = client.call(f"{STORE}.Send", {"action": {"counter": {"incrTapped": {}}}})
        finally:
            client.close()
        # SIGTERM only once the reload is logged: a graceful shutdown ends the reload service.
        process.send_signal(signal.SIGHUP)
        if args.stream == "match":
            result["reload_seen"] = journal.wait_for("configuration reloaded")
        else:
            result["reload_seen"] = wait_until(
                lambda: b"configuration reloaded" in (read_file(stderr_path) if output else bytes(captured))
            )
        process.send_signal(signal.SIGTERM)
        result["exit_status"] = process.wait(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=5)
        ours.close()
        if output:
            output.close()
        result["stream_bytes"] = captured.decode("utf-8", errors="backslashreplace")
        if output:
            result["stderr"] = read_file(stderr_path).decode("utf-8", errors="backslashreplace")


def run_libsystemd(args, journal, result):
    """Entries written by libsystemd itself: a plain one, one with a newline, one past a datagram."""
    libsystemd = ctypes.CDLL("libsystemd.so.0", use_errno=True)

    class IOVec(ctypes.Structure):
        _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]

    def send(*fields):
        buffers = [ctypes.create_string_buffer(f, len(f)) for f in fields]
        vector = (IOVec * len(fields))(*[IOVec(ctypes.cast(b, ctypes.c_void_p), len(f)) for b, f in zip(buffers, fields)])
        return libsystemd.sd_journal_sendv(vector, len(fields))

    large = b"x" * args.large_bytes
    result["sent"] = [
        send(b"MESSAGE=plain", b"PRIORITY=6", b"SWITCHYARD_KEY=a=b"),
        send(b"MESSAGE=two\nlines", b"PRIORITY=5"),
        send(b"MESSAGE=large", b"PRIORITY=7", b"SWITCHYARD_LARGE=" + large + b"\nend"),
    ]
    result["large_bytes"] = args.large_bytes
    wait_until(lambda: len(journal.entries) + len(journal.errors) >= 3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    daemon = sub.add_parser("daemon")
    daemon.add_argument("--daemon", required=True, help="the switchyardd binary")
    daemon.add_argument("--folder", required=True, help="a folder for the Varlink socket and stderr")
    daemon.add_argument("--stream", choices=["match", "inherited", "absent"], default="match")
    library = sub.add_parser("libsystemd")
    library.add_argument("--large-bytes", type=int, default=20 << 20)
    args = parser.parse_args()

    result = {"mount_point": make_journal_directory()}
    journal = JournalSocket()
    try:
        if args.mode == "daemon":
            run_daemon(args, journal, result)
        else:
            run_libsystemd(args, journal, result)
    finally:
        journal.stop()
    result.update(entries=journal.entries, transports=journal.transports, errors=journal.errors)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
