"""Topics as code: read ``topics/*.yaml``, compare with the cluster, create what is missing and align what differs.

A second ``apply`` finds nothing to do. Differences Kafka cannot change in place (fewer partitions, another
replication factor) are reported, never forced.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
)

from correlator.config import Settings


@dataclass(frozen=True, slots=True)
class TopicSpec:
    id: str
    name: str
    partitions: int
    replication_factor: int
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Change:
    """One step of a plan; ``applicable`` is False for differences Kafka cannot change in place."""

    topic: str
    action: str  # "create" | "add_partitions" | "set_config" | "report"
    detail: str
    applicable: bool = True

    def __str__(self) -> str:
        mark = "" if self.applicable else " (not changed: Kafka cannot do this in place)"
        return f"{self.action:<15} {self.topic}: {self.detail}{mark}"


class TopicDefinitionError(ValueError):
    """A topics/*.yaml file that does not describe a topic."""


INSTALLED = Path(__file__).resolve().parents[1] / "topics"
"""The topic definitions installed with the package (``correlator topics apply`` from any directory)."""


def load_specs(directory: Path | None, settings: Settings) -> list[TopicSpec]:
    """Load every topic definition (``None``: the installed ones); a topic's name is overridden only by an
    explicitly set ``topic_<id>`` setting."""
    directory = directory or INSTALLED
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise TopicDefinitionError(f"no topic definitions (*.yaml) in {directory}")
    specs = []
    for path in files:
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
            topic_id = str(raw["id"])
            override = f"topic_{topic_id}"
            name = getattr(settings, override) if override in settings.model_fields_set else str(raw["name"])
            specs.append(
                TopicSpec(
                    id=topic_id,
                    name=name,
                    partitions=int(raw["partitions"]),
                    replication_factor=int(raw["replication_factor"]),
                    configs={str(k): str(v) for k, v in (raw.get("configs") or {}).items()},
                )
            )
        except (KeyError, TypeError, ValueError, yaml.YAMLError) as exc:
            raise TopicDefinitionError(f"{path.name}: not a topic definition ({exc})") from exc
    return specs


def plan(admin: AdminClient, specs: Iterable[TopicSpec], timeout_s: float = 10.0) -> list[Change]:
    """What ``apply`` would do; raises ``KafkaException`` when the cluster cannot be read."""
    specs = list(specs)
    metadata = admin.list_topics(timeout=timeout_s)
    changes: list[Change] = []
    existing = [s for s in specs if s.name in metadata.topics]
    for spec in specs:
        if spec.name not in metadata.topics:
            changes.append(
                Change(spec.name, "create", f"{spec.partitions} partitions, replication {spec.replication_factor}")
            )
            continue
        partitions = metadata.topics[spec.name].partitions
        have = len(partitions)
        if have < spec.partitions:
            changes.append(Change(spec.name, "add_partitions", f"{have} -> {spec.partitions}"))
        elif have > spec.partitions:
            changes.append(Change(spec.name, "report", f"has {have} partitions, definition says {spec.partitions}", False))
        replicas = len(next(iter(partitions.values())).replicas) if partitions else 0
        if replicas != spec.replication_factor:
            changes.append(
                Change(spec.name, "report", f"replication {replicas}, definition says {spec.replication_factor}", False)
            )
    if existing:
        resources = [ConfigResource(ConfigResource.Type.TOPIC, s.name) for s in existing]
        for spec, future in zip(existing, admin.describe_configs(resources).values(), strict=True):
            current = future.result(timeout=timeout_s)
            for key, wanted in sorted(spec.configs.items()):
                have_value = current[key].value if key in current else None
                if have_value != wanted:
                    changes.append(Change(spec.name, "set_config", f"{key}: {have_value} -> {wanted}"))
    return changes


def apply(admin: AdminClient, specs: Iterable[TopicSpec], changes: list[Change], timeout_s: float = 30.0) -> None:
    by_name = {s.name: s for s in specs}
    creates = [
        NewTopic(s.name, s.partitions, s.replication_factor, config=dict(s.configs))
        for s in (by_name[c.topic] for c in changes if c.action == "create")
    ]
    if creates:
        _wait(admin.create_topics(creates, operation_timeout=timeout_s), timeout_s)
    grows = [NewPartitions(c.topic, by_name[c.topic].partitions) for c in changes if c.action == "add_partitions"]
    if grows:
        _wait(admin.create_partitions(grows, operation_timeout=timeout_s), timeout_s)
    config_topics = sorted({c.topic for c in changes if c.action == "set_config"})
    if config_topics:
        resources = []
        for name in config_topics:
            entries = [
                ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in by_name[name].configs.items()
            ]
            resources.append(ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=entries))
        _wait(admin.incremental_alter_configs(resources), timeout_s)
    _until_visible(admin, [by_name[name] for name in {c.topic for c in changes if c.applicable}], timeout_s)


def _until_visible(admin: AdminClient, specs: list[TopicSpec], timeout_s: float) -> None:
    """Return once the brokers' metadata shows what was applied: a broker answers from a cache that lags the
    controller for a moment, and a caller (or a second ``apply``) must not see the old state and act on it again."""
    deadline = time.monotonic() + timeout_s
    while specs and time.monotonic() < deadline:
        if not [c for c in plan(admin, specs) if c.applicable]:
            return
        time.sleep(0.2)


def _wait(futures: dict[Any, Any], timeout_s: float) -> None:
    for name, future in futures.items():
        try:
            future.result(timeout=timeout_s)
        except KafkaException as exc:
            raise RuntimeError(f"{name}: {exc.args[0].str() if exc.args else exc}") from exc


def admin_client(settings: Settings, errors: list[str] | None = None) -> AdminClient:
    """An admin client whose connection errors (refused, authentication failed) are collected in ``errors``
    instead of being printed by librdkafka, so a command can fail with the one reason that matters."""

    def collect(error: Any) -> None:
        if errors is not None:
            errors.append(error.str())

    return AdminClient(settings.kafka_client(**{"socket.timeout.ms": 10000, "log_level": 0, "error_cb": collect}))
