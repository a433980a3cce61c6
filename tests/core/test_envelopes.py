"""Envelope decoding: raw bytes, Filebeat, Fluent Bit, Vector and Kafka headers; bad envelopes get a reason."""

from __future__ import annotations

import json

import pytest

from correlator.core.envelopes import EnvelopeError, decode

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
        d = decode(json.dumps({"message": LINE, "host": "dn04", "file": "/f.log",
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
