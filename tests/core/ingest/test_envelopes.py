"""Envelope decoding: every shape shippers write (fixture records with their source named), headers and keys;
bad envelopes get a reason; any shape round-trips its fields, and nothing but EnvelopeError ever escapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from correlator.core.ingest.envelopes import EnvelopeError, decode

RECORDS = json.loads((Path(__file__).parents[2] / "data" / "envelopes" / "records.json").read_text())["cases"]

LINE = "2020-01-02 17:19:20,911 INFO org.apache.hadoop.hdfs.server.datanode.DirectoryScanner: BlockPool BP-1 Total blocks: 1"


class TestDecode:
    def test_raw_line(self) -> None:
        """A raw line is its own text; Kafka headers name cluster, host and role."""
        d = decode(LINE.encode(), {"cluster": b"prod", "host": b"dn02", "role": b"datanode"})
        assert (d.text, d.cluster, d.host, d.role, d.envelope) == (LINE, "prod", "dn02", "datanode", None)

    def test_filebeat(self) -> None:
        """Filebeat: message, host.name, log.file.path, @timestamp and fields.*."""
        value = {
            "@timestamp": "2020-01-02T09:19:20.911Z",
            "message": LINE,
            "host": {"name": "dn02.example.com"},
            "log": {"file": {"path": "/var/log/hadoop/hadoop-hdfs-datanode-dn02.log"}, "offset": 10},
            "fields": {"cluster": "prod", "role": "datanode"},
        }
        d = decode(json.dumps(value).encode())
        assert d.text == LINE
        assert (d.host, d.file, d.cluster, d.role) == (
            "dn02.example.com", "/var/log/hadoop/hadoop-hdfs-datanode-dn02.log", "prod", "datanode")
        assert d.shipper_ts_ms == 1577956760911
        assert d.envelope == "filebeat"

    def test_fluent_bit(self) -> None:
        """Fluent Bit: the line is in ``log``; host and file keys as configured."""
        d = decode(json.dumps({"log": LINE, "hostname": "dn03", "file": "/x/y.log", "date": 1577956760.911}).encode())
        assert (d.text, d.host, d.file, d.envelope) == (LINE, "dn03", "/x/y.log", "fluentbit")
        assert d.shipper_ts_ms == 1577956760911

    def test_vector(self) -> None:
        """Vector: message, host (string), file, timestamp with microseconds."""
        d = decode(json.dumps({"message": LINE, "host": "dn04", "file": "/f.log", "source_type": "file",
                               "timestamp": "2020-01-02T09:19:20.911123Z"}).encode())
        assert (d.host, d.file, d.shipper_ts_ms, d.envelope) == ("dn04", "/f.log", 1577956760911, "vector")

    def test_headers_override_the_envelope(self) -> None:
        """Kafka headers are the transport's word and win over envelope fields."""
        d = decode(json.dumps({"message": LINE, "host": "a"}).encode(), {"host": b"b"})
        assert d.host == "b"

    def test_invalid_utf8_is_replaced(self) -> None:
        """Invalid UTF-8 never fails the decode: bytes are replaced and the record is flagged."""
        d = decode(LINE.encode() + b" \xff\xfe caf\xe9")
        assert d.invalid_utf8 and d.text.startswith(LINE)

    @pytest.mark.parametrize(
        ("value", "reason"),
        [
            (b'{"message": "truncated', "bad_json"),
            (b"{\"message\": \"x\"} trailing", "bad_json"),
            (b"{}", "bad_envelope"),
            (b'{"message": 42}', "bad_envelope"),
            (b"\x00\x01\x02binary\x00", "binary"),
            (bytes(range(1, 32)) * 4, "binary"),
        ],
    )
    def test_unusable_values(self, value: bytes, reason: str) -> None:
        """Truncated or non-object JSON and binary garbage raise a typed error with a stable reason."""
        with pytest.raises(EnvelopeError) as info:
            decode(value)
        assert info.value.reason == reason

    def test_json_array_is_a_raw_line(self) -> None:
        """Only objects are envelopes; a line starting with ``[`` (GC decorations) is raw text."""
        assert decode(b"[1, 2, 3]").text == "[1, 2, 3]"


@pytest.mark.parametrize("case", RECORDS, ids=[c["name"] for c in RECORDS])
def test_shipper_records(case: dict[str, Any]) -> None:
    """Each shipper's record, as it reaches Kafka, gives the right text, host, file, cluster and time."""
    headers = {k: v.encode() for k, v in case["headers"].items()}
    key = case["key"].encode() if case["key"] else None
    d = decode(case["value"].encode(), headers, key)
    for field, want in case["expect"].items():
        assert getattr(d, field) == want, (field, getattr(d, field), want)


class TestKeysAndHeaders:
    def test_header_file_and_host_beat_the_key(self) -> None:
        d = decode(LINE.encode(), {"host": b"a", "file": b"/x.log"}, b"dn9:/y.log")
        assert (d.host, d.file) == ("a", "/x.log")

    def test_envelope_beats_the_key(self) -> None:
        d = decode(json.dumps({"message": LINE, "host": "a"}).encode(), None, b"dn9:/y.log")
        assert (d.host, d.file) == ("a", "/y.log")

    def test_no_key_no_header_names_nothing(self) -> None:
        d = decode(LINE.encode())
        assert (d.host, d.file, d.cluster) == (None, None, None)

    def test_a_quoted_raw_line_that_is_no_json_string_stays_raw(self) -> None:
        assert decode(b'"GET / HTTP/1.1" 200').text == '"GET / HTTP/1.1" 200'

    def test_lone_surrogates_in_json_are_replaced(self) -> None:
        d = decode(b'{"message": "a\\ud800b"}')
        assert d.invalid_utf8 and d.text.encode("utf-8")

    def test_otlp_batch_of_two_files_is_refused(self) -> None:
        def rec(path: str) -> dict[str, Any]:
            return {"body": {"stringValue": LINE}, "attributes": [{"key": "log.file.path", "value": {"stringValue": path}}]}
        batch = {"resourceLogs": [{"scopeLogs": [{"logRecords": [rec("/a.log"), rec("/b.log")]}]}]}
        with pytest.raises(EnvelopeError) as info:
            decode(json.dumps(batch).encode())
        assert info.value.reason == "bad_envelope"


_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=80).filter(str.strip)
_NAME = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9](\.[a-z]([a-z0-9-]{0,8}[a-z0-9])?){0,2}", fullmatch=True)
_PATH = st.from_regex(r"/[a-z0-9_/.-]{1,40}\.log", fullmatch=True)
_MS = st.integers(min_value=946684800000, max_value=4102444799000)


def _iso(ms: int) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _encode(shape: str, text: str, host: str, file: str, cluster: str, ms: int) -> tuple[bytes, bytes | None]:
    """One record of the shape, as that shipper writes it."""
    records: dict[str, tuple[Any, bytes | None]] = {
        "filebeat": ({"@timestamp": _iso(ms), "message": text, "host": {"name": host}, "log": {"file": {"path": file}},
                      "fields": {"cluster": cluster}}, None),
        "vector": ({"message": text, "host": host, "file": file, "cluster": cluster, "timestamp": _iso(ms),
                    "source_type": "file"}, None),
        "fluentbit": ({"log": text, "host": host, "file": file, "cluster": cluster, "@timestamp": ms / 1000}, None),
        "rsyslog": ({"msg": text, "hostname": host, "timereported": _iso(ms),
                     "$!": {"metadata": {"filename": file}, "cluster": cluster}}, None),
        "otel": ({"body": {"stringValue": text}, "timeUnixNano": str(ms * 1_000_000),
                  "attributes": {"log.file.path": file},
                  "resource": {"attributes": [{"key": "host.name", "value": {"stringValue": host}},
                                              {"key": "cluster", "value": {"stringValue": cluster}}]}}, None),
        "json_string": (text, f"{host}:{file}".encode()),
    }
    record, key = records[shape]
    return json.dumps(record).encode(), key


@given(st.sampled_from(["filebeat", "vector", "fluentbit", "rsyslog", "otel", "json_string"]), _TEXT, _NAME, _PATH,
       _NAME, _MS)
def test_every_shape_round_trips(shape: str, text: str, host: str, file: str, cluster: str, ms: int) -> None:
    """Whatever the shape, the decoded text is the message and host, file, cluster and time are what was sent."""
    text = text.strip()
    value, key = _encode(shape, text, host, file, cluster, ms)
    d = decode(value, None, key)
    expected_text = text.replace("#012", "\n") if shape == "rsyslog" else text
    assert (d.text, d.host, d.file, d.envelope) == (expected_text, host, file, shape)
    if shape != "json_string":
        assert (d.cluster, d.shipper_ts_ms) == (cluster, ms)


@given(st.binary(max_size=300), st.dictionaries(st.sampled_from(["host", "file", "cluster", "role", "x"]),
                                                st.binary(max_size=20), max_size=3), st.none() | st.binary(max_size=40))
def test_nothing_but_envelope_error_escapes(value: bytes, headers: dict[str, bytes], key: bytes | None) -> None:
    try:
        decode(value, headers, key)
    except EnvelopeError as exc:
        assert exc.reason in {"binary", "bad_json", "bad_envelope"}


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.just("\ud800") | st.just(10**400) | st.dictionaries(
        st.sampled_from(["message", "log", "msg", "body", "host", "hostname", "file", "path", "fields", "cluster",
                         "@timestamp", "timestamp", "date", "timereported", "timeUnixNano", "$!", "metadata", "name",
                         "resource", "attributes", "resourceLogs", "scopeLogs", "logRecords", "stringValue", "key",
                         "value", "log.file.path", "host.name"]), inner, max_size=5),
    max_leaves=20,
)


@given(st.dictionaries(st.sampled_from(["message", "log", "msg", "body", "resourceLogs", "host", "$!", "fields",
                                        "@timestamp", "date", "resource", "attributes"]), _JSONISH, max_size=6))
def test_odd_json_objects_decode_or_raise_envelope_error(data: dict[str, Any]) -> None:
    """Envelope-like objects with any types in any field never raise anything but EnvelopeError."""
    try:
        d = decode(json.dumps(data).encode())
    except EnvelopeError as exc:
        assert exc.reason in ("bad_envelope", "bad_timestamp")
    else:
        for value in (d.text, d.host, d.file, d.role, d.cluster):
            assert value is None or isinstance(value.encode("utf-8"), bytes)  # no encoder downstream refuses it
