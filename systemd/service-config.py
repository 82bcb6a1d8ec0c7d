#!/usr/bin/env python3
"""Print the default configuration for the system service: config/switchyard.json with the
socket where switchyard.socket listens.

The daemon adopts the socket from systemd and binds nothing itself; the path in the file only
documents where the socket is, and is what the daemon would bind if it were started without the
socket unit (which the service's hardening would refuse anyway: /run is read-only to it).
"""
import json
import sys

SOCKET = "/run/switchyard/switchyard.sock"

if len(sys.argv) != 2:
    sys.exit("usage: service-config.py config/switchyard.json")
with open(sys.argv[1]) as f:
    config = json.load(f)
config.setdefault("switchyard", {}).setdefault("socket", {})["path"] = SOCKET
json.dump(config, sys.stdout, indent=2)
sys.stdout.write("\n")
