"""The folders show the design: no import cycles, the core imports nothing outside itself,
and `supervisor/` holds folders only (SPEC, STYLE "functional core, imperative shell")."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = {"supervisor": REPO / "supervisor", "desktop": REPO / "desktop",
            "resources": REPO / "resources"}
# The standard library's pure parts the core may use: no clock, processes, files or chance.
CORE_STDLIB = frozenset({
    "__future__", "collections", "contextlib", "dataclasses", "datetime", "enum", "functools",
    "itertools", "json", "logging", "math", "re", "signal", "string", "typing", "zoneinfo",
    "hashlib", "textwrap", "unicodedata", "bisect", "operator", "heapq", "abc",
    "random",   # only the type of the seeded Random a caller passes in (test_identity checks
                # that no core module does `import random` itself)
})


def modules() -> dict[str, Path]:
    found = {}
    for top, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(("pitcrew", top, *parts))] = path
    return found


def imports_of(path: Path, name: str, is_package: bool) -> set[str]:
    """Every module `path` imports, wherever the import stands (also inside functions and
    `if TYPE_CHECKING:` blocks: a cycle hidden there is still a cycle)."""
    out: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{alias.name}" for alias in node.names)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    edges: dict[str, set[str]] = {}
    for name, path in mods.items():
        targets = imports_of(path, name, path.name == "__init__.py")
        edges[name] = {t for t in targets if t in mods and t != name}
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycles() -> None:
    edges = graph()
    # a package's __init__ importing its own submodules is not a design cycle
    for name in edges:
        edges[name] = {t for t in edges[name] if not t.startswith(name + ".")}
    assert find_cycle(edges) is None, " → ".join(find_cycle(edges) or [])


def test_the_core_imports_nothing_outside_the_core() -> None:
    mods = modules()
    for name, path in mods.items():
        if not name.startswith("pitcrew.supervisor.core"):
            continue
        for target in imports_of(path, name, path.name == "__init__.py"):
            top = target.split(".")[0]
            if top == "pitcrew":
                assert target.startswith("pitcrew.supervisor.core"), f"{name} imports {target}"
            else:
                assert top in CORE_STDLIB and top in sys.stdlib_module_names, \
                    f"{name} imports {target}"


def test_supervisor_holds_folders_only() -> None:
    loose = {p.name for p in (REPO / "supervisor").glob("*.py")}
    assert loose <= {"__init__.py", "__main__.py"}, loose


def test_each_service_module_has_its_own_test_file() -> None:
    """Each partner is testable alone with in-memory ports (tests/service/test_<name>.py)."""
    wanted = {p.stem for p in (REPO / "supervisor" / "service").glob("*.py")
              if p.stem not in ("__init__", "ports", "events", "app_context")}
    have = {p.stem.removeprefix("test_") for p in (REPO / "tests" / "service").glob("test_*.py")}
    assert wanted <= have, sorted(wanted - have)
