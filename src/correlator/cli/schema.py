"""``correlator schema verdict|risk|loss|feedback``: print the JSON Schema a consumer of the verdict, risk or feedback
topic can validate against (loss records travel on the risk topic)."""

from __future__ import annotations

import click

from correlator.schemas import feedback_schema_text, loss_schema_text, risk_schema_text, verdict_schema_text

SCHEMAS = {"verdict": verdict_schema_text, "risk": risk_schema_text, "loss": loss_schema_text,
           "feedback": feedback_schema_text}


@click.command()
@click.argument("name", type=click.Choice(sorted(SCHEMAS)))
def schema(name: str) -> None:
    """Print a published JSON Schema (draft 2020-12): 'verdict' is correlator.verdict/v1, 'risk' correlator.risk/v1,
    'loss' correlator.loss/v1 (records an exactly-once Kafka sink lost), 'feedback' correlator.feedback/v1 (the Slack buttons' answers, which `correlator accuracy` reads)."""
    click.echo(SCHEMAS[name](), nl=False)
