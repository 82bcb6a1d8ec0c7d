#!/usr/bin/env bash
# The build `make systemd-test`'s restarts upgrade to when there is no release build: the debug
# build's own objects linked again with switchyardd's main module compiled with
# -DSWITCHYARD_UPGRADE_BUILD, which gives it another version (`switchyardd --version`, GetInfo).
# A different binary at the cost of one file's compile and one link, where a second full build
# (release, or every module with another flag) takes most of `make test`'s time again.
#
#   Tests/Systemd/upgrade-build.sh BUILD_DIR OUT     BUILD_DIR: .build; writes OUT (an executable)
set -euo pipefail
build_dir="$(realpath "$1")"
out="$2"
mkdir -p "$(dirname "$out")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$build_dir" "$out" "$work" <<'PY'
import json, os, subprocess, sys

build_dir, out, work = sys.argv[1:4]
triple = "x86_64-unknown-linux-gnu"
# SwiftPM's own commands for the module and the link, from the build it made.
commands = {}
key = None
with open(os.path.join(build_dir, "debug.yaml")) as f:
    for line in f:
        stripped = line.strip()
        if stripped.startswith('"C.switchyardd-') and stripped.endswith(":"):
            key = stripped[1:-2]
        elif key and stripped.startswith("args: "):
            commands[key] = json.loads(stripped[len("args: "):])
            key = None
compile_args = commands[f"C.switchyardd-{triple}-debug.module"]
link_args = commands[f"C.switchyardd-{triple}-debug.exe"]
debug = os.path.join(build_dir, triple, "debug")
main_object = os.path.join(debug, "switchyardd.build", "Switchyardd.swift.o")
sources = os.path.join(debug, "switchyardd.build", "sources")

# One object, no module, index or dependency files: the debug build stays as it is.
skip_with_value = {"-emit-module-path", "-output-file-map", "-index-store-path"}
skip = {"-emit-dependencies", "-emit-module", "-incremental", "-enable-batch-mode", "-serialize-diagnostics", "-parseable-output"}
args, drop_next = [], False
for arg in compile_args:
    if drop_next:
        drop_next = False
    elif arg in skip_with_value:
        drop_next = True
    elif arg in skip:
        pass
    elif arg == f"@{sources}":
        with open(sources) as f:
            args += f.read().split()
    else:
        args.append(arg)
upgraded_object = os.path.join(work, "Switchyardd.swift.o")
subprocess.run(args + ["-DSWITCHYARD_UPGRADE_BUILD", "-o", upgraded_object], check=True)

with open(os.path.join(debug, "switchyardd.product", "Objects.LinkFileList")) as f:
    objects = [line.strip() for line in f if line.strip()]
assert any(o.strip("'\"") == main_object for o in objects), "the debug build's link no longer names Switchyardd.swift.o"
link_list = os.path.join(work, "Objects.LinkFileList")
with open(link_list, "w") as f:
    f.write("\n".join(upgraded_object if o.strip("'\"") == main_object else o for o in objects) + "\n")
args = []
for index, arg in enumerate(link_args):
    if arg.startswith("@") and arg.endswith("Objects.LinkFileList"):
        args.append("@" + link_list)
    elif index > 0 and link_args[index - 1] == "-o":
        args.append(os.path.abspath(out))
    else:
        args.append(arg)
# The debug build's libraries are found beside it ($ORIGIN): here, by their absolute folder.
subprocess.run(args + ["-Xlinker", f"-rpath={debug}"], check=True)
PY
echo "$out: $("$out" --version) (the debug build says $("$build_dir/debug/switchyardd" --version))"
