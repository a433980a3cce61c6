"""The layering rules of docs/architecture.md, enforced."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold() -> None:
    """import-linter (pyproject): the core imports no I/O library, layers point downward, the core's stages keep
    their order, and no package's modules or subpackages import each other in a circle."""
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-3000:]


def test_offline_path_loads_no_service_client() -> None:
    """Importing the offline analyzer and parser loads none of faust, redis, confluent_kafka."""
    code = (
        "import sys, correlator.offline.analyze, correlator.offline.files, correlator.cli.analyze, correlator.cli.parse;"
        "print(sorted(m for m in ('faust', 'redis', 'confluent_kafka', 'aiokafka') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_core_type_checks_strictly() -> None:
    """mypy --strict over all of src (configured in pyproject): its types are part of its contract."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-3000:]


def _cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module, or a module importing itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(root: str) -> None:
        work = [(root, iter(sorted(imports[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in imports[node]:
                    found.append(sorted(component))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return found


def test_cycle_finder_sees_a_circle() -> None:
    """The finder below is not vacuous: a → b → c → a is one circle, d beside it none."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [["a", "b", "c"]]


def test_no_import_circle_among_modules() -> None:
    """No module of src/ reaches itself through imports, lazy imports in functions included (a package's
    ``__init__`` and its own submodules too, which the sibling contract does not look at)."""
    graph = grimp.build_graph("correlator", cache_dir=None)
    modules = graph.modules
    imports = {m: graph.find_modules_directly_imported_by(m) & modules for m in modules}
    assert _cycles(imports) == []
