"""Makes Varlink calls as whoever runs it (the access tests run it under setpriv as another
user) and prints each reply as one line of JSON: the daemon judges the caller by the kernel's
credentials for this process, which only a real process of that user has.

    python3 peer_call.py SOCKET '{"method": "io.switchyard.Store.Get"}' ...

A call with "more" prints its first reply and then waits, reading, until the daemon ends the
call or the connection (for tests of a subscription that a reload revokes): it prints every
further reply, then "closed". An argument "wait-for:PATH" waits until PATH exists before the
next call, on the same connection.
"""

import json
import os
import socket
import sys
import time


def read_reply(conn, buffer):
    while b"\0" not in buffer:
        chunk = conn.recv(65536)
        if not chunk:
            return None, buffer
        buffer += chunk
    message, _, rest = buffer.partition(b"\0")
    return json.loads(message), rest


def main():
    path, calls = sys.argv[1], sys.argv[2:]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(15)
    conn.connect(path)
    buffer = b""
    for text in calls:
        if text.startswith("wait-for:"):
            # Holds the connection open until the test says go on (after a reload, say).
            deadline = time.monotonic() + 15
            while not os.path.exists(text[len("wait-for:"):]) and time.monotonic() < deadline:
                time.sleep(0.02)
            continue
        call = json.loads(text)
        conn.sendall(json.dumps(call).encode() + b"\0")
        reply, buffer = read_reply(conn, buffer)
        print(json.dumps(reply), flush=True)
        if call.get("more") and reply is not None and reply.get("continues"):
            while True:
                reply, buffer = read_reply(conn, buffer)
                if reply is None:
                    break
                print(json.dumps(reply), flush=True)
                if not reply.get("continues"):
                    break
            print("closed", flush=True)
    conn.close()


main()
