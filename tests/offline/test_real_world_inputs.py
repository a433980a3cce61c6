"""The lab's real logs as other deployments have them give the verdicts the stock files give, and say what was guessed.

Each rendering (tests/support/rerender.py) rebuilds the same real records as Kubernetes container files, JSON
layouts, ``kubectl logs`` files, gzipped rotations, local time across a DST fall-back, a time-only layout, or two
clusters in one folder. `correlator analyze` on the rendering must give the verdicts it gives on the stock files:
the same jobs, checkpoint ids, codes and hosts (pods for hosts where the rendering names pods), and the same
failure times (moved by the rendering's shift).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from correlator.cli import cli
from correlator.core.explain.verdict import Verdict
from correlator.offline.analyze import analyze
from tests.support import rerender

LAB = Path(__file__).resolve().parents[1] / "data" / "lab"
PAIRS = ("3.3.6-1.20.1", "3.4.1-2.1.1")
RUNS = {pair: sorted(p.parent for p in (LAB / pair).glob("*/truth.json") if not p.parent.name.endswith("-json"))
        for pair in PAIRS}
"""The runs in the daemons' stock text layouts (the ``-json`` runs are real JSON-layout logs, judged as they are)."""

Rendering = Callable[[Path, Path], tuple[rerender.Hosts, int]]


def _plain(render: Callable[[Path, Path], rerender.Hosts]) -> Rendering:
    return lambda run, dst: (render(run, dst), 0)


def _cri_of_ecs(run: Path, dst: Path) -> tuple[rerender.Hosts, int]:
    """Flink on Kubernetes with the ECS layout: JSON records inside CRI lines."""
    rerender.json_layout(run, dst / "ecs", "ecs")
    return rerender.cri(dst / "ecs", dst / "k8s"), 0


RENDERINGS: dict[str, tuple[Rendering, dict[str, Any], str]] = {
    # name: (rendering, analyze options, the folder to analyze under the rendering's root)
    "cri": (_plain(rerender.cri), {}, ""),
    "docker-json-file": (_plain(rerender.docker), {}, ""),
    "kubectl-logs": (_plain(rerender.kubectl), {}, ""),
    "ecs": (_plain(lambda r, d: rerender.json_layout(r, d, "ecs")), {}, ""),
    "log4j2-json": (_plain(lambda r, d: rerender.json_layout(r, d, "log4j2-json")), {}, ""),
    "logstash": (_plain(lambda r, d: rerender.json_layout(r, d, "logstash")), {}, ""),
    "cri-of-ecs": (_cri_of_ecs, {}, "k8s"),
    "gzip-rotations": (_plain(rerender.gzip_rotations), {}, ""),
    "dst-fall-back": (rerender.dst_fall_back, {"tz": "Europe/Berlin"}, ""),
    "time-only": (_plain(rerender.time_only), {}, ""),
    "level-first-layout": (_plain(rerender.level_first), {"layout": rerender.LEVEL_FIRST}, ""),
}
EVERY_PAIR = ("cri", "cri-of-ecs", "dst-fall-back", "gzip-rotations")
"""Renderings run on both version pairs; the rest on the first (their readers do not depend on the versions)."""

CASES = [(pair, run, name) for pair in PAIRS for run in RUNS[pair] for name in RENDERINGS
         if pair == PAIRS[0] or name in EVERY_PAIR]

Shape = tuple[str, int, str, tuple[str, ...], tuple[str, ...], int | None, int | None]


def _shape(verdicts: list[Verdict], hosts: rerender.Hosts | None = None, shift: int = 0) -> list[Shape]:
    """What must not change: job, checkpoint, code, cause hosts, failure hosts, failure and start times."""
    m = hosts or {}

    def moved(ms: int | None) -> int | None:
        return None if ms is None else ms + shift

    return sorted((v.job_id or "", v.checkpoint_id, v.root_cause.code,
                   tuple(sorted(m.get(h, h) for h in v.root_cause.hosts)),
                   tuple(sorted(m.get(h, h) for h in v.failure.hosts)),
                   moved(v.failure.failed_at_ms), moved(v.failure.started_at_ms)) for v in verdicts)


_STOCK: dict[Path, list[Verdict]] = {}


def _stock(run: Path) -> list[Verdict]:
    if run not in _STOCK:
        _STOCK[run] = list(analyze([str(run)]))
    return _STOCK[run]


def test_every_version_pair_and_rendering_is_covered() -> None:
    assert all(len(RUNS[pair]) >= 8 for pair in PAIRS), {p: len(r) for p, r in RUNS.items()}
    assert sum(1 for run in RUNS[PAIRS[0]] for v in _stock(run)) >= 6, "the stock runs must have failures to keep"


@pytest.mark.parametrize(("pair", "run", "name"), CASES, ids=[f"{p}/{r.name}/{n}" for p, r, n in CASES])
def test_the_rendering_gives_the_stock_verdicts(pair: str, run: Path, name: str, tmp_path: Path) -> None:
    render, options, under = RENDERINGS[name]
    hosts, shift = render(run, tmp_path / "in")
    got = list(analyze([str(tmp_path / "in" / under)], **options))
    assert _shape(got) == _shape(_stock(run), hosts, shift)


PAIRS_OF_RUNS = [("slow-disk", "lock-held"), ("datanode-pause", "slow-pipeline"), ("task-error", "scanner-differences")]


@pytest.mark.parametrize("per_folder", [False, True], ids=["told-apart", "cluster-from-dir"])
@pytest.mark.parametrize(("a", "b"), PAIRS_OF_RUNS, ids=[f"{a}+{b}" for a, b in PAIRS_OF_RUNS])
def test_two_clusters_in_one_folder_keep_their_own_verdicts(a: str, b: str, per_folder: bool, tmp_path: Path) -> None:
    """Their faults start in the same second; evidence of one never explains the other's failure."""
    run_a, run_b = LAB / PAIRS[0] / a, LAB / PAIRS[0] / b
    hosts_a, hosts_b = rerender.two_clusters(run_a, run_b, tmp_path, per_folder=per_folder)
    shift_b = rerender.fault_start_ms(run_a) - rerender.fault_start_ms(run_b)
    got = list(analyze([str(tmp_path)], cluster_from_dir=per_folder))
    want = sorted(_shape(_stock(run_a), hosts_a) + _shape(_stock(run_b), hosts_b, shift_b))
    assert _shape(got) == want
    assert len({v.cluster for v in got}) == len({(v.job_id) for v in got}) or len(got) < 2


def _cli(args: list[str]) -> tuple[list[str], str]:
    result = CliRunner().invoke(cli, ["analyze", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [ln for ln in result.stdout.splitlines() if ln.strip()], result.stderr


SAID = {
    "cri": r"containers/hdfs-datanode-1_hdfs_datanode-[0-9a-f]{64}\.log: CRI container log; host hdfs-datanode-1 from",
    "kubectl-logs": r"hdfs-datanode-1\.log: .*host hdfs-datanode-1 from .*\(a guess: name the host",
    "gzip-rotations": r"hadoop-root-datanode-lab-dn2\.log\.1\.gz: .*gzip",
    "dst-fall-back": r"done: .*\d+ stamps in the hour the DST fall-back repeats, placed by their file's order",
    "time-only": r"hadoop-root-datanode-lab-dn2\.log\.2026-12-01: .*times of day dated from its file name "
                 r"\(2026-12-01\)",
    "ecs": r"flink-root-taskexecutor-0-lab-tm\.log: ECS JSON layout; host lab-tm from its daemon file name",
}


@pytest.mark.parametrize("name", sorted(SAID))
def test_what_was_guessed_or_unwrapped_is_said_per_file(name: str, tmp_path: Path) -> None:
    render, options, under = RENDERINGS[name]
    render(LAB / PAIRS[0] / "slow-disk", tmp_path / "in")
    args = [str(tmp_path / "in" / under)] + (["--tz", options["tz"]] if "tz" in options else [])
    verdicts, stderr = _cli(args)
    assert verdicts
    assert re.search(SAID[name], stderr), stderr


def test_a_time_only_file_without_a_date_in_its_name_says_how_to_fix_it(tmp_path: Path) -> None:
    rerender.time_only(LAB / PAIRS[0] / "slow-disk", tmp_path / "dated")
    (tmp_path / "in").mkdir()
    for path in (tmp_path / "dated").iterdir():
        path.rename(tmp_path / "in" / path.name.removesuffix(".2026-12-01"))
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "in")], catch_exceptions=False)
    assert "hadoop-root-datanode-lab-dn2.log: times of day with no date in its lines or name: rename it" in result.stderr
    assert re.search(r"rejected: .*\d+ ", result.stderr), result.stderr


def test_a_stamp_in_the_hour_spring_forward_skips_is_counted(tmp_path: Path) -> None:
    """Berlin's 2026-03-29 02:00-03:00 never happened on the wall: a line stamped in it is read and said."""
    run = LAB / PAIRS[0] / "slow-disk"
    spring = int(rerender.datetime(2026, 3, 29, 1, 0, tzinfo=rerender.timezone.utc).timestamp() * 1000)
    (tmp_path / "in").mkdir()
    for log in rerender.stock_files(run):
        text = rerender.shifted(log.text, spring - rerender.fault_start_ms(run), rerender.ZoneInfo("Europe/Berlin"))
        text = text.replace(" 03:00:0", " 02:00:0")  # a clock that did not step: a few seconds in the gap
        (tmp_path / "in" / log.name).write_text(text)
    result = CliRunner().invoke(cli, ["analyze", "--tz", "Europe/Berlin", str(tmp_path / "in")], catch_exceptions=False)
    assert re.search(r"\d+ stamps in the hour the DST spring-forward skips, read with the offset before it",
                     result.stderr), result.stderr


def test_a_layout_not_starting_with_the_date_is_refused_with_the_setting_that_reads_it(tmp_path: Path) -> None:
    rerender.level_first(LAB / PAIRS[0] / "slow-disk", tmp_path / "in")
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "in")], catch_exceptions=False)
    assert result.exit_code == 1
    assert ("records in a layout it cannot read (if its lines do not start with their date, give their log4j "
            "pattern with --layout)") in result.stderr
    verdicts, stderr = _cli(["--layout", rerender.LEVEL_FIRST, str(tmp_path / "in")])
    assert verdicts and "hadoop-root-datanode-lab-dn2.log: the --layout pattern; host lab-dn2" in stderr


@pytest.mark.parametrize("pattern", ["%p %c %m%n", "%d{hh:mm a} %p %m%n", "%d{'unclosed} %m"])
def test_an_unusable_layout_is_refused_at_start_with_the_reason(pattern: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["analyze", "--layout", pattern, str(LAB / PAIRS[0] / "control")])
    assert result.exit_code == 2
    assert "--layout:" in result.output and ("no %d" in result.output or "not supported" in result.output
                                             or "unclosed" in result.output), result.output


def test_a_guessed_host_is_named_in_the_verdicts_coverage(tmp_path: Path) -> None:
    """kubectl-logs files name their pod only by the file's name: the verdict says its hosts were guessed."""
    rerender.kubectl(LAB / PAIRS[0] / "slow-disk", tmp_path / "in")
    (verdict,) = [v for v in analyze([str(tmp_path / "in")]) if v.checkpoint_id == 3]
    guessed = {c.host for c in verdict.covered if c.why}
    assert "hdfs-datanode-1" in guessed and "orders-taskmanager-1-1" in guessed, verdict.covered
    (stock,) = [v for v in _stock(LAB / PAIRS[0] / "slow-disk") if v.checkpoint_id == 3]
    assert not any(c.why for c in stock.covered)
    text = _cli(["--format", "text", str(tmp_path / "in")])[0]
    joined = " ".join(ln.strip() for ln in text)  # the text verdict wraps at 100 columns
    assert "hosts guessed: " in joined and "hdfs-datanode-1" in joined.split("hosts guessed: ", 1)[1]
