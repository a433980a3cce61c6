"""The two dependency locks: requirements.lock is the test freeze (`make setup` installs it), requirements-runtime.lock
is what the image installs (deploy/Dockerfile) — exactly what `pip install .` needs at run time, at the same pins.

Installing the runtime lock into a fresh venv, as the Dockerfile does, took 25 to 69 s here (downloads included), too
long for the suite's budget: these tests check the locks against the installed packages' own metadata instead."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
TEST_LOCK = ROOT / "requirements.lock"
RUNTIME_LOCK = ROOT / "requirements-runtime.lock"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def pins(path: Path) -> dict[str, str]:
    """Canonical name -> the pinned line, for every ``name==version`` line (anything else is not a pin)."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        assert re.fullmatch(r"[A-Za-z0-9._-]+==[A-Za-z0-9.+!_-]+", line), f"{path.name}: not an exact pin: {line!r}"
        found[canonicalize_name(line.split("==")[0])] = line
    return found


def runtime_closure() -> set[str]:
    """Every distribution correlator needs at run time, with the extras its requirements ask for, from the installed
    packages' metadata (the venv holds requirements.lock)."""
    environment = default_environment()
    seen: dict[str, set[str]] = {}
    todo: list[tuple[str, frozenset[str]]] = [("correlator", frozenset())]
    while todo:
        name, extras = todo.pop()
        key = canonicalize_name(name)
        if key in seen and extras <= seen[key]:
            continue
        seen.setdefault(key, set()).update(extras)
        for text in importlib.metadata.distribution(name).requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or any(
                requirement.marker.evaluate({**environment, "extra": extra}) for extra in {"", *extras}
            ):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return set(seen) - {"correlator"}


def test_the_runtime_lock_pins_what_the_test_lock_pins() -> None:
    """Each runtime pin is the test lock's line for that package, word for word: the image runs what the tests ran."""
    runtime, test = pins(RUNTIME_LOCK), pins(TEST_LOCK)
    assert runtime and set(runtime) < set(test)
    assert {name: line for name, line in runtime.items() if test[name] != line} == {}


def test_the_runtime_lock_is_exactly_what_pip_install_dot_needs() -> None:
    """The runtime lock names every dependency of pyproject's [project] dependencies and everything they require in
    turn (extras included), and nothing else; each declared range admits its pin."""
    runtime = pins(RUNTIME_LOCK)
    closure = runtime_closure()
    assert {"missing": sorted(closure - set(runtime)), "extra": sorted(set(runtime) - closure)} == \
        {"missing": [], "extra": []}
    for text in PYPROJECT["project"]["dependencies"]:
        requirement = Requirement(text)
        version = runtime[canonicalize_name(requirement.name)].split("==")[1]
        assert requirement.specifier.contains(version), (text, version)


def test_no_test_tool_reaches_the_image() -> None:
    """Nothing of the test extra (pytest, hypothesis, mypy, playwright, ...) is in the runtime lock."""
    runtime = pins(RUNTIME_LOCK)
    tools = {canonicalize_name(Requirement(t).name) for t in PYPROJECT["project"]["optional-dependencies"]["test"]}
    assert tools and not tools & set(runtime)
    assert {"pytest", "mypy", "playwright", "hypothesis"} <= tools
