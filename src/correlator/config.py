"""One frozen settings object, read from ``CORRELATOR_*`` environment variables and CLI options.

Built once at the entry point and passed down; the core never sees it (it receives plain, frozen engine configs).
Secrets are ``SecretStr`` so that printing, logging or ``repr`` of the settings never reveals them.

The environment is read here: every field is a scalar, so a variable needs no more than its prefix taken off, and
no settings library is imported at each command's start.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationInfo, field_validator

if TYPE_CHECKING:  # imported where used: `correlator parse` need not load the engine to read its settings
    from correlator.core.correlate.engine import EngineConfig
    from correlator.core.ingest.ingest import IngestConfig

ENV_PREFIX = "CORRELATOR_"

UNIT_MS = {"ms": 1, "s": 1_000, "m": 60_000, "min": 60_000, "h": 3_600_000}
"""The units a duration may be written in, in milliseconds."""
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(ms|min|s|m|h)")
_NUMBER = re.compile(r"[-+]?(\d+(?:\.\d*)?|\.\d+)")
_NAMES = {"ms": "milliseconds", "s": "seconds", "min": "minutes"}


def parse_duration(text: str, unit: str) -> float:
    """A duration in ``unit`` (ms, s or min): a bare number is in ``unit`` already (``120``); a number may carry its
    own unit instead (``500ms``, ``90s``, ``15m``, ``2h``, ``1h30m``). ``ValueError`` for anything else."""
    text = text.strip()
    if _NUMBER.fullmatch(text):
        return float(text)
    parts = _DURATION.findall(text)
    if not text or _DURATION.sub("", text).strip():
        raise ValueError(f"{text!r} is not a duration: give e.g. 500ms, 90s, 15m, 2h, or a number of {_NAMES[unit]}")
    return sum(float(n) * UNIT_MS[u] for n, u in parts) / UNIT_MS[unit]


def format_duration(value: float, unit: str) -> str:
    """``value`` (in ``unit``) in the largest unit that shows it whole: 120 minutes is ``2h``, 0.5 s ``500ms``."""
    ms = value * UNIT_MS[unit]
    for name in ("h", "m", "s"):
        if ms >= UNIT_MS[name] and ms % UNIT_MS[name] == 0:
            return f"{ms // UNIT_MS[name]:.0f}{name}"
    return f"{ms:g}ms"


def environment(env: Mapping[str, str], env_file: str | Path | None = None) -> dict[str, str]:
    """The settings named in ``env`` (and, below them, in ``env_file``: ``NAME=value`` lines, ``#`` lines skipped, a
    leading ``export`` and surrounding quotes dropped): prefix off, any case, empty values left out."""
    found: dict[str, str] = {}
    if env_file is not None:
        for line in Path(env_file).read_text(encoding="utf-8").splitlines():
            name, sep, value = line.strip().removeprefix("export ").partition("=")
            if sep and not name.startswith("#"):
                found[name.strip()] = value.strip().strip("'\"")
    found.update(env)
    return {name[len(ENV_PREFIX):].lower(): value for name, value in found.items()
            if name.upper().startswith(ENV_PREFIX) and value != ""}


DURATIONS: dict[str, str] = {
    "slack_resolve_after_min": "min", "slack_retry_backoff_s": "s", "alert_hold_min": "min",
    "alert_resolve_after_min": "min", "alert_max_age_min": "min", "lookahead_ms": "ms", "out_of_orderness_ms": "ms",
    "idle_timeout_ms": "ms", "clock_skew_ms": "ms", "multiline_idle_ms": "ms", "slow_write_ms": "ms",
    "raw_fetch_queue_backoff_ms": "ms",
}
"""The settings that are durations, each in the unit its name ends in; each also takes a unit of its own (``2h``)."""


class Settings(BaseModel):
    """Given values first, then the environment, then an env file (``_env_file``, for checking one), then the
    defaults."""

    model_config = ConfigDict(frozen=True, extra="ignore", validate_default=True)

    def __init__(self, _env_file: str | Path | None = None, **given: Any) -> None:
        super().__init__(**{**environment(os.environ, _env_file), **given})

    # --- Kafka -------------------------------------------------------------------------------------------------
    bootstrap_servers: str = Field("127.0.0.1:9092", description="Kafka bootstrap servers, host:port[,host:port]")
    security_protocol: str = Field("PLAINTEXT", description="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
    sasl_mechanism: str | None = Field(None, description="PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
    sasl_username: str | None = Field(None, description="SASL user name")
    sasl_password: SecretStr | None = Field(None, description="SASL password (never printed)")
    sasl_password_file: Path | None = Field(None, description="file holding the SASL password (keeps it out of argv)")
    ssl_cafile: Path | None = Field(None, description="CA bundle (PEM) to verify the brokers")
    ssl_certfile: Path | None = Field(None, description="client certificate (PEM) for mutual TLS")
    ssl_keyfile: Path | None = Field(None, description="client private key (PEM) for mutual TLS")
    topics_dir: Path | None = Field(None, description="directory of topic definitions (*.yaml); unset: the ones "
                                    "installed with correlator")
    topic_logs_flink: str = Field("logs.flink", description="input topic of Flink log lines")
    topic_logs_hdfs: str = Field("logs.hdfs", description="input topic of Hadoop log lines")
    topic_logs_s3: str = Field("logs.s3", description="input topic of object-store access log lines (S3 server access "
                               "logs)")
    topic_events: str = Field("correlator.events", description="topic of parsed events, keyed by cluster")
    topic_verdicts: str = Field("correlator.verdicts", description="topic of verdicts, keyed by cluster + job")
    topic_risks: str = Field("correlator.risks", description="topic of early warnings (risk records), keyed by cluster + job")
    topic_deadletter: str = Field("correlator.deadletter", description="topic of records that could not be parsed")

    # --- Redis / Slack -----------------------------------------------------------------------------------------
    redis_url: SecretStr = Field(
        SecretStr("redis://127.0.0.1:6379/0"), description="Redis URL of the incident store (may hold a password)"
    )
    slack_api_url: str = Field("https://slack.com/api/", description="Slack Web API base URL")
    slack_token: SecretStr | None = Field(None, description="Slack bot token (never printed)")
    slack_token_file: Path | None = Field(None, description="file holding the Slack bot token")
    slack_channel: str | None = Field(None, description="Slack channel id or name to post incidents in")
    slack_group: str = Field("correlator-slack", description="Kafka consumer group of the Slack bot (replicas share it)")
    slack_namespace: str = Field("correlator", description="prefix of the Slack bot's Redis keys")
    slack_resolve_after_min: float = Field(120.0, gt=0, description="quiet minutes after which an incident is resolved")
    slack_retry_backoff_s: float = Field(
        0.5, gt=0, description="first wait when Redis or Slack is unavailable (doubles up to 30 s)"
    )
    slack_timelines: bool = Field(True, description="attach each verdict's timeline PNG to its thread (files:write)")
    report_base_url: str | None = Field(
        None, description="public URL of the worker's web server; Slack then links each verdict's page under it"
    )
    slack_app_token: SecretStr | None = Field(
        None, description="Slack app-level token (xapp-…, connections:write) for Socket Mode: the verdict buttons' "
        "clicks reach the bot without a public URL (never printed)")
    topic_feedback: str = Field("correlator.feedback", description="topic of verdict feedback (clicks), keyed by verdict")

    # --- Alertmanager ------------------------------------------------------------------------------------------
    alertmanager_url: str | None = Field(
        None, description="Alertmanager base URL (e.g. http://alertmanager:9093) that `correlator alerts` posts to")
    alerts_group: str = Field("correlator-alerts", description="Kafka consumer group of `correlator alerts`")
    alert_hold_min: float = Field(60.0, gt=0, description="minutes an Alertmanager alert stays firing after its "
                                  "verdict is delivered, unless its incident resolves sooner")
    alert_resolve_after_min: float = Field(120.0, gt=0, description="quiet minutes after which an incident is resolved "
                                         "in every alert sink")
    alerts_namespace: str = Field("correlator", description="prefix of `correlator alerts`' Redis keys")
    alert_codes: str = Field("", description="root-cause codes that alert, comma-separated, or `all` (default: every "
                             "code but UNEXPLAINED and INSUFFICIENT_DATA, which ask for logs, not action)")
    alert_severity: str = Field("", description="severity overrides, e.g. `HDFS_SLOW_DISK=critical,NAMENODE_SLOW=info` "
                                "(default: the cause registry's: critical for HDFS refusing writes, warning for "
                                "stalls and Flink causes, info for no cause)")
    alert_max_age_min: float = Field(60.0, gt=0, description="verdicts about failures older than this many minutes "
                                     "are not sent (a file of old verdicts, a feed far behind)")
    webhook_url: str | None = Field(None, description="URL that receives each incident's trigger and resolve as JSON")
    webhook_secret: SecretStr | None = Field(
        None, description="key of the webhook's HMAC-SHA256 signature header (never printed)")
    pagerduty_url: str = Field("https://events.pagerduty.com", description="PagerDuty Events API v2 base URL")
    pagerduty_routing_key: SecretStr | None = Field(
        None, description="PagerDuty integration (routing) key; set, incidents page PagerDuty (never printed)")
    opsgenie_url: str = Field("https://api.opsgenie.com", description="Opsgenie Alert API base URL (EU: api.eu.opsgenie.com)")
    opsgenie_api_key: SecretStr | None = Field(
        None, description="Opsgenie API integration key; set, incidents open Opsgenie alerts (never printed)")

    # --- Interpretation ----------------------------------------------------------------------------------------
    tz: str = Field("UTC", description="time zone of log timestamps that carry none")
    cluster: str = Field("default", description="cluster name for inputs that carry none")
    layout: str | None = Field(
        None, description="log4j pattern of logs whose lines do not start with their date, e.g. "
        "'%-5p [%t] %d{dd MMM yyyy HH:mm:ss,SSS} %c - %m%n' (lines it does not match are read as usual)")

    # --- Event time (defaults suit real clusters; tests shorten the processing-time ones) ----------------------
    lookahead_ms: int = Field(180_000, description="event time to wait after a failure for evidence logged late")
    out_of_orderness_ms: int = Field(5_000, description="allowed disorder of one source's events")
    idle_timeout_ms: int = Field(120_000, description="processing time after which a silent source stops holding back")
    clock_skew_ms: int = Field(2_000, description="tolerated clock difference between hosts")
    multiline_idle_ms: int = Field(2_000, description="processing time after which a half-received record is closed")
    slow_write_ms: int = Field(3_000, ge=1, description="a block write that ends within this is routine: counted, not an event (small writes of a second or more are common on healthy DataNodes; the DataNode logs its own slow steps)")
    write_floor_mib_s: float = Field(
        32.0, gt=0, description="a longer block write is routine too when its bytes needed the time at this rate in "
        "MiB/s (a big block, not a stall)")
    block_size_mib: int = Field(128, ge=1, description="the cluster's dfs.blocksize in MiB: a write still open after "
                                "a full block's time at the floor rate is evidence")

    # --- Raw ingest (confluent-kafka batches) --------------------------------------------------------------------
    raw_processes: int = Field(1, ge=1, le=64, description="raw-ingest processes per worker (one core each; more than "
                               "the raw topics' partitions is of no use)")
    raw_batch: int = Field(40_000, ge=1, description="raw records per consume() batch of the ingest loop")
    recreated_topics: Literal["read", "refuse"] = Field(
        "read", description="a raw topic deleted and created again under its name: read it from its first record "
        "(read), or stop the worker and say how to go on (refuse)")
    raw_fetch_queue_backoff_ms: int = Field(10, ge=0, description="librdkafka fetch.queue.backoff.ms of the raw consumer")
    raw_queued_min_messages: int = Field(200_000, ge=1, description="librdkafka queued.min.messages of the raw consumer")
    raw_queued_max_kbytes: int = Field(
        16_384, ge=1, le=2_097_151,
        description="librdkafka queued.max.messages.kbytes of the raw consumer: prefetch kept in memory "
        "(librdkafka: 65536)",
    )

    # --- Service -----------------------------------------------------------------------------------------------
    worker_id: str = Field("correlator", description="Faust application id (consumer group) of the worker")
    web_host: str = Field("127.0.0.1", description="address the worker's /healthz and /metrics bind to (and those "
                          "of the Slack bot and the alert forwarder)")
    web_port: int = Field(6066, description="port of the worker's /healthz and /metrics")
    metrics_port: int | None = Field(None, ge=0, le=65535, description="port of /healthz and /metrics of `correlator "
                                     "slack` and `correlator alerts`; unset: not served")
    data_dir: Path = Field(Path(".run/worker"), description="directory for the worker's local table state")
    state_replication: int = Field(1, ge=1, description="replication factor of the worker's state changelog topics")
    log_level: str = Field("INFO", description="log level of the service's JSON logs")

    @field_validator(*DURATIONS, mode="before")
    @classmethod
    def _duration(cls, value: Any, info: ValidationInfo) -> Any:
        """A duration written with its unit (``90s``, ``15m``, ``2h``) in the field's own unit; a number as it is."""
        if not isinstance(value, str) or _NUMBER.fullmatch(value.strip()):
            return value  # a number: checked as before
        name = str(info.field_name)
        amount = parse_duration(value, DURATIONS[name])
        return round(amount) if cls.model_fields[name].annotation is int else amount

    @field_validator("tz")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r}") from None
        return value

    @field_validator("layout")
    @classmethod
    def _readable_layout(cls, value: str | None) -> str | None:
        from correlator.core.ingest.patterns import PatternError, TextLayout

        if value:
            try:
                TextLayout.compile(value)
            except PatternError as exc:
                raise ValueError(str(exc)) from None
        return value or None

    @property
    def raw_topics(self) -> tuple[str, ...]:
        """Every topic of shipped log lines the worker reads: Flink's, Hadoop's, the object store's."""
        return (self.topic_logs_flink, self.topic_logs_hdfs, self.topic_logs_s3)

    def engine_config(self) -> EngineConfig:
        from correlator.core.correlate.engine import EngineConfig

        return EngineConfig(
            out_of_orderness_ms=self.out_of_orderness_ms,
            lookahead_ms=self.lookahead_ms,
            idle_timeout_ms=self.idle_timeout_ms,
            clock_skew_ms=self.clock_skew_ms,
        )

    def ingest_config(self) -> IngestConfig:
        from correlator.core.ingest.ingest import IngestConfig

        return IngestConfig(tz=self.tz, default_cluster=self.cluster, idle_flush_ms=self.multiline_idle_ms,
                            slow_write_ms=self.slow_write_ms, write_floor_mib_s=self.write_floor_mib_s,
                            block_size_mib=self.block_size_mib, layout=self.layout)

    def sasl_password_value(self) -> str | None:
        """The password from the variable or from the file, read only where a client is built."""
        if self.sasl_password is not None:
            return self.sasl_password.get_secret_value()
        if self.sasl_password_file is not None:
            return self.sasl_password_file.read_text(encoding="utf-8").strip()
        return None

    def slack_token_value(self) -> str | None:
        """The token from the variable or from the file, read only where it is used."""
        if self.slack_token is not None:
            return self.slack_token.get_secret_value()
        if self.slack_token_file is not None:
            return self.slack_token_file.read_text(encoding="utf-8").strip()
        return None

    def kafka_security(self) -> dict[str, Any]:
        """librdkafka (confluent-kafka) properties for the configured security settings."""
        conf: dict[str, Any] = {"security.protocol": self.security_protocol}
        if self.sasl_mechanism:
            conf["sasl.mechanism"] = self.sasl_mechanism
        if self.sasl_username:
            conf["sasl.username"] = self.sasl_username
        password = self.sasl_password_value()
        if password is not None:
            conf["sasl.password"] = password
        if self.ssl_cafile:
            conf["ssl.ca.location"] = str(self.ssl_cafile)
        if self.ssl_certfile:
            conf["ssl.certificate.location"] = str(self.ssl_certfile)
        if self.ssl_keyfile:
            conf["ssl.key.location"] = str(self.ssl_keyfile)
        return conf

    def kafka_client(self, **extra: Any) -> dict[str, Any]:
        """Complete confluent-kafka configuration: servers, security, then caller-specific keys. Our topics are
        never auto-created by a client, and librdkafka logs through our (de-duplicating) logger."""
        from correlator.kafka_log import LIBRDKAFKA

        return {
            "bootstrap.servers": self.bootstrap_servers,
            "allow.auto.create.topics": False,
            "logger": LIBRDKAFKA,
            **self.kafka_security(),
            **extra,
        }


def env_var(field_name: str) -> str:
    return ENV_PREFIX + field_name.upper()


SECRET_FIELDS = frozenset(name for name, f in Settings.model_fields.items() if "SecretStr" in str(f.annotation))
