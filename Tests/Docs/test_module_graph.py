"""The module graph is Package.swift's, and the sources keep to it.

SwiftPM lets a file import any module that was built before its own, so a target can reach a
module it never declared (its dependencies' dependencies): nothing but discipline would stop a
new edge. These tests make the declared graph the rule:

- every `import` in a target's sources names the target's own declared dependency, or a module
  of the platform;
- the graph drawn in docs/architecture.md is the graph Package.swift declares between the
  project's own modules, edge for edge.
"""

import json
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWIFT = os.environ.get("SWIFT", "swift")

# Modules of the toolchain and the C library: any target may import them. `Synchronization` is
# not among them: SwitchyardSynchronization re-exports it with a Mutex ThreadSanitizer can see.
PLATFORM_MODULES = {
    "Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Musl", "Darwin",
    "Dispatch", "_Concurrency", "Swift", "XCTest", "Testing", "SwiftShims", "Observation",
}

IMPORT = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public\s+|package\s+|internal\s+|fileprivate\s+|private\s+)?"
    r"import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?([A-Za-z_][A-Za-z0-9_]*)"
)


@pytest.fixture(scope="module")
def package():
    dump = subprocess.run(
        [SWIFT, "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(dump)


def dependency_modules(target):
    """The modules a target declares: targets by name, and products (each a module of that name)."""
    modules = set()
    for dependency in target["dependencies"]:
        (kind, value), = dependency.items()
        modules.add(value[0])
    return modules


def source_folder(target):
    if target.get("path"):
        return os.path.join(ROOT, target["path"])
    base = "Tests" if target["type"] == "test" else "Sources"
    return os.path.join(ROOT, base, target["name"])


def imports(folder):
    """(file, line number, module) for each import under `folder`."""
    for directory, _, files in os.walk(folder):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as source:
                for number, line in enumerate(source, 1):
                    match = IMPORT.match(line)
                    if match:
                        yield os.path.relpath(path, ROOT), number, match.group(1)


def test_every_import_names_a_dependency_its_target_declares(package):
    strays = []
    for target in package["targets"]:
        if target["type"] in ("system", "binary", "plugin"):
            continue
        allowed = dependency_modules(target) | PLATFORM_MODULES | {target["name"]}
        if target["name"] == "SwitchyardSynchronization":
            allowed.add("Synchronization")
        for path, number, module in imports(source_folder(target)):
            if module not in allowed:
                strays.append(f"{path}:{number}: imports {module}, which {target['name']} does not declare")
    assert not strays, (
        "a file imports a module its target does not depend on in Package.swift — declare the "
        "dependency if the graph allows it (and draw it in docs/architecture.md), or move the "
        "code:\n" + "\n".join(strays)
    )


def drawn_graph():
    """The nodes (id → module) and edges of the first mermaid flowchart under '## Modules'."""
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as page:
        text = page.read()
    section = text.split("## Modules", 1)[1]
    chart = section.split("```mermaid", 1)[1].split("```", 1)[0]
    nodes = {
        match.group(1): match.group(2)
        for match in re.finditer(r'^\s*(\w+)\["([^"<]+?)(?:<br/>|")', chart, re.MULTILINE)
    }
    edges = {
        (nodes[source], nodes[target])
        for source, target in re.findall(r"^\s*(\w+)\s*-->\s*(\w+)\s*$", chart, re.MULTILINE)
    }
    return set(nodes.values()), edges


def test_the_drawn_module_graph_is_the_declared_one(package):
    drawn_modules, drawn_edges = drawn_graph()
    own = {
        target["name"]
        for target in package["targets"]
        if target["type"] in ("regular", "executable", "macro")
        and source_folder(target).startswith(os.path.join(ROOT, "Sources") + os.sep)
    }
    # SwitchyardSynchronization is under everything; the C shims are drawn with what uses them.
    required = {name for name in own if name != "SwitchyardSynchronization" and not name.startswith("C")}
    assert required <= drawn_modules, f"modules missing from docs/architecture.md: {sorted(required - drawn_modules)}"
    declared = {
        (target["name"], dependency)
        for target in package["targets"]
        if target["name"] in drawn_modules
        for dependency in dependency_modules(target)
        if dependency in drawn_modules
    }
    assert drawn_edges == declared, (
        f"drawn but not declared: {sorted(drawn_edges - declared)}; "
        f"declared but not drawn: {sorted(declared - drawn_edges)}"
    )
