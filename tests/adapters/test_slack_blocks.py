"""Block Kit rendering: untrusted log text never pings or links, and every message fits Slack's limits."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.adapters.slack_blocks import (
    BLOCKS_MAX,
    FIELD_MAX,
    HEADER_MAX,
    SECTION_MAX,
    escape,
    parent_message,
    reply_message,
    truncate,
)
from correlator.core.incidents import observe, occurrence

DATA = Path(__file__).resolve().parents[1] / "data" / "verdicts"
EVIL = "<!channel> <@U123> <http://evil|x> & co"


def load(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line and not line.startswith("#")]


def incident_for(verdict: dict[str, Any]):  # type: ignore[no-untyped-def]
    return observe(None, occurrence(verdict), 3_600_000).incident


def mrkdwn_texts(blocks: list[dict[str, Any]]) -> list[str]:
    """Every string Slack would parse as mrkdwn."""
    texts = []
    for block in blocks:
        for obj in [block.get("text"), *block.get("fields", []), *block.get("elements", [])]:
            if obj and obj.get("type") == "mrkdwn":
                texts.append(obj["text"])
    return texts


def links_and_mentions(text: str) -> list[str]:
    return re.findall(r"<[^<>]*>", text)


class TestEscaping:
    def test_escape_three_characters(self) -> None:
        """Only &, < and > change, in Slack's entity form."""
        assert escape(EVIL) == "&lt;!channel&gt; &lt;@U123&gt; &lt;http://evil|x&gt; &amp; co"

    def test_injected_operator_arrives_escaped(self) -> None:
        """A verdict whose operator, path, host and summary carry Slack control sequences renders them as text."""
        verdict = load("injection.jsonl")[0]
        message = parent_message(verdict, incident_for(verdict))
        texts = mrkdwn_texts(message.blocks)
        joined = "\n".join(texts)
        assert escape(EVIL) in joined
        assert "&lt;@U999&gt;" in joined and "restart &lt;!everyone&gt;" in joined
        assert "`hdfs:/flink/&lt;!here&gt;/chk-7`" in joined
        for text in [*texts, message.text]:
            for token in links_and_mentions(text):
                assert not token.startswith(("<!", "<@", "<#")), token
                assert "evil" not in token, token
        assert "<!" not in message.text

    def test_forged_known_issue_is_not_a_link(self) -> None:
        """Only issue keys that look like real JIRA keys become links."""
        verdict = load("injection.jsonl")[0]
        joined = "\n".join(mrkdwn_texts(parent_message(verdict, incident_for(verdict)).blocks))
        assert "&lt;http://evil|HDFS-1&gt;" in joined
        seed = load("recurring.jsonl")[0]
        joined = "\n".join(mrkdwn_texts(parent_message(seed, incident_for(seed)).blocks))
        assert "<https://issues.apache.org/jira/browse/HDFS-14476|HDFS-14476>" in joined

    def test_reply_escapes_too(self) -> None:
        """Thread replies carry the operator escaped as well."""
        verdict = load("injection.jsonl")[0]
        joined = "\n".join(mrkdwn_texts(reply_message(verdict, incident_for(verdict)).blocks))
        assert escape(EVIL) in joined and "<!channel>" not in joined

    def test_header_is_plain_text(self) -> None:
        """The header is plain_text, which Slack never parses for mentions."""
        verdict = load("injection.jsonl")[0]
        header = parent_message(verdict, incident_for(verdict)).blocks[0]
        assert header["type"] == "header" and header["text"]["type"] == "plain_text"


class TestContent:
    def test_parent_carries_what_a_human_reads_first(self) -> None:
        """Title, job, checkpoint, confidence, evidence, remediation, known issue and recurrence are all there."""
        verdict = load("recurring.jsonl")[0]
        message = parent_message(verdict, incident_for(verdict))
        header = message.blocks[0]["text"]["text"]
        assert header.startswith("A DataNode's DirectoryScanner held the dataset lock")
        joined = "\n".join(mrkdwn_texts(message.blocks))
        for needle in ("1a3bc71ac57f33961637adf340e9c28f", "*Checkpoint*\n60", "91%", "Lock held for 31245 ms",
                       "dfs.datanode.directoryscan.interval", "HDFS-14476", "first time", "37,829 ms"):
            assert needle in joined, needle
        assert message.metadata["event_payload"]["verdict_id"] == verdict["verdict_id"]


class TestLimits:
    def test_truncate_never_splits_an_entity(self) -> None:
        """A cut lands before an entity it would break, and the result fits."""
        text = "a" * 8 + "&amp;" + "b" * 10
        for limit in range(5, 20):
            cut = truncate(text, limit)
            assert len(cut) <= limit
            assert not re.search(r"&[a-z]{0,3}…", cut)

    @settings(max_examples=40, deadline=None)
    @given(st.text(min_size=0, max_size=9000), st.integers(min_value=0, max_value=200))
    def test_any_verdict_fits_slack_limits(self, noise: str, evidence_count: int) -> None:
        """Huge or hostile fields still give at most 50 blocks, a header <= 150 and sections <= 3000 chars."""
        verdict = load("recurring.jsonl")[0]
        verdict["failure"]["operator"] = noise * 2
        verdict["root_cause"]["title"] = noise + "title"
        verdict["root_cause"]["explanation"] = noise * 3
        verdict["evidence"] = [{**verdict["evidence"][0], "summary": noise}] * evidence_count
        verdict["remediation"] = [noise] * 5
        for message in (parent_message(verdict, incident_for(verdict)), reply_message(verdict, incident_for(verdict))):
            assert len(message.blocks) <= BLOCKS_MAX
            for block in message.blocks:
                if block["type"] == "header":
                    assert len(block["text"]["text"]) <= HEADER_MAX
                if block["type"] == "section" and "text" in block:
                    assert len(block["text"]["text"]) <= SECTION_MAX
                for obj in [*block.get("fields", []), *block.get("elements", [])]:
                    assert len(obj["text"]) <= FIELD_MAX
            for text in mrkdwn_texts(message.blocks):
                assert "<!" not in text.replace("<https://issues.apache.org", "")
