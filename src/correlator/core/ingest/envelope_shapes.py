"""The JSON record shapes shippers write, each read into the same :class:`Shipped` facts.

One reader per shape, tried in a fixed order (the first whose text field is present wins):

| shape | text | host | file | cluster / role | time |
|---|---|---|---|---|---|
| Filebeat | ``message`` | ``host.name`` | ``log.file.path`` | ``fields.*`` | ``@timestamp`` |
| Vector (legacy namespace) | ``message`` | ``host`` (a string) | ``file`` | top-level | ``timestamp`` |
| a JSON template | ``message`` | ``host`` | ``file`` | top-level | ``timestamp`` |
| Fluent Bit | ``log`` | ``host`` / ``hostname`` | ``file`` / ``path`` | top-level | ``@timestamp`` / ``date`` |
| rsyslog ``%jsonmesg%`` | ``msg`` | ``hostname`` | ``$!.metadata.filename`` | ``$!.cluster`` | ``timereported`` |
| OpenTelemetry | ``body`` | ``resource.attributes["host.name"]`` | ``attributes["log.file.path"]`` | ``k8s.cluster.name`` | ``timeUnixNano`` |

Hand-written templates (rsyslog ``list`` templates, Fluent Bit ``record_modifier``) fall under the first shape
whose text field they use; ``host``/``hostname``/``file``/``path``/``cluster``/``role`` at the top level are read
for every shape.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, tzinfo
from typing import Any

from correlator.core.ingest.kubernetes import first_str, path_of, pod_of_metadata
from correlator.core.ingest.layouts import LayoutRecord, read_layout, render, time_ms
from correlator.core.ingest.limits import EPOCH_MS_MAX, EPOCH_MS_MIN, OutOfRange


@dataclass(frozen=True, slots=True)
class Shipped:
    """What one JSON record says: its text and whatever it names of its origin (None where it names nothing)."""

    shape: str
    text: str
    host: str | None = None
    file: str | None = None
    cluster: str | None = None
    role: str | None = None
    shipper_ts_ms: int | None = None


class ShapeError(ValueError):
    """A JSON object none of the shapes can read a text from."""


def read_object(data: dict[str, Any], zone: tzinfo = UTC) -> Shipped:
    """The first shape that reads ``data``; a log layout record (the daemon's own JSON) before any shipper's."""
    record = read_layout(data)
    if record is not None:
        return _layout(data, record, zone)
    for reader in _READERS:
        shipped = reader(data)
        if shipped is not None:
            return shipped
    if isinstance(data.get("resourceLogs"), list):
        return _otlp_batch(data["resourceLogs"])
    raise ShapeError("JSON envelope has no string 'message', 'log', 'msg' or 'body' field")


def _layout(data: dict[str, Any], record: LayoutRecord, zone: tzinfo) -> Shipped:
    """A daemon's JSON layout record, straight or decoded by a shipper that kept its own fields beside it."""
    raw_fields = data.get("fields")
    common = _common(data, raw_fields if isinstance(raw_fields, dict) else {})
    return Shipped(
        shape=f"layout-{record.layout}",
        text=render(record, zone),
        host=first_str(common["pod"], path_of(data, "host", "name"), data.get("host.name"), common["host"]),
        file=first_str(path_of(data, "log", "file", "path"), data.get("log.file.path"), common["file"]),
        cluster=common["cluster"],
        role=common["role"] or common["pod_role"],
    )


def _common(data: dict[str, Any], fields: dict[str, Any]) -> dict[str, str | None]:
    """Top-level and ``fields.*`` names every shape may carry (templates, ``fields_under_root``, record modifiers);
    ``pod`` and ``pod_role`` where the shipper added Kubernetes metadata (the pod is the host there)."""
    pod = pod_of_metadata(data)
    return {
        "pod": pod.pod if pod else None,
        "pod_role": pod.role if pod else None,
        "host": first_str(fields.get("host"), data.get("host"), data.get("hostname")),
        "file": first_str(fields.get("file"), data.get("file"), data.get("path"), data.get("filepath")),
        "cluster": first_str(fields.get("cluster"), data.get("cluster")),
        "role": first_str(fields.get("role"), data.get("role")),
    }


def _filebeat_or_vector(data: dict[str, Any]) -> Shipped | None:
    message = data.get("message")
    if not isinstance(message, str):
        return None
    raw_fields = data.get("fields")
    fields: dict[str, Any] = raw_fields if isinstance(raw_fields, dict) else {}
    common = _common(data, fields)
    if "source_type" in data:
        kind = "vector"
    elif isinstance(data.get("host"), dict) or "@metadata" in data:
        kind = "filebeat"
    else:
        kind = "json"  # a hand-written template (rsyslog's list templates, Fluent Bit's record modifiers)
    return Shipped(
        shape=kind,
        text=message,
        host=first_str(common["pod"], path_of(data, "host", "name"), common["host"]),
        file=first_str(path_of(data, "log", "file", "path"), common["file"]),
        cluster=common["cluster"],
        role=common["role"] or common["pod_role"],
        shipper_ts_ms=_first_time(data, "@timestamp", "timestamp", "time", "date"),
    )


def _fluentbit(data: dict[str, Any]) -> Shipped | None:
    message = data.get("log")
    if not isinstance(message, str):
        return None
    common = _common(data, {})
    return Shipped("fluentbit", message, first_str(common["pod"], common["host"]), common["file"], common["cluster"],
                   common["role"] or common["pod_role"],
                   _first_time(data, "@timestamp", "date", "time", "timestamp"))


def _rsyslog(data: dict[str, Any]) -> Shipped | None:
    """``%jsonmesg%``: imfile's ``addMetadata`` puts the file under ``$!metadata``; set variables sit under ``$!``."""
    message = data.get("msg")
    if not isinstance(message, str):
        return None
    raw_local = data.get("$!")
    local: dict[str, Any] = raw_local if isinstance(raw_local, dict) else {}
    common = _common(data, local)
    return Shipped(
        shape="rsyslog",
        text=message.replace("#012", "\n"),
        host=common["host"],
        file=first_str(path_of(local, "metadata", "filename"), data.get("$!metadata!filename"), common["file"]),
        cluster=common["cluster"],
        role=common["role"],
        shipper_ts_ms=_first_time(data, "timereported", "timegenerated", "timestamp"),
    )


def _otel(data: dict[str, Any]) -> Shipped | None:
    """One OpenTelemetry log record, flat (``resource`` beside it) as collectors' JSON exporters write it."""
    body = _any_value(data.get("body"))
    if not isinstance(body, str):
        return None
    resource = _attributes(path_of(data, "resource", "attributes") or data.get("resources"))
    return _otel_record(body, resource, data)


def _otel_record(body: str, resource: dict[str, Any], record: dict[str, Any]) -> Shipped:
    attributes = _attributes(record.get("attributes"))
    both = {**resource, **attributes}
    pod = pod_of_metadata(both)
    nanos = first_str(record.get("timeUnixNano"), record.get("time_unix_nano"), record.get("observedTimeUnixNano"))
    if nanos and nanos.isascii() and nanos.isdigit() and len(nanos) <= 20:
        time_ms = _shipper_time(int(nanos) // 1_000_000)
    else:
        time_ms = _first_time(record, "timestamp", "time")
    return Shipped(
        shape="otel",
        text=body,
        host=first_str(pod.pod if pod else None, both.get("host.name"), both.get("host")),
        file=first_str(both.get("log.file.path"), both.get("log.file.name")),
        cluster=first_str(both.get("cluster"), both.get("k8s.cluster.name")),
        role=first_str(both.get("role"), both.get("service.name") if both.get("service.name") in _ROLES else None,
                        pod.role if pod else None),
        shipper_ts_ms=time_ms,
    )


_ROLES = frozenset({"jobmanager", "taskmanager", "datanode", "namenode"})


def _otlp_batch(resource_logs: list[Any]) -> Shipped:
    """OTLP/JSON (``resourceLogs``): one Kafka record may batch many log records; they become one text of many lines
    when they share their host and file, which is what one file's shipper sends."""
    records: list[Shipped] = []
    for entry in resource_logs:
        resource = _attributes(path_of(entry, "resource", "attributes"))
        for scope in _list(entry, "scopeLogs") + _list(entry, "instrumentationLibraryLogs"):
            for record in _list(scope, "logRecords"):
                body = _any_value(record.get("body")) if isinstance(record, dict) else None
                if isinstance(body, str):
                    records.append(_otel_record(body, resource, record))
    if not records:
        raise ShapeError("OTLP batch holds no log record with a string body")
    first = records[0]
    if any((r.host, r.file, r.cluster) != (first.host, first.file, first.cluster) for r in records):
        raise ShapeError("OTLP batch mixes log records of several hosts or files")
    return Shipped("otel", "\n".join(r.text for r in records), first.host, first.file, first.cluster, first.role,
                   first.shipper_ts_ms)


_READERS: tuple[Callable[[dict[str, Any]], Shipped | None], ...] = (_filebeat_or_vector, _fluentbit, _rsyslog, _otel)


def _list(node: Any, key: str) -> list[Any]:
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, list) else []


def _any_value(value: Any) -> Any:
    """OTLP's ``AnyValue`` (``{"stringValue": …}``) or a plain value."""
    if isinstance(value, dict) and len(value) == 1:
        (only,) = value.values()
        return only
    return value


def _attributes(value: Any) -> dict[str, Any]:
    """Attributes as a plain mapping or as OTLP's list of ``{key, value: AnyValue}``."""
    if isinstance(value, dict):
        return {str(k): _any_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return {item["key"]: _any_value(item.get("value")) for item in value
                if isinstance(item, dict) and isinstance(item.get("key"), str)}
    return {}


def _first_time(data: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        if key in data:
            try:
                return _shipper_time(time_ms(data[key]))
            except OutOfRange as exc:
                raise OutOfRange(f"{key}: {exc}") from None
    return None


def _shipper_time(ms: int | None) -> int | None:
    """The one place every shape's shipper time passes through: a stamp beyond 1970..2200 is corrupt input."""
    if ms is not None and not EPOCH_MS_MIN <= ms <= EPOCH_MS_MAX:
        raise OutOfRange(f"timestamp {ms} ms outside 1970..2200")
    return ms
