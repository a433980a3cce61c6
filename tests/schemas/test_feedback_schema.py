"""``correlator schema feedback``: the published schema of the feedback topic holds every record the code writes."""

from __future__ import annotations

import json

import jsonschema
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from correlator.cli import cli
from correlator.core.feedback import Feedback, Label, VerdictRef, feedback_from_dict, feedback_to_dict
from correlator.schemas import feedback_schema_text

SCHEMA = json.loads(feedback_schema_text())
NAMES = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=40)


def test_the_command_prints_it() -> None:
    result = CliRunner().invoke(cli, ["schema", "feedback"])
    assert result.exit_code == 0 and json.loads(result.stdout)["title"] == "correlator.feedback/v1"


@given(label=st.sampled_from(Label), user=NAMES, name=st.none() | NAMES, code=NAMES)
def test_every_record_the_code_writes_is_valid_and_reads_back(label: Label, user: str, name: str | None,
                                                            code: str) -> None:
    feedback = Feedback(VerdictRef("v1-abc", code, "default"), label, user, name, "2026-12-05T05:00:00.000Z",
                        "C123", "1796446581.000100")
    record = feedback_to_dict(feedback)
    jsonschema.validate(record, SCHEMA)
    assert feedback_from_dict(record) == feedback


def test_the_labels_are_the_codes() -> None:
    assert set(SCHEMA["properties"]["label"]["enum"]) == {label.value for label in Label}
