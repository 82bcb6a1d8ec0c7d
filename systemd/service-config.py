#!/usr/bin/env python3
"""Print the default configuration for a system service: a configuration file (such as
config/switchyard.json) with the socket where the service's socket unit listens.

The daemon adopts the socket from systemd and binds nothing itself; the path in the file only
documents where the socket is, and is what the daemon would bind if it were started without the
socket unit (which the service's hardening would refuse anyway: /run is read-only to it).
"""
import json
import sys

if len(sys.argv) != 3:
    sys.exit("usage: service-config.py CONFIG.json /run/NAME/NAME.sock")
with open(sys.argv[1]) as f:
    config = json.load(f)
config.setdefault("switchyard", {}).setdefault("socket", {})["path"] = sys.argv[2]
json.dump(config, sys.stdout, indent=2)
sys.stdout.write("\n")
