#!/usr/bin/env python3
"""Calls one Varlink method and prints the replies: varlink-call.py SOCKET METHOD [JSON] [--more]"""
import json
import socket
import sys

args = [a for a in sys.argv[1:] if a != "--more"]
more = "--more" in sys.argv
if len(args) < 2:
    sys.exit(__doc__)
path, method = args[0], args[1]
parameters = json.loads(args[2]) if len(args) > 2 else {}
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.connect(path)
call = {"method": method, "parameters": parameters}
if more:
    call["more"] = True
connection.sendall(json.dumps(call).encode() + b"\0")
buffer = b""
while True:
    chunk = connection.recv(65536)
    if not chunk:
        break
    buffer += chunk
    while b"\0" in buffer:
        message, buffer = buffer.split(b"\0", 1)
        reply = json.loads(message)
        print(json.dumps(reply, sort_keys=True))
        if "error" in reply:
            sys.exit(1)
        if not reply.get("continues"):
            sys.exit(0)
