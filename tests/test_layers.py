"""The layers are visible in the imports (issue: one shape for the code).

Every import in the project's Python files, lazy ones inside functions too, is
read with ``ast``.  ``controller.core`` is pure; ``store`` uses only core;
``hw`` and ``firmware_bridge`` use only ``controller.core``; and no two files
or folders import each other, directly or round a longer loop.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("controller", "hw", "firmware_bridge")
# The hub firmware is MicroPython: its modules import each other as a package of
# their own (``firmware.main`` on the Pico), and nothing outside it.
FIRMWARE = ("firmware_bridge", "firmware")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            out[module_name(path)] = path
    return out


MODULES = project_modules()


def resolve(name: str) -> str | None:
    """The project module an import names (the longest known prefix), or None if foreign."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            names = [prefix] + [f"{prefix}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            target = resolve(name)
            if target is not None and target != module:
                found.add(target)
    # ``from pkg import mod`` names both pkg and pkg.mod: keep the module, not its package's __init__
    return {t for t in found if not any(o.startswith(t + ".") for o in found) or MODULES[t].name != "__init__.py"}


GRAPH = {m: imports_of(m) for m in MODULES}


def layer(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "controller" and len(parts) > 1 and parts[1] in ("core", "store", "app"):
        return ".".join(parts[:2])
    if tuple(parts[:2]) == FIRMWARE:
        return "firmware_bridge.firmware"
    return parts[0]


ALLOWED = {
    "controller.core": {"controller.core"},
    "controller.store": {"controller.core", "controller.store"},
    "controller.app": {"controller", "controller.core", "controller.store", "controller.app", "hw",
                       "firmware_bridge", "firmware_bridge.firmware"},
    "controller": {"controller", "controller.app"},
    "hw": {"hw", "controller.core"},
    "firmware_bridge": {"firmware_bridge", "firmware_bridge.firmware", "controller.core"},
    "firmware_bridge.firmware": {"firmware_bridge.firmware"},
}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_stay_in_their_layer(module):
    mine = layer(module)
    wrong = sorted(t for t in GRAPH[module] if layer(t) not in ALLOWED[mine])
    assert not wrong, f"{module} ({mine}) imports {wrong}"


def test_no_import_cycle_between_files():
    try:
        tuple(graphlib.TopologicalSorter(GRAPH).static_order())
    except graphlib.CycleError as err:
        pytest.fail(f"import cycle: {' -> '.join(err.args[1])}")


def test_no_import_cycle_between_folders():
    folders: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        folders.setdefault(layer(module), set()).update(layer(t) for t in targets if layer(t) != layer(module))
    try:
        tuple(graphlib.TopologicalSorter(folders).static_order())
    except graphlib.CycleError as err:
        pytest.fail(f"import cycle between folders: {' -> '.join(err.args[1])}")


def test_the_reader_sees_every_module():
    """A guard on the test itself: it must find the modules and their imports."""
    assert "controller.core.tracker" in MODULES and "controller.app.service" in MODULES
    assert "controller.core.deal" in GRAPH["controller.core.tracker"]
    assert "controller.store.gamelog" in GRAPH["controller.app.service"]
