"""Honest on partial evidence: the real lab runs with the faulty DataNode's log left out.

In a real incident the log that decides is the one most likely to be missing. For every lab run whose fault sits on
one DataNode, this leaves that DataNode's log out (in turn, on every version pair) and holds each failed
checkpoint's verdict to one rule: it names the silent DataNode — by host or by the transfer address the write's
lines give — as the suspect, or says ``INSUFFICIENT_DATA`` naming it; never ``UNEXPLAINED``, never another host alone.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

import pytest

from correlator.core.explain.causes import Code
from correlator.core.explain.verdict import CoverageReason, EvidenceItem, verdict_to_dict
from correlator.offline.analyze import analyze, ordered_events
from correlator.offline.summary import Summary

pytestmark = pytest.mark.slow
"""Each lab run judged again with one log left out or damaged: in `make test`, out of the quick tier (`make check`)."""

DATA = Path(__file__).resolve().parents[1] / "data" / "lab"
NO_CAUSE = (Code.UNEXPLAINED, Code.INSUFFICIENT_DATA)


def _datanode_faults() -> list[Path]:
    """Lab runs whose fault is on one DataNode and is the cause of their failed checkpoints (not a hiccup that only
    tipped a grown checkpoint over)."""
    out = []
    for truth_path in sorted(DATA.glob("*/*/truth.json")):
        truth = json.loads(truth_path.read_text())
        host = (truth.get("fault") or {}).get("host") or ""
        blamed = truth["expected"] and all(host in want["hosts"] for want in truth["expected"])
        if blamed and any(p.name.endswith(f"-datanode-{host}.log") for p in truth_path.parent.iterdir()):
            out.append(truth_path.parent)
    return out


RUNS = _datanode_faults()


Damage = Literal["left out", "cut mid-file", "gzipped and cut mid-file", "not openable"]


SAID_IN_COVERAGE: dict[Damage, CoverageReason] = {"not openable": CoverageReason.NOT_READ,
                                                 "gzipped and cut mid-file": CoverageReason.DAMAGED}
"""How a verdict's coverage names the faulty DataNode's file, when it was given but could not be read whole."""


def _with_faulty_datanode(run: Path, into: Path, damage: Damage) -> dict[str, Any]:
    """The run's logs in ``into``, the faulty DataNode's left out or damaged as a real incident leaves it."""
    truth: dict[str, Any] = json.loads((run / "truth.json").read_text())
    for f in run.iterdir():
        if f.name == "truth.json":
            continue
        if f.is_dir():  # a log in its host's folder (a Kafka broker's server.log)
            shutil.copytree(f, into / f.name)
        elif not f.name.endswith(f"-datanode-{truth['fault']['host']}.log"):
            shutil.copy(f, into / f.name)
        elif damage == "cut mid-file":  # a copy cut short: half its bytes, the last line cut in two
            (into / f.name).write_bytes(f.read_bytes()[: f.stat().st_size // 2])
        elif damage == "gzipped and cut mid-file":  # a rotation truncated by a full disk
            packed = gzip.compress(f.read_bytes())
            (into / f"{f.name}.1.gz").write_bytes(packed[: len(packed) // 2])
        elif damage == "not openable":  # a rotated file's name left pointing at nothing
            (into / f.name).symlink_to(into / "rotated-away")
    return truth


def test_every_version_pair_has_datanode_faults() -> None:
    assert {p.parent.name for p in RUNS} == {"3.2.1-1.20.1", "3.3.6-1.20.1", "3.4.1-2.1.1", "3.4.1-2.3.0"}
    assert len(RUNS) >= 15, [f"{p.parent.name}/{p.name}" for p in RUNS]


@pytest.mark.parametrize("damage", get_args(Damage))
@pytest.mark.parametrize("run", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_the_silent_datanode_is_named_never_a_healthy_neighbour(run: Path, damage: Damage, tmp_path: Path) -> None:
    truth = _with_faulty_datanode(run, tmp_path, damage)
    faulty = {truth["fault"]["host"], truth["fault"]["addr"]}
    verdicts = {(v["job_id"], int(v["checkpoint_id"])): v for v in map(verdict_to_dict, analyze([str(tmp_path)]))}
    wrong = []
    for failed in truth["failed_checkpoints"]:
        v = verdicts.get((failed["job_id"], int(failed["checkpoint_id"])))
        if v is None:
            wrong.append(f"checkpoint {failed['checkpoint_id']}: no verdict")
            continue
        cause = v["root_cause"]
        suspects = {m["host"] for m in v["coverage"]["missing"] if m.get("pointed_by")}
        named = faulty & (set(cause["hosts"]) | suspects)
        if cause["code"] == "UNEXPLAINED" or not named:
            wrong.append(f"checkpoint {failed['checkpoint_id']}: {cause['code']} on {cause['hosts']}, suspects "
                         f"{sorted(suspects)}: {cause['title']}")
        elif cause["code"] == "INSUFFICIENT_DATA" and "cause on" in json.dumps(v):
            wrong.append(f"checkpoint {failed['checkpoint_id']}: a verdict with no cause says 'cause on'")
        said = {m["host"]: m.get("why") or "" for m in v["coverage"]["missing"]}.get(truth["fault"]["host"], "")
        if damage in SAID_IN_COVERAGE and not said.startswith(f"{SAID_IN_COVERAGE[damage]}: "):
            wrong.append(f"checkpoint {failed['checkpoint_id']}: coverage says {said!r} of the {damage} log")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("run", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_a_cut_gzip_is_read_up_to_the_cut(run: Path, tmp_path: Path) -> None:
    """The faulty DataNode's log gzipped and cut just before the gzip trailer: every line decompresses, so every
    verdict is the one the whole log gives, and the damage is named, not hidden."""
    truth = _with_faulty_datanode(run, tmp_path, "left out")
    [log] = [f for f in run.iterdir() if f.name.endswith(f"-datanode-{truth['fault']['host']}.log")]
    packed = gzip.compress(log.read_bytes())
    (tmp_path / f"{log.name}.1.gz").write_bytes(packed[:-8])  # the CRC and length a complete member ends with

    def codes(path: Path) -> list[tuple[Any, ...]]:
        return [(v.checkpoint_id, v.root_cause.code, v.root_cause.hosts) for v in analyze([str(path)])]
    assert codes(tmp_path) == codes(run)
    summary = Summary()
    list(ordered_events([str(tmp_path)], summary=summary))
    [note] = [n for p, n in summary.notes if p.endswith(".1.gz") and n.startswith("damaged: ")]
    assert note.startswith("damaged: read to line") and "gzip stream ends early" in note, note
    assert summary.errors["damaged"] == 1


STAMP = re.compile(rb"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")


def _last_deciding_line(log: Path, cited: list[EvidenceItem]) -> int:
    """The last line (1-based) the cited evidence rests on: its own line, and for evidence that sums many lines (a
    run of slow-disk warnings) or spans time, the last line stamped by the time it ends (the lab logs in UTC)."""
    until = max((item.end_ms or item.at_ms) for item in cited)
    last = max(int(item.ref.rsplit(":", 1)[1]) for item in cited)
    for n, line in enumerate(log.read_bytes().splitlines(), start=1):
        m = STAMP.match(line)
        if m is not None:
            stamp = datetime.strptime(m[1].decode(), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
            if int(stamp.timestamp()) * 1000 + int(m[2]) <= until:
                last = max(last, n)
    return last


def _cut_after(data: bytes, line: int, packed: bool) -> bytes:
    """``data`` cut in the middle of the line after ``line`` (1-based); gzipped first when ``packed``, flushed at the
    cut so that everything before it decompresses, and the stream cut off a little after it (a rotation a full disk
    truncated)."""
    end = sum(len(x) for x in data.splitlines(keepends=True)[:line])
    cut = end + max(1, len(data[end:].split(b"\n", 1)[0]) // 2)
    if not packed:
        return data[:cut]
    z = zlib.compressobj(wbits=31)
    head = z.compress(data[:cut]) + z.flush(zlib.Z_FULL_FLUSH)
    rest = z.compress(data[cut:]) + z.flush()
    return head + rest[: len(rest) // 2]


@pytest.mark.parametrize("damage", ["cut mid-file", "gzipped and cut mid-file"])
def test_a_cut_log_whose_deciding_lines_survive_gives_the_stock_verdict(damage: Damage, tmp_path: Path) -> None:
    """What survives a cut is read: the faulty DataNode's log cut just after the last line any verdict of the run
    cites from it (plain, or gzipped and truncated) gives every failed checkpoint the verdict the whole log gives."""
    decided, wrong = 0, []
    for run in RUNS:
        into = tmp_path / f"{run.parent.name}-{run.name}"
        into.mkdir()
        truth = _with_faulty_datanode(run, into, "left out")
        [log] = [f for f in run.iterdir() if f.name.endswith(f"-datanode-{truth['fault']['host']}.log")]
        stock = [v for v in analyze([str(run)]) if v.root_cause.code not in NO_CAUSE]
        cited = [item for v in stock for item in v.evidence if item.ref.rsplit(":", 1)[0] == str(log)]
        assert cited, f"{run}: no verdict cites the faulty DataNode's log"
        packed = damage == "gzipped and cut mid-file"
        (into / (f"{log.name}.1.gz" if packed else log.name)).write_bytes(
            _cut_after(log.read_bytes(), _last_deciding_line(log, cited), packed))
        damaged = {v.checkpoint_id: v.root_cause for v in analyze([str(into)])}
        for whole in stock:
            decided += 1
            got = damaged.get(whole.checkpoint_id)
            if got is None or (got.code, got.hosts) != (whole.root_cause.code, whole.root_cause.hosts):
                wrong.append(f"{run.parent.name}/{run.name} checkpoint {whole.checkpoint_id}: "
                             f"{got and (got.code, got.hosts)}, whole log {whole.root_cause.code} on "
                             f"{whole.root_cause.hosts}")
    assert decided >= len(RUNS)
    assert not wrong, "\n".join(wrong)
