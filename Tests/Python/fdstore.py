"""systemd's part in a restart through its file descriptor store, played by the test.

`FdStoreManager` binds a notify socket, keeps the descriptors a daemon stores (`FDSTORE=1`,
`FDNAME=`), drops them on `FDSTOREREMOVE=1` and, as systemd does, drops a stored socket whose peer
hung up; `start()` starts the daemon with what it keeps in `LISTEN_FDS`/`LISTEN_FDNAMES`, as
systemd does after `systemctl restart`.
"""

import array
import fcntl
import os
import select
import socket
import subprocess
import threading

# Becomes the daemon with LISTEN_PID its own and the stored descriptors moved to 3, 4, …, as
# systemd's fork does: bash, which starts in a millisecond and moves descriptors above 9.
LAUNCHER = 'export LISTEN_PID=$$; exec %s; exec "$0" "$@"'


class FdStoreManager:
    def __init__(self, folder, binary, arguments, environment, capacity=64):
        self.folder = folder
        self.binary = binary
        self.arguments = arguments
        self.environment = dict(environment)
        self.notify_path = os.path.join(folder, "notify")
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(self.notify_path)
        self.capacity = capacity
        self.stored = {}  # name -> (fd, polled)
        self.messages = []
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.process = None
        self.log_paths = []
        self._closed = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while not self._closed:
            readable, _, _ = select.select([self.notify], [], [], 0.1)
            if not readable:
                continue
            with self.lock:
                if not self._receive():
                    return

    def _receive(self):
        """Takes one message, under the lock; False once the socket is closed."""
        fds = array.array("i")
        try:
            text, ancillary, _, _ = self.notify.recvmsg(4096, socket.CMSG_SPACE(64 * fds.itemsize), socket.MSG_DONTWAIT)
        except BlockingIOError:
            return True
        except OSError:
            return False
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
        fields = dict(line.split("=", 1) for line in text.decode().split("\n") if "=" in line)
        self.messages.append(fields)
        name = fields.get("FDNAME", "stored")
        if fields.get("FDSTORE") == "1":
            for fd in fds:
                if len(self.stored) >= self.capacity:
                    os.close(fd)
                    continue
                if name in self.stored:
                    os.close(self.stored[name][0])
                self.stored[name] = (fd, fields.get("FDPOLL") != "0")
        elif fields.get("FDSTOREREMOVE") == "1":
            if name in self.stored:
                os.close(self.stored.pop(name)[0])
        else:
            for fd in fds:
                os.close(fd)
        if fields.get("READY") == "1":
            self.ready.set()
        return True

    def _drain(self):
        """Takes every message already sent, as systemd does before it handles the exit."""
        while True:
            with self.lock:
                if not select.select([self.notify], [], [], 0)[0]:
                    return
                self._receive()

    def _drop_hung_up(self):
        with self.lock:
            names = {fd: name for name, (fd, polled) in self.stored.items() if polled}
            poller = select.poll()
            for fd in names:
                poller.register(fd, select.POLLIN)
            for fd, events in poller.poll(0):
                if events & (select.POLLHUP | select.POLLERR):
                    os.close(fd)
                    del self.stored[names[fd]]

    def stored_names(self):
        self._drain()
        with self.lock:
            return sorted(self.stored)

    def start(self, timeout=20):
        """Starts the daemon with what the store keeps, and waits for READY=1."""
        self._drain()
        self._drop_hung_up()
        with self.lock:
            names = sorted(self.stored)
            fds = [self.stored[name][0] for name in names]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SWITCHYARD_", "LISTEN_"))}
        env.update(self.environment)
        env["NOTIFY_SOCKET"] = self.notify_path
        env["SWITCHYARD_FDSTORE"] = str(self.capacity)
        if fds:
            env["LISTEN_FDS"] = str(len(fds))
            env["LISTEN_FDNAMES"] = ":".join(names)
        log_path = os.path.join(self.folder, f"switchyardd-{len(self.log_paths)}.log")
        self.log_paths.append(log_path)
        self.ready.clear()
        # Above every descriptor the daemon is to get, so that no move overwrites one still to move.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3 + len(fds)) for fd in fds]
        moves = " ".join(f"{3 + index}<&{fd}-" for index, fd in enumerate(high))
        try:
            with open(log_path, "wb") as log:
                self.process = subprocess.Popen(
                    ["/bin/bash", "-c", LAUNCHER % moves, self.binary] + self.arguments,
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, pass_fds=high,
                    cwd=self.folder,
                )
        finally:
            for fd in high:
                os.close(fd)
        if not self.ready.wait(timeout):
            raise RuntimeError(f"no READY=1 within {timeout} s:\n{self.log()}")

    def restart(self, timeout=20):
        """`systemctl restart`: SIGTERM, wait for the exit, start again with the store."""
        status = self.stop(timeout)
        assert status == 0, f"switchyardd exited with {status}:\n{self.log()}"
        self.start(timeout)

    def stop(self, timeout=20):
        self.process.terminate()
        try:
            return self._wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None

    def _wait(self, timeout):
        """`Popen.wait`, woken by the exit itself, as systemd's SIGCHLD is: `wait(timeout)` polls."""
        pidfd = os.pidfd_open(self.process.pid)
        try:
            # poll, not select: with a benchmark's thousands of connections the pidfd is past
            # select's 1,024.
            waiting = select.poll()
            waiting.register(pidfd, select.POLLIN)
            waiting.poll(None if timeout is None else timeout * 1000)
        finally:
            os.close(pidfd)
        # A traced daemon (strace) is waitable only once its tracer let go: wait's polling covers it.
        return self.process.wait(timeout)

    def kill(self):
        self.process.kill()
        self.process.wait()

    def log(self):
        parts = []
        for path in self.log_paths:
            with open(path, "rb") as f:
                parts.append(f"--- {os.path.basename(path)}\n" + f.read().decode(errors="replace"))
        return "\n".join(parts)

    def close(self):
        if self.process and self.process.poll() is None:
            self.kill()
        self._closed = True
        self.reader.join()
        with self.lock:
            for fd, _ in self.stored.values():
                os.close(fd)
            self.stored.clear()
        self.notify.close()
