"""The wording row: which records a row takes, and a table's dispatch, which must pick what asking its rows in order
picks, whatever the record."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.core.events import SlowIo
from correlator.core.ingest.parse import flink, hdfs, hdfs_client, kafka
from correlator.core.ingest.parse.wording import Dispatch, Wording, triggers

ROW: Wording[None] = Wording("Slow flushOrSync", None, emits=(SlowIo,))


def test_a_row_takes_its_phrase_where_it_must_be() -> None:
    assert ROW.takes("Slow flushOrSync took 12ms") and not ROW.takes("x Slow flushOrSync took 12ms")
    inside = Wording("expired before completing", None, "message", prefix="Checkpoint ")
    assert inside.takes("Checkpoint 6 of job j expired before completing.")
    assert not inside.takes("Job j: expired before completing")  # the message must start with the prefix
    chain = Wording("Could not perform checkpoint ", None, "record")
    record = "Task failed.\njava.lang.Exception: Could not perform checkpoint 61 for operator Map."
    assert chain.takes("Task failed.", record) and not chain.takes("Task failed.")


def test_a_row_asks_the_logger_and_the_words_it_needs() -> None:
    logged = Wording("Updating size of block", None, "message", loggers=frozenset({"FsDatasetImpl"}))
    assert logged.takes("Updating size of block 1", logger="FsDatasetImpl")
    assert not logged.takes("Updating size of block 1", logger="DataNode")
    assert not logged.takes("Updating size of block 1")  # no logger known: not this row's
    needing = Wording("(HDFS_DELEGATION_TOKEN token ", None, "record", needs=("is expired", "can't be found"))
    assert needing.takes("token (HDFS_DELEGATION_TOKEN token 7 for f) is expired")
    assert not needing.takes("token (HDFS_DELEGATION_TOKEN token 7 for f) is renewed")


def test_triggers_are_the_phrases_once_in_order_without_block_writes() -> None:
    rows = (ROW, Wording("Receiving ", None, write=True), Wording("b", None),
            Wording("Slow flushOrSync", None, "message"))
    assert triggers(rows) == ("Slow flushOrSync", "b")


TABLES: dict[str, tuple[Wording[Any], ...]] = {
    "hdfs": hdfs.RULES, "flink": flink.RULES, "hdfs_client": hdfs_client.RULES, "kafka_broker": kafka.BROKER_RULES,
    "kafka_client": kafka.CLIENT_RULES,
}
DISPATCHES: dict[str, Dispatch[Any]] = {
    "hdfs": hdfs.DISPATCH, "flink": flink.DISPATCH, "hdfs_client": hdfs_client.DISPATCH,
    "kafka_broker": kafka.BROKER_DISPATCH, "kafka_client": kafka.CLIENT_DISPATCH,
}


@pytest.mark.parametrize("name", TABLES)
def test_each_parsers_dispatch_is_its_table(name: str) -> None:
    assert DISPATCHES[name].rows == TABLES[name]


def _linear(rows: tuple[Wording[Any], ...], message: str, text: str | None, logger: str) -> Wording[Any] | None:
    return next((row for row in rows if row.takes(message, text, logger)), None)


def _record(rows: tuple[Wording[Any], ...]) -> st.SearchStrategy[tuple[str, str | None, str]]:
    """Records made of these rows' words (their phrases, prefixes and needed words, parts of phrases), often opening
    with a phrase: the message, the other lines (or none), the logger."""
    pieces = sorted({piece for row in rows for piece in (row.phrase, row.prefix, row.phrase[:4], row.phrase[:12],
                                                         row.phrase[1:], *row.needs)} | {" ", "x", "Job 1 ", "\n"})
    texts = st.lists(st.one_of(st.sampled_from(pieces), st.text(max_size=6)), max_size=4).map("".join)
    openings = st.sampled_from(sorted({row.prefix or row.phrase for row in rows}))
    messages = st.one_of(texts, st.tuples(openings, texts).map("".join))
    loggers = st.sampled_from(sorted({logger for row in rows for logger in row.loggers} | {"", "DataNode"}))
    return st.tuples(messages, st.one_of(st.none(), texts), loggers)


RECORDS = {name: _record(rows) for name, rows in TABLES.items()}
records = st.sampled_from(sorted(TABLES)).flatmap(lambda name: st.tuples(st.just(name), RECORDS[name]))


@settings(max_examples=200, deadline=None)
@given(record=records)
def test_a_dispatch_picks_the_first_row_that_takes_a_record(record: tuple[str, tuple[str, str | None, str]]) -> None:
    name, (message, rest, logger) = record
    text = None if rest is None else f"{message}\n{rest}"
    assert DISPATCHES[name].first(message, text, logger) is _linear(TABLES[name], message, text, logger)


def test_a_dispatch_of_rows_opening_with_short_or_no_phrases() -> None:
    rows = (Wording("ab", None), Wording("", None), Wording("abc", None, "message"))
    dispatch = Dispatch(rows)
    for message in ("", "a", "ab", "abc", "xabc", "b"):
        assert dispatch.first(message) is _linear(rows, message, None, "")
    assert Dispatch(()).first("anything") is None
