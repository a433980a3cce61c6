"""The README leads: its first lines give the set-up commands CI runs, it stays short, and its quick start works as
printed — each line of its own code blocks run one by one in a new directory, in a shell where only the activation line
puts ``correlator`` on the path. Offline needs nothing; live runs against the real broker (``make up`` is replaced by
``correlator topics apply`` on it, ``make down`` by nothing: the broker is the test session's)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from correlator.cli import cli
from correlator.demo import free_port

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 250


def readme() -> str:
    return README.read_text(encoding="utf-8")


def quickstart(kind: str) -> list[str]:
    """The commands of the README's ``<!-- quickstart: KIND -->`` block, their comments dropped."""
    match = re.search(rf"<!-- quickstart: {kind} -->\n```sh\n(.*?)```", readme(), re.S)
    assert match, f"README has no {kind} quick start"
    lines = [re.sub(r"\s+# .*$", "", line).strip() for line in match.group(1).splitlines()]
    return [line for line in lines if line]


def promises(kind: str) -> dict[str, list[str]]:
    """What the block's comments say a command prints (``→ CODE …``) or writes (``dir/index.html``), by command."""
    match = re.search(rf"<!-- quickstart: {kind} -->\n```sh\n(.*?)```", readme(), re.S)
    assert match
    said: dict[str, list[str]] = {}
    for line in match.group(1).splitlines():
        command, _, comment = line.partition("  # ")
        said[command.strip()] = re.findall(r"\b[A-Z]+_[A-Z_]+\b|\bHDFS-\d+\b|\b[\w-]+/[\w.-]+\.html\b", comment)
    return said


@dataclass
class Step:
    command: str
    rc: int
    out: str
    err: str


def run_in_new_shell(commands: list[str], cwd: Path, env: dict[str, str], timeout_s: float) -> list[Step]:
    """One bash, the commands in order as a person types them (``source`` and ``&`` jobs carry over), each one's exit
    status and output kept; background jobs still running at the end are killed."""
    script = ["set +e", "trap 'kill $(jobs -p) 2>/dev/null' EXIT"]
    for i, command in enumerate(commands):
        script.append(f"{{ {command}\n}} > .step-{i}.out 2> .step-{i}.err; echo $? > .step-{i}.rc")
    shell = subprocess.Popen(["bash", "-c", "\n".join(script)], cwd=cwd, env=env, start_new_session=True)
    try:
        shell.wait(timeout_s)
    except subprocess.TimeoutExpired:
        pass
    finally:
        if shell.poll() is None:
            os.killpg(shell.pid, signal.SIGKILL)
            shell.wait()
    steps = []
    for i, command in enumerate(commands):
        rc = cwd / f".step-{i}.rc"
        steps.append(Step(command, int(rc.read_text()) if rc.exists() else -1,
                          (cwd / f".step-{i}.out").read_text(errors="replace") if rc.exists() else "",
                          (cwd / f".step-{i}.err").read_text(errors="replace") if rc.exists() else "(did not finish)"))
    return steps


def new_shell_env() -> dict[str, str]:
    """A login's environment: no CORRELATOR_* settings, no virtualenv, no ``correlator`` on the path."""
    path = [p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
            if p and not (Path(p) / "correlator").exists()]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CORRELATOR_", "VIRTUAL_ENV", "PYTEST_", "PYTHON"))}
    return {**env, "PATH": os.pathsep.join(path)}


def workdir(tmp_path: Path) -> Path:
    """A fresh directory with the clone's virtualenv where `make` puts it: the quick start runs at a clone's root."""
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    return tmp_path


def check(steps: list[Step], said: dict[str, list[str]], cwd: Path) -> None:
    for step in steps:
        assert step.rc == 0, f"`{step.command}` exited {step.rc}: {step.err.strip()[-2000:]}"
        for promise in said.get(step.command, []):
            if promise.endswith(".html"):
                assert (cwd / promise).is_file(), f"`{step.command}` wrote no {promise}"
            else:
                assert promise in step.out, f"`{step.command}` did not print {promise}: {step.out[-2000:]}"


def test_first_lines_give_the_two_commands_ci_runs() -> None:
    """`make demo` and `make test` open the README, and `make test` is what .ci/run runs (after, at most, a set-up
    step `make test` would take itself: the virtualenv, installed while Maven resolves jars beside it)."""
    blocks = re.findall(r"```sh\n(.*?)```", readme(), re.S)
    first = [line.split("#")[0].strip() for line in blocks[0].splitlines()]
    assert first == ["make demo", "make test"]
    assert readme().index(blocks[0]) < 1500  # the first screen
    ci = (ROOT / ".ci" / "run").read_text()
    *before, last = [line for line in ci.splitlines() if line.startswith("make ")]
    assert last == "make test"
    assert all(line.split()[-1] == "venv" for line in before), before


def test_readme_is_short_and_its_links_resolve() -> None:
    text = readme()
    assert len(text.splitlines()) <= MAX_LINES
    anchors = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in re.findall(r"^#+ (.*)$", text, re.M)}
    for doc in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://")):
                continue
            path, _, anchor = target.partition("#")
            if path:
                assert (doc.parent / path).exists(), f"{doc.name} links {target}, which is not there"
            if anchor and (not path or (doc.parent / path).resolve() == README):
                assert anchor in anchors, f"{doc.name} links {target}: README has no such heading"


def test_options_without_an_environment_variable_are_named() -> None:
    """The README says which options have no ``CORRELATOR_*`` variable; every other option has one."""
    paragraph = next(p for p in readme().split("\n\n") if "have none" in p)
    ctx = click.Context(cli)

    def commands(group: click.Command, prefix: str) -> list[tuple[str, click.Command]]:
        if isinstance(group, click.Group):
            return [c for name in group.list_commands(ctx)
                    for c in commands(group.get_command(ctx, name), f"{prefix} {name}")]  # type: ignore[arg-type]
        return [(prefix, group)]

    for name, command in commands(cli, "correlator"):
        for param in command.params:
            if not isinstance(param, click.Option) or param.hidden or param.name == "help":
                continue
            if param.envvar:
                assert param.envvar == f"CORRELATOR_{str(param.name).upper()}", (name, param.opts)
            else:
                assert f"`{param.opts[0]}`" in paragraph, f"{name} {param.opts[0]} has no variable; README omits it"


def test_offline_quick_start_works_as_printed(tmp_path: Path) -> None:
    commands = quickstart("offline")
    assert commands[0] == "source .venv/bin/activate"
    cwd = workdir(tmp_path)
    steps = run_in_new_shell(commands, cwd, new_shell_env(), timeout_s=60)
    check(steps, promises("offline"), cwd)
    assert len(list((cwd / "seed-logs").glob("*.log"))) == 8
    text = next(s for s in steps if "--format text" in s.command).out
    assert "cause: HDFS_DIRECTORY_SCAN" in text and "dn02.example.com" in text


@pytest.mark.integration
def test_live_quick_start_works_as_printed(tmp_path: Path, kafka_bootstrap: str, unique: str) -> None:
    live = quickstart("live")
    assert live[0] == "make up" and live[-1] == "make down"
    # of the offline block, what the live one stands on: the activation and the incident's files
    offline = [c for c in quickstart("offline") if c.startswith(("source ", "correlator simulate "))]
    assert len(offline) == 2
    commands = [*offline, "correlator topics apply", *live[1:-1]]
    cwd = workdir(tmp_path)
    env = {
        **new_shell_env(),
        # `make up`'s broker is the session's; topics, groups and the port private to this test
        "CORRELATOR_BOOTSTRAP_SERVERS": kafka_bootstrap,
        **{f"CORRELATOR_TOPIC_{t.upper()}": f"{t.replace('_', '.')}.{unique}"
           for t in ("logs_flink", "logs_hdfs", "events", "verdicts", "risks", "feedback", "deadletter")},
        "CORRELATOR_WORKER_ID": f"correlator-readme-{unique}",
        "CORRELATOR_WEB_PORT": str(free_port()),
    }
    steps = run_in_new_shell(commands, cwd, env, timeout_s=150)
    check(steps, {**promises("offline"), **promises("live")}, cwd)
    verdict = next(s for s in steps if s.command.startswith("correlator verdicts")).out
    assert "cause: HDFS_DIRECTORY_SCAN" in verdict and "HDFS-15415" in verdict, (cwd / "worker.log").read_text()[-3000:]
