"""``correlator schema verdict|risk``: print the JSON Schema a consumer of the verdict or risk topic can validate
against."""

from __future__ import annotations

import click

from correlator.schemas import risk_schema_text, verdict_schema_text

SCHEMAS = {"verdict": verdict_schema_text, "risk": risk_schema_text}


@click.command()
@click.argument("name", type=click.Choice(sorted(SCHEMAS)))
def schema(name: str) -> None:
    """Print a published JSON Schema (draft 2020-12): 'verdict' is correlator.verdict/v1, 'risk' correlator.risk/v1."""
    click.echo(SCHEMAS[name](), nl=False)
