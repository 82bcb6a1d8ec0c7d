"""N ping-pong Sends of counter.incrTapped to the daemon at argv[1], one in flight at a time."""
import json
import socket
import sys
import time

path, count = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 120
while True:
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        break
    except OSError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.05)
call = json.dumps({"method": "io.switchyard.Store.Send", "parameters": {"action": {"counter": {"incrTapped": {}}}}}).encode() + b"\0"
pending = b""
for _ in range(count):
    conn.sendall(call)
    while b"\0" not in pending:
        pending += conn.recv(65536)
    reply, _, pending = pending.partition(b"\0")
    assert b"error" not in reply, reply
