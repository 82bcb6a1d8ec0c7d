"""Run inside another network namespace by test_tls_netns.py (`ip netns exec … python3 tls_load.py`):

    tls_load.py send HOST PORT CA CERT KEY SECONDS   Sends one after another over one TLS connection
                                                     for SECONDS; prints {"sent": N, "error": …}
    tls_load.py fingerprint HOST PORT CA CERT KEY    prints the SHA-256 of the server's certificate
"""

import hashlib
import json
import socket
import ssl
import sys
import time


def connect(host, port, ca, certificate, key):
    context = ssl.create_default_context(cafile=ca)
    context.check_hostname = False
    context.load_cert_chain(certificate, key)
    return context.wrap_socket(socket.create_connection((host, int(port)), timeout=10))


def send(conn, seconds):
    call = json.dumps({"method": "io.switchyard.Store.Send", "parameters": {"action": {"counter": {"incrTapped": {}}}}}).encode() + b"\0"
    sent, buffer, error = 0, b"", None
    deadline = time.monotonic() + float(seconds)
    try:
        while time.monotonic() < deadline:
            conn.sendall(call)
            while b"\0" not in buffer:
                chunk = conn.recv(65536)
                if not chunk:
                    raise ConnectionError("the daemon closed the connection")
                buffer += chunk
            reply, _, buffer = buffer.partition(b"\0")
            if "error" in json.loads(reply):
                raise RuntimeError(reply.decode())
            sent += 1
    except Exception as failure:  # reported to the test, which fails on it
        error = repr(failure)
    print(json.dumps({"sent": sent, "error": error}), flush=True)


if __name__ == "__main__":
    mode, host, port, ca, certificate, key = sys.argv[1:7]
    with connect(host, port, ca, certificate, key) as conn:
        if mode == "send":
            send(conn, sys.argv[7])
        else:
            print(hashlib.sha256(conn.getpeercert(binary_form=True)).hexdigest(), flush=True)
