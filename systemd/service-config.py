#!/usr/bin/env python3
"""Print the default configuration for a system service: a configuration file (such as
config/switchyard.json) with the socket where the service's socket unit listens.

The daemon adopts the socket from systemd and binds nothing itself; the path in the file only
documents where the socket is, and is what the daemon would bind if it were started without the
socket unit (which the service's hardening would refuse anyway: /run is read-only to it).
"""
import json
import sys

arguments = sys.argv[1:]
# --without-features: the file is Switchyard's default, installed for another application; its
# "features" section is PrimeTime's, which that application does not host.
without_features = "--without-features" in arguments
arguments = [a for a in arguments if a != "--without-features"]
if len(arguments) != 2:
    sys.exit("usage: service-config.py [--without-features] CONFIG.json /run/NAME/NAME.sock")
with open(arguments[0]) as f:
    config = json.load(f)
if without_features:
    config.get("switchyard", {}).pop("features", None)
config.setdefault("switchyard", {}).setdefault("socket", {})["path"] = arguments[1]
json.dump(config, sys.stdout, indent=2)
sys.stdout.write("\n")
