"""``correlator analyze PATH...``: explain every failed checkpoint in log files (the event and verdict shapes of `correlator parse` and `correlator schema verdict`)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import click
import orjson

from correlator.cli import RuntimeFailure, report
from correlator.cli.options import format_option, settings_options, text_width
from correlator.config import Settings
from correlator.core.events import CheckpointTriggered, Event
from correlator.core.explain.risk import Risk, risk_text, risk_to_dict
from correlator.core.explain.transactions import TransactionLoss, loss_text, loss_to_dict
from correlator.core.explain.verdict import Verdict, verdict_to_dict
from correlator.core.explain.verdict_text import verdict_text
from correlator.offline.analyze import ordered_events, run_analysis
from correlator.offline.summary import Summary


@click.command()
@click.argument("paths", nargs=-1, required=True)
@format_option("json", "json: one verdict object per line; text: a summary per verdict for people")
@click.option("--risks", "with_risks", is_flag=True,
              help="json: also print the early-warning records (\"schema\": \"correlator.risk/v1\", see `correlator "
                   "schema risk`) and the records an exactly-once Kafka sink lost (\"correlator.loss/v1\") among "
                   "the verdicts, in time order. text prints them always.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write an HTML report with a timeline per verdict into this directory (index.html).")
@click.option("--cluster-from-dir", is_flag=True,
              help="Each folder directly under a given directory holds one cluster's logs; the folder names it.")
@settings_options("tz", "cluster", "layout", "lookahead_ms", "clock_skew_ms")
def analyze(paths: tuple[str, ...], fmt: str, with_risks: bool, report_dir: Path | None, cluster_from_dir: bool,
            settings: Settings) -> None:
    """Print one verdict per failed checkpoint, ordered by failure time, for files, directories or - (stdin).

    Exit 1 when no log record was recognised at all (binary or unknown files, nothing but over-long lines).
    """
    progress = _progress()
    summary = Summary()
    checkpoints: Counter[str] = Counter()
    try:
        events = ordered_events(list(paths), tz=settings.tz, cluster=settings.cluster, summary=summary,
                                cluster_from_dir=cluster_from_dir, layout=settings.layout,
                                on_item=(lambda _item: progress.update(1)) if progress is not None else None)
        losses: list[TransactionLoss] = []
        verdicts, risks = run_analysis(_counting_checkpoints(events, checkpoints), settings.engine_config(), losses)
    except FileNotFoundError as exc:
        raise RuntimeFailure(f"no such file or directory: {exc}") from None
    finally:
        if progress is not None:
            progress.close()
    report(summary, "analyze")
    if not verdicts:
        click.echo(f"correlator: analyze: no verdict: {_why_no_verdict(checkpoints)}", err=True)
    if report_dir is not None:
        _report(verdicts, report_dir, settings.tz, risks, losses)
    out = sys.stdout.buffer
    records: list[tuple[int, Verdict | Risk | TransactionLoss]] = [(v.failure.failed_at_ms, v) for v in verdicts]
    if fmt == "text" or with_risks:
        records = sorted(records + [(r.as_of_ms, r) for r in risks] + [(r.as_of_ms, r) for r in losses],
                         key=lambda pair: pair[0])
    width = text_width()
    try:
        for i, (_, record) in enumerate(records):
            if fmt == "json":
                out.write(orjson.dumps(_record_dict(record)) + b"\n")
            else:
                out.write(((("\n" if i else "") + _record_text(record, width)) + "\n").encode("utf-8"))
        out.flush()
    except BrokenPipeError:
        return


def _record_dict(record: Verdict | Risk | TransactionLoss) -> dict[str, Any]:
    if isinstance(record, Risk):
        return risk_to_dict(record)
    return loss_to_dict(record) if isinstance(record, TransactionLoss) else verdict_to_dict(record)


def _record_text(record: Verdict | Risk | TransactionLoss, width: int) -> str:
    if isinstance(record, Risk):
        return risk_text(record)
    return loss_text(record) if isinstance(record, TransactionLoss) else verdict_text(record, width)


def _counting_checkpoints(events: Iterable[Event], seen: Counter[str]) -> Iterator[Event]:
    for event in events:
        if event.type.startswith("checkpoint_"):
            seen[event.type] += 1
        yield event


def _why_no_verdict(checkpoints: Counter[str]) -> str:
    """A verdict explains a failed checkpoint; say which part was missing."""
    if not checkpoints:
        return ("no Flink checkpoint in these logs (a verdict explains a failed checkpoint: add the JobManager's or "
                "TaskManagers' logs)")
    triggered = checkpoints[CheckpointTriggered.type]
    return f"{triggered:,} checkpoints triggered, none failed" if triggered else "no failed checkpoint in these logs"


def _report(verdicts: list[Any], report_dir: Path, zone: str, risks: list[Risk],
            losses: list[TransactionLoss]) -> None:
    from correlator.offline.report import write_report

    progress = _progress(unit=" pages", desc="report", total=len(verdicts))
    try:
        written = write_report(verdicts, report_dir, zone=zone, risks=risks, losses=losses,
                               on_page=(lambda _v: progress.update(1)) if progress is not None else None)
    except OSError as exc:
        raise RuntimeFailure(f"cannot write the report to {report_dir}: {exc.strerror or exc}") from None
    finally:
        if progress is not None:
            progress.close()
    # stdout holds the verdicts; where the report went is said beside the run's other words, on stderr
    pages = len(verdicts)
    click.echo(f"correlator: analyze: report written to {written[0]} ({pages} verdict page{'' if pages == 1 else 's'})",
               err=True)


def _progress(unit: str = " events", desc: str = "analyzing", total: int | None = None) -> Any:
    """A tqdm counter on stderr, only when a person is watching."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm  # type: ignore[import-untyped]  # tqdm ships no type stubs

    return tqdm(unit=unit, desc=desc, total=total, file=sys.stderr, leave=False, mininterval=0.5)
