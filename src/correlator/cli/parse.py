"""``correlator parse PATH...``: print the events of log files as JSON lines (the event JSON every stage shares)."""

from __future__ import annotations

import sys

import click

from correlator.adapters.codec import encode_event
from correlator.cli import RuntimeFailure, report
from correlator.cli.options import settings_options
from correlator.config import Settings
from correlator.core.events import SourceProgress
from correlator.core.ingest.records import ParseError
from correlator.offline.files import iter_events
from correlator.offline.summary import Summary


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--errors/--no-errors", default=True, show_default=True,
              help="report records that could not be parsed on stderr")
@click.option("--progress/--no-progress", default=False, show_default=True,
              help="also print source_progress events (each log's own time, used for coverage)")
@click.option("--cluster-from-dir", is_flag=True,
              help="Each folder directly under a given directory holds one cluster's logs; the folder names it.")
@settings_options("tz", "cluster", "layout")
def parse(paths: tuple[str, ...], errors: bool, progress: bool, cluster_from_dir: bool, settings: Settings) -> None:
    """Print one event JSON object per line for log files, directories (recursively) or - (stdin).

    Exit 1 when no log record was recognised at all (binary or unknown files, nothing but over-long lines).
    """
    out = sys.stdout.buffer
    summary = Summary()
    try:
        for item in iter_events(list(paths), tz=settings.tz, cluster=settings.cluster, summary=summary,
                                cluster_from_dir=cluster_from_dir, layout=settings.layout):
            if isinstance(item, ParseError):
                if errors:
                    click.echo(f"parse error {item.reason} at {item.ref}: {item.detail}", err=True)
                continue
            if not progress and isinstance(item, SourceProgress):
                continue
            out.write(encode_event(item) + b"\n")
    except FileNotFoundError as exc:
        raise RuntimeFailure(f"no such file or directory: {exc}") from None
    except BrokenPipeError:
        return
    finally:
        out.flush()
    report(summary, "parse")
