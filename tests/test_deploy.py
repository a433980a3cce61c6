"""The deployment files users run (compose, image, Kubernetes, shippers, env.example) agree with the code.

Docker and Kubernetes cannot run here, so these tests check structure: every file parses, every ``CORRELATOR_*``
variable is a real setting, commands exist in the CLI, the compose broker is configured like ``deploy/local/kafka.sh``,
and the shippers' multi-line patterns join real log records the way each shipper applies them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from correlator.cli import COMMANDS
from correlator.config import SECRET_FIELDS, Settings, env_var
from correlator.core.ingest.envelopes import decode

REPO = Path(__file__).resolve().parents[1]
COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "deploy" / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
ENV_EXAMPLE = REPO / "deploy" / "env.example"
KAFKA_SH = REPO / "deploy" / "local" / "kafka.sh"
K8S = REPO / "deploy" / "k8s"
SHIPPERS = REPO / "deploy" / "shippers"

SETTINGS_VARS = {env_var(name) for name in Settings.model_fields}
VAR_REFERENCE = re.compile(r"\bCORRELATOR_[A-Z0-9_]+\b")

# Broker properties that necessarily differ between loopback and a container network.
NETWORK_PROPERTIES = {
    "listeners",
    "advertised.listeners",
    "controller.quorum.voters",
    "inter.broker.listener.name",
    "listener.security.protocol.map",
    "log.dirs",
}
# What makes the broker a fast single node; compose must set these exactly as kafka.sh does.
SINGLE_NODE_PROPERTIES = {
    "process.roles",
    "controller.listener.names",
    "offsets.topic.replication.factor",
    "transaction.state.log.replication.factor",
    "transaction.state.log.min.isr",
    "group.initial.rebalance.delay.ms",
}

# source: tests/data/samples/real/flink-A-pr8322.log (apache/flink PR 8322 comment, FLINK-12364), JobManager log, log4j 1 layout
FLINK_LINES = """\
2019-05-17 15:43:08,068 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator     - Triggering checkpoint 66 @ 1558107788056 for job dd4f07c1f866b7afff42759d7a35de3f.
2019-05-17 15:43:08,207 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator     - Decline checkpoint 66 by task e65ff0e6f0ff8e14a1b53410aa8bb019 of job dd4f07c1f866b7afff42759d7a35de3f.
2019-05-17 15:43:08,208 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator     - Discarding checkpoint 66 of job dd4f07c1f866b7afff42759d7a35de3f.
org.apache.flink.runtime.checkpoint.decline.CheckpointDeclineTaskNotReadyException: Task Source: Custom Source (1/1) was not running
	at org.apache.flink.runtime.taskmanager.Task$1.run(Task.java:1150)
	at java.util.concurrent.CompletableFuture$AsyncRun.run(CompletableFuture.java:1626)
	at java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1149)
	at java.util.concurrent.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:624)
	at java.lang.Thread.run(Thread.java:748)
2019-05-17 15:43:08,213 INFO  org.apache.flink.runtime.executiongraph.ExecutionGraph        - Job Flink Streaming Job (dd4f07c1f866b7afff42759d7a35de3f) switched from state RUNNING to FAILING.
""".splitlines()

# source: tests/data/samples/real/hdfs-H-datax1448.log (alibaba/DataX issue 1448), DataNode log
HDFS_LINES = """\
2022-07-16 17:13:43,182 ERROR [DataXceiver for client DFSClient_attempt_1657804987000_15524_m_000040_0_-1450386456_1 at /172.16.9.143:36326 [Receiving block BP-12047675-172.16.9.141-1608793845868:blk_1152735511_79014410]] org.apache.hadoop.hdfs.server.datanode.DataNode: hadoop-dn004:50010:DataXceiver error processing WRITE_BLOCK operation  src: /172.16.9.143:36326 dst: /172.16.9.142:50010
java.io.IOException: Premature EOF from inputStream
        at org.apache.hadoop.io.IOUtils.readFully(IOUtils.java:211)
        at org.apache.hadoop.hdfs.protocol.datatransfer.PacketReceiver.doReadFully(PacketReceiver.java:211)
""".splitlines()


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def load_all_yaml(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc is not None]


def walk(node: Any) -> Iterator[Any]:
    """Every dict and list inside a parsed YAML document, depth first."""
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def kafka_sh_properties() -> dict[str, str]:
    """The server.properties that kafka.sh writes (its first heredoc), as written before shell expansion."""
    text = KAFKA_SH.read_text(encoding="utf-8")
    body = re.search(r"<<PROPS\n(.*?)\nPROPS\n", text, re.S)
    assert body, "kafka.sh has no server.properties heredoc"
    pairs = (line.split("=", 1) for line in body.group(1).splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs}


def docker_env_to_property(name: str) -> str:
    """The apache/kafka image's mapping: KAFKA_ prefix off, ``___`` is ``-``, ``__`` is ``_``, ``_`` is ``.``."""
    rest = name.removeprefix("KAFKA_").lower()
    return rest.replace("___", "\0dash\0").replace("__", "\0us\0").replace("_", ".").replace(
        "\0dash\0", "-"
    ).replace("\0us\0", "_")


def topic_names() -> dict[str, str]:
    """The raw topics' names from ``topics/*.yaml``, falling back to the settings' defaults."""
    names = {}
    for field in ("topic_logs_flink", "topic_logs_hdfs", "topic_logs_s3"):
        default = Settings.model_fields[field].default
        definition = REPO / "src" / "correlator" / "topics" / f"{default}.yaml"
        names[field] = load_yaml(definition)["name"] if definition.exists() else default
    return names


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_yaml(COMPOSE)


@pytest.fixture(scope="module")
def k8s_docs() -> list[dict[str, Any]]:
    """deploy/k8s as `kubectl kustomize` renders it (deploy/render.py does the same for what it uses)."""
    return render_module().kustomize(K8S)


def render_module() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("deploy_render", REPO / "deploy" / "render.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TestCompose:
    def test_parses_with_the_six_services(self, compose: dict[str, Any]) -> None:
        """Compose defines kafka, redis, the one-shot topics job, the worker, the Slack bot and the alert forwarder."""
        assert {"kafka", "redis", "topics", "worker", "slack", "alerts"} <= set(compose["services"])

    def test_images(self, compose: dict[str, Any]) -> None:
        """Kafka is the official apache/kafka 3.9.x image, Redis is 7.x, the correlator services build our Dockerfile."""
        services = compose["services"]
        assert re.fullmatch(r"apache/kafka:3\.9\.\d+", services["kafka"]["image"])
        assert re.fullmatch(r"redis:7(\.\d+)*(-\w+)?", services["redis"]["image"])
        for name in ("topics", "worker", "slack", "alerts"):
            build = services[name]["build"]
            assert (REPO / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE

    def test_kafka_is_configured_like_kafka_sh(self, compose: dict[str, Any]) -> None:
        """The container broker has the same single-node settings as the loopback broker of kafka.sh."""
        env = compose["services"]["kafka"]["environment"]
        container = {
            docker_env_to_property(k): str(v) for k, v in env.items() if k.startswith("KAFKA_") and not k.endswith("_OPTS")
        }
        loopback = kafka_sh_properties()
        assert SINGLE_NODE_PROPERTIES <= container.keys()
        assert set(container["process.roles"].split(",")) == set(loopback["process.roles"].split(","))
        shared = (container.keys() & loopback.keys()) - NETWORK_PROPERTIES - {"process.roles"}
        assert {k: container[k] for k in shared} == {k: loopback[k] for k in shared}

    def test_kraft_quorum_is_the_node_itself(self, compose: dict[str, Any]) -> None:
        """The single controller voter is this node, on a port its CONTROLLER listener binds."""
        env = compose["services"]["kafka"]["environment"]
        node_id, voter = env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split("@")
        assert node_id == str(env["KAFKA_NODE_ID"])
        controller_port = voter.rsplit(":", 1)[1]
        assert f"{env['KAFKA_CONTROLLER_LISTENER_NAMES']}://:{controller_port}" in env["KAFKA_LISTENERS"].split(",")
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", env["CLUSTER_ID"]), "a KRaft cluster id is a base64 UUID"

    def test_commands_are_registered(self, compose: dict[str, Any]) -> None:
        """topics, worker, slack and alerts run CLI commands the registry knows."""
        services = compose["services"]
        assert services["topics"]["command"] == ["topics", "apply"]
        assert services["worker"]["command"] == ["worker"]
        assert services["slack"]["command"] == ["slack"]
        assert services["alerts"]["command"] == ["alerts"]
        for name in ("topics", "worker", "slack", "alerts"):
            assert services[name]["command"][0] in COMMANDS

    def test_start_order_and_health(self, compose: dict[str, Any]) -> None:
        """Services start only when what they need is healthy, and the topics exist before the worker and the bot."""
        services = compose["services"]
        for name in ("kafka", "redis", "worker"):
            assert services[name]["healthcheck"]["test"]
        assert services["topics"]["depends_on"]["kafka"]["condition"] == "service_healthy"
        for name in ("worker", "slack", "alerts"):
            depends = services[name]["depends_on"]
            assert depends["kafka"]["condition"] == "service_healthy"
            assert depends["redis"]["condition"] == "service_healthy"
            assert depends["topics"]["condition"] == "service_completed_successfully"

    def test_correlator_services_reach_the_compose_kafka_and_redis(self, compose: dict[str, Any]) -> None:
        """The correlator services point at the broker's container listener and at the redis service."""
        kafka_env = compose["services"]["kafka"]["environment"]
        advertised = kafka_env["KAFKA_ADVERTISED_LISTENERS"].split(",")
        for name in ("topics", "worker", "slack", "alerts"):
            env = compose["services"][name]["environment"]
            internal = f"{kafka_env['KAFKA_INTER_BROKER_LISTENER_NAME']}://{env['CORRELATOR_BOOTSTRAP_SERVERS']}"
            assert internal in advertised
            assert env["CORRELATOR_REDIS_URL"].startswith("redis://redis:")

    def test_worker_publishes_its_web_port(self, compose: dict[str, Any]) -> None:
        """The worker's /healthz and /metrics port is the one CORRELATOR_WEB_PORT sets."""
        worker = compose["services"]["worker"]
        port = str(worker["environment"]["CORRELATOR_WEB_PORT"])
        assert any(mapping.endswith(f":{port}") for mapping in worker["ports"])

    def test_bot_and_forwarder_serve_health_on_the_metrics_port(self, compose: dict[str, Any]) -> None:
        """The Slack bot and the alert forwarder serve /healthz on CORRELATOR_METRICS_PORT (not the worker's port),
        their health checks read it, each publishes it on its own loopback port; alerts starts only by profile (it
        needs a target from .env)."""
        services = compose["services"]
        published = set()
        for name in ("slack", "alerts"):
            service = services[name]
            port = str(service["environment"]["CORRELATOR_METRICS_PORT"])
            assert port != str(service["environment"]["CORRELATOR_WEB_PORT"])
            assert "/healthz" in service["healthcheck"]["test"][-1]
            assert "CORRELATOR_METRICS_PORT" in service["healthcheck"]["test"][-1]
            [mapping] = service["ports"]
            assert mapping.startswith("127.0.0.1:") and mapping.endswith(f":{port}")
            published.add(mapping.split(":")[1])
        assert len(published) == 2
        assert services["alerts"]["profiles"] == ["alerts"] and "profiles" not in services["slack"]

    def test_every_correlator_variable_is_a_setting(self) -> None:
        """Every CORRELATOR_* name in the compose file is a field of Settings."""
        assert set(VAR_REFERENCE.findall(COMPOSE.read_text(encoding="utf-8"))) <= SETTINGS_VARS


class TestEnvExample:
    def entries(self) -> dict[str, tuple[str, str, bool]]:
        """name -> (value, the comment line above it, whether the line is active)."""
        lines = ENV_EXAMPLE.read_text(encoding="utf-8").splitlines()
        found = {}
        for above, line in zip(lines, lines[1:]):
            match = re.fullmatch(r"(# )?(CORRELATOR_[A-Z0-9_]+)=(.*)", line)
            if match:
                found[match.group(2)] = (match.group(3), above.removeprefix("# "), match.group(1) is None)
        return found

    def test_lists_every_setting_and_nothing_else(self) -> None:
        """env.example names exactly the Settings fields."""
        assert set(self.entries()) == SETTINGS_VARS

    def test_each_variable_carries_its_description(self) -> None:
        """The comment above each variable is the field's description."""
        entries = self.entries()
        for name, field in Settings.model_fields.items():
            assert entries[env_var(name)][1] == field.description

    def test_secrets_are_empty(self) -> None:
        """Secrets have no value in the example."""
        entries = self.entries()
        for name in SECRET_FIELDS:
            value, _, active = entries[env_var(name)]
            assert value == "" and not active

    def test_loading_it_yields_the_defaults(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Loaded as an env file, the example gives the default settings (no empty value sneaks in as a path)."""
        for name in SETTINGS_VARS:
            monkeypatch.delenv(name, raising=False)
        loaded = Settings(_env_file=ENV_EXAMPLE)
        assert loaded.model_dump() == Settings(_env_file=None).model_dump()


class TestDockerfile:
    def instructions(self) -> list[tuple[str, str]]:
        text = DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
        rows = (line.strip().split(None, 1) for line in text.splitlines())
        return [(row[0].upper(), row[1]) for row in rows if len(row) == 2 and not row[0].startswith("#")]

    def test_base_install_user_entrypoint(self) -> None:
        """python:3.11-slim, dependencies from the runtime lock only (never the test freeze) then the project without
        deps, a numeric non-root user (runAsNonRoot can check it) that exists, `correlator` entry."""
        steps = self.instructions()
        assert steps[0] == ("FROM", "python:3.11-slim")
        runs = [arg for op, arg in steps if op == "RUN"]
        lock = next(i for i, arg in enumerate(runs) if "pip install -r requirements-runtime.lock" in arg)
        project = next(i for i, arg in enumerate(runs) if "pip install --no-deps ." in arg)
        assert lock < project
        assert not any("requirements.lock" in arg for op, arg in steps if op in ("COPY", "RUN"))
        assert not any(re.search(r"pip install[^&]*(\.\[|pytest|-e )", arg) for arg in runs)
        user = [arg for op, arg in steps if op == "USER"][-1]
        uid, _, gid = user.partition(":")
        assert uid.isdigit() and int(uid) > 0 and (not gid or int(gid) > 0)
        assert any(f"--uid {uid}" in arg for arg in runs)
        assert ("ENTRYPOINT", '["correlator"]') in steps

    def test_build_context_keeps_what_the_image_copies(self) -> None:
        """.dockerignore re-includes every path the Dockerfile copies."""
        kept = {line[1:].rstrip("/") for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines() if line.startswith("!")}
        copied = {src for op, arg in self.instructions() if op == "COPY" for src in arg.split()[:-1]}
        assert copied <= kept

    def test_environment_names_settings(self) -> None:
        """CORRELATOR_* variables baked into the image are settings."""
        assert set(VAR_REFERENCE.findall(DOCKERFILE.read_text(encoding="utf-8"))) <= SETTINGS_VARS


class TestKubernetes:
    def by_kind(self, docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
        return [doc for doc in docs if doc["kind"] == kind]

    def pod_specs(self, docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {
            doc["metadata"]["name"]: doc["spec"]["template"]["spec"]
            for doc in docs
            if doc["kind"] in ("Deployment", "StatefulSet", "Job")
        }

    def test_kustomization_lists_every_manifest_but_the_secret_example(self) -> None:
        """kustomization.yaml names each manifest in the directory, and each exists; the Secret's example is not
        applied (an apply would overwrite the Secret the user made), and no applied file holds a Secret."""
        resources = load_yaml(K8S / "kustomization.yaml")["resources"]
        manifests = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
        assert set(resources) == manifests - {"secret.example.yaml"}
        assert "secret.example.yaml" in manifests
        assert [d["kind"] for d in load_all_yaml(K8S / "secret.example.yaml")] == ["Secret"]

    def test_workloads(self, k8s_docs: list[dict[str, Any]]) -> None:
        """A worker StatefulSet, a Slack bot and an Alertmanager forwarder Deployment and a topics Job run registered
        commands."""
        commands = {name: spec["containers"][0]["args"] for name, spec in self.pod_specs(k8s_docs).items()}
        assert commands == {
            "correlator-worker": ["worker"],
            "correlator-slack": ["slack"],
            "correlator-alerts": ["alerts"],
            "correlator-topics": ["topics", "apply"],
        }
        assert all(args[0] in COMMANDS for args in commands.values())
        assert [d["metadata"]["name"] for d in self.by_kind(k8s_docs, "StatefulSet")] == ["correlator-worker"]

    def test_worker_replicas_share_the_events_partitions(self, k8s_docs: list[dict[str, Any]]) -> None:
        """No worker replica is idle: there are at least as many events partitions as replicas."""
        worker = self.by_kind(k8s_docs, "StatefulSet")[0]
        events = load_yaml(REPO / "src" / "correlator" / "topics" / f"{Settings.model_fields['topic_events'].default}.yaml")
        assert 1 < worker["spec"]["replicas"] <= events["partitions"]

    def test_references_resolve(self, k8s_docs: list[dict[str, Any]]) -> None:
        """Every ConfigMap a pod reads is applied, the Secret is the one secret.example.yaml shows, and every key a pod
        names is defined or optional."""
        assert not self.by_kind(k8s_docs, "Secret")
        defined = {
            (doc["kind"], doc["metadata"]["name"]): set(doc.get("data", {})) | set(doc.get("stringData", {}))
            for doc in [*k8s_docs, *load_all_yaml(K8S / "secret.example.yaml")]
            if doc["kind"] in ("ConfigMap", "Secret")
        }
        references = 0
        for spec in self.pod_specs(k8s_docs).values():
            for node in walk(spec):
                if not isinstance(node, dict):
                    continue
                for ref_field, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                    if ref_field in node:
                        assert (kind, node[ref_field]["name"]) in defined
                        references += 1
                for ref_field, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                    if ref_field in node:
                        ref = node[ref_field]
                        assert (kind, ref["name"]) in defined
                        assert ref["key"] in defined[(kind, ref["name"])] or ref.get("optional") is True
                        references += 1
        assert references >= 6

    def test_slack_token_is_a_secret(self, k8s_docs: list[dict[str, Any]]) -> None:
        """The Slack token lives in the Secret, never in the ConfigMap, and the bot reads it."""
        config = self.by_kind(k8s_docs, "ConfigMap")[0]["data"]
        secret = load_all_yaml(K8S / "secret.example.yaml")[0]["stringData"]
        secrets = {env_var(name) for name in SECRET_FIELDS}
        assert not secrets & set(config)
        assert env_var("slack_token") in secret
        slack_env = self.pod_specs(k8s_docs)["correlator-slack"]["containers"][0]["env"]
        assert any(e["name"] == env_var("slack_token") and "secretKeyRef" in e["valueFrom"] for e in slack_env)

    def test_service_exposes_the_web_port(self, k8s_docs: list[dict[str, Any]]) -> None:
        """The worker Service and container port are CORRELATOR_WEB_PORT, and readiness is /healthz."""
        port = int(self.by_kind(k8s_docs, "ConfigMap")[0]["data"][env_var("web_port")])
        service = next(d for d in self.by_kind(k8s_docs, "Service") if d["metadata"]["name"] == "correlator-worker")
        worker = self.pod_specs(k8s_docs)["correlator-worker"]["containers"][0]
        assert [p["port"] for p in service["spec"]["ports"]] == [port]
        assert [p["containerPort"] for p in worker["ports"]] == [port]
        assert worker["readinessProbe"]["httpGet"]["path"] == "/healthz"
        template_labels = self.by_kind(k8s_docs, "StatefulSet")[0]["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= template_labels.items()

    def test_every_correlator_variable_is_a_setting(self) -> None:
        """Every CORRELATOR_* name in the manifests is a field of Settings."""
        for path in K8S.glob("*.yaml"):
            assert set(VAR_REFERENCE.findall(path.read_text(encoding="utf-8"))) <= SETTINGS_VARS, path.name


def join_filebeat(lines: list[str], pattern: str, negate: bool, match: str) -> list[str]:
    """Filebeat's pattern multiline: with negate + after, lines not matching the pattern append to the previous."""
    assert negate and match == "after"
    records: list[str] = []
    for line in lines:
        if re.search(pattern, line) or not records:
            records.append(line)
        else:
            records[-1] += "\n" + line
    return records


def join_vector(lines: list[str], start: str, mode: str, condition: str) -> list[str]:
    """Vector's halt_before: a group starts at start_pattern and ends before the next line matching the condition."""
    assert mode == "halt_before"
    records: list[str] = []
    for line in lines:
        if not records or (re.search(condition, line) and re.search(start, line)):
            records.append(line)
        else:
            records[-1] += "\n" + line
    return records


def join_fluent_bit(lines: list[str], rules: list[dict[str, str]]) -> list[str]:
    """Fluent Bit's regex multiline: start_state opens a record, a `cont` rule extends it, anything else flushes."""
    compiled = [(r["state"], re.compile(r["regex"].strip("/")), r["next_state"]) for r in rules]
    records: list[str] = []
    state = "start_state"
    for line in lines:
        extends = [nxt for st, regex, nxt in compiled if st == state and st != "start_state" and regex.search(line)]
        if extends and records:
            records[-1] += "\n" + line
            state = extends[0]
            continue
        records.append(line)
        starts = [nxt for st, regex, nxt in compiled if st == "start_state" and regex.search(line)]
        state = starts[0] if starts else "start_state"
    return records


EXPECTED_FLINK = [FLINK_LINES[0], FLINK_LINES[1], "\n".join(FLINK_LINES[2:9]), FLINK_LINES[9]]
EXPECTED_HDFS = ["\n".join(HDFS_LINES)]


class TestShippers:
    def test_filebeat(self) -> None:
        """Filebeat joins records, tags Flink and Hadoop files with their topics and keys by host + file."""
        config = load_yaml(SHIPPERS / "filebeat.yml")
        topics = topic_names()
        routed: dict[str, list[dict[str, Any]]] = {}
        for entry in config["filebeat.inputs"]:
            topic = next(p["add_fields"]["fields"]["kafka_topic"] for p in entry["processors"])
            routed.setdefault(topic, []).append(entry)
        assert set(routed) == set(topics.values())
        for topic, lines, expected in (
            (topics["topic_logs_flink"], FLINK_LINES, EXPECTED_FLINK),
            (topics["topic_logs_hdfs"], HDFS_LINES, EXPECTED_HDFS),
        ):
            joined = [e for e in routed[topic] if "parsers" in e]
            assert joined, f"no multi-line input feeds {topic}"
            for entry in joined:
                ml = entry["parsers"][0]["multiline"]
                assert join_filebeat(lines, ml["pattern"], ml["negate"], ml["match"]) == expected
        output = config["output.kafka"]
        assert output["topic"] == "%{[@metadata.kafka_topic]}"
        assert "host.name" in output["key"] and "log.file.path" in output["key"]
        assert output["hosts"] == "${KAFKA_BROKERS}"

    def test_fluent_bit(self) -> None:
        """Fluent Bit joins records with its multiline parser and routes each tag to its topic, keyed by host + file."""
        config = load_yaml(SHIPPERS / "fluent-bit.yaml")
        topics = topic_names()
        parsers = {p["name"]: p for p in config["multiline_parsers"]}
        inputs = config["pipeline"]["inputs"]
        outputs = config["pipeline"]["outputs"]
        assert {o["topics"] for o in outputs} == set(topics.values())
        for topic, lines, expected in (
            (topics["topic_logs_flink"], FLINK_LINES, EXPECTED_FLINK),
            (topics["topic_logs_hdfs"], HDFS_LINES, EXPECTED_HDFS),
        ):
            output = next(o for o in outputs if o["topics"] == topic)
            assert output["brokers"] == "${KAFKA_BROKERS}"
            assert output["message_key_field"] == "key"
            prefix = output["match"].rstrip("*")
            joined = [i for i in inputs if i["tag"].startswith(prefix) and "multiline.parser" in i]
            assert joined, f"no multi-line input feeds {topic}"
            for entry in joined:
                assert entry["path_key"] == "file"
                assert join_fluent_bit(lines, parsers[entry["multiline.parser"]]["rules"]) == expected
        lua = next(f for f in config["pipeline"]["filters"] if f["name"] == "lua")
        assert 'record["key"]' in lua["code"] and 'record["host"]' in lua["code"] and 'record["file"]' in lua["code"]

    def test_vector(self) -> None:
        """Vector joins records at the source, keys by host + file and sinks each source to its topic."""
        config = load_yaml(SHIPPERS / "vector.yaml")
        topics = topic_names()
        sinks = config["sinks"]
        assert {s["topic"] for s in sinks.values()} == set(topics.values())
        transforms = config["transforms"]
        for topic, lines, expected in (
            (topics["topic_logs_flink"], FLINK_LINES, EXPECTED_FLINK),
            (topics["topic_logs_hdfs"], HDFS_LINES, EXPECTED_HDFS),
        ):
            sink = next(s for s in sinks.values() if s["topic"] == topic)
            assert sink["bootstrap_servers"] == "${KAFKA_BROKERS}"
            assert sink["key_field"] == "kafka_key"
            sources = [src for t in sink["inputs"] for src in transforms[t]["inputs"]]
            for t in sink["inputs"]:
                assert re.search(r"\.kafka_key = host \+ \":\" \+ file", transforms[t]["source"])
            joined = [config["sources"][s]["multiline"] for s in sources if "multiline" in config["sources"][s]]
            assert joined, f"no multi-line source feeds {topic}"
            for ml in joined:
                assert join_vector(lines, ml["start_pattern"], ml["mode"], ml["condition_pattern"]) == expected

    @pytest.mark.parametrize("name", ["filebeat.yml", "fluent-bit.yaml", "vector.yaml"])
    def test_no_variable_pretends_to_be_a_setting(self, name: str) -> None:
        """Shippers run on the Flink/Hadoop hosts; any CORRELATOR_* name they use is still a real setting."""
        assert set(VAR_REFERENCE.findall((SHIPPERS / name).read_text(encoding="utf-8"))) <= SETTINGS_VARS


class TestShippedRecordsDecode:
    """What each shipper sends, built from its config's field names, decodes to the record and its origin."""

    HOST = "tm-1.example.com"
    FILE = "/opt/flink/log/flink-flink-taskexecutor-0-tm-1.log"
    CLUSTER = "prod-eu"
    RECORD = EXPECTED_FLINK[2]

    def check(self, envelope: dict[str, Any], kind: str) -> None:
        decoded = decode(json.dumps(envelope).encode())
        assert (decoded.text, decoded.host, decoded.file, decoded.cluster, decoded.envelope) == (
            self.RECORD, self.HOST, self.FILE, self.CLUSTER, kind
        )

    def test_filebeat(self) -> None:
        """Filebeat's event (message, host.name, log.file.path, fields) carries host, file and cluster."""
        entry = load_yaml(SHIPPERS / "filebeat.yml")["filebeat.inputs"][0]
        fields = {name: self.CLUSTER for name in entry["fields"]}
        self.check({"@timestamp": "2019-05-17T15:43:08.208Z", "message": self.RECORD, "host": {"name": self.HOST},
                    "log": {"file": {"path": self.FILE}, "offset": 0}, "fields": fields}, "filebeat")

    def test_fluent_bit(self) -> None:
        """Fluent Bit's record (log, path_key, record_modifier keys) carries host, file and cluster."""
        config = load_yaml(SHIPPERS / "fluent-bit.yaml")
        modifier = next(f for f in config["pipeline"]["filters"] if f["name"] == "record_modifier")
        added = dict(item.split(None, 1) for item in modifier["record"])
        values = {"${HOSTNAME}": self.HOST, "${CLUSTER_NAME}": self.CLUSTER}
        record = {"log": self.RECORD, config["pipeline"]["inputs"][0]["path_key"]: self.FILE}
        record |= {key: values[value] for key, value in added.items()}
        record["key"] = f"{self.HOST}:{self.FILE}"
        self.check(record, "fluentbit")

    def test_vector(self) -> None:
        """Vector's event (message, host, file from the file source, cluster from the remap) carries all three."""
        source = load_yaml(SHIPPERS / "vector.yaml")["transforms"]["flink_keyed"]["source"]
        cluster_field = re.search(r"^\.(\w+) = get_env_var\(\"CLUSTER_NAME\"\)", source, re.M)
        assert cluster_field
        self.check({"message": self.RECORD, "host": self.HOST, "file": self.FILE, "source_type": "file",
                    "timestamp": "2019-05-17T15:43:08.208Z", cluster_field.group(1): self.CLUSTER}, "vector")


LINE = st.one_of(st.sampled_from(FLINK_LINES + HDFS_LINES), st.text(alphabet=st.characters(exclude_characters="\n\r"), max_size=40))


@given(st.lists(LINE, max_size=30))
def test_multiline_joiners_keep_every_line(lines: list[str]) -> None:
    """Joining keeps every line in order; past a file's head it only ever extends a timestamped record."""
    pattern = r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}"
    fluent_rules = load_yaml(SHIPPERS / "fluent-bit.yaml")["multiline_parsers"][0]["rules"]
    joiners: list[Callable[[list[str]], list[str]]] = [
        lambda ls: join_filebeat(ls, pattern, True, "after"),
        lambda ls: join_vector(ls, pattern, "halt_before", pattern),
        lambda ls: join_fluent_bit(ls, fluent_rules),
    ]
    for join in joiners:
        records = join(lines)
        assert [line for record in records for line in record.split("\n")] == lines
        assert all(re.match(pattern, record) for record in records[1:] if "\n" in record)


def test_the_alerting_rules_and_the_dashboard_read_only_metrics_the_services_expose() -> None:
    """A rule or panel on a metric that was renamed or never existed would stay silent forever: every
    ``correlator_*`` name in deploy/monitoring/ is a series of the worker's registry or of the Slack bot's and alert
    forwarder's (counters with ``_total``, histograms with ``_bucket``)."""
    from correlator.notify.feed_health import FeedHealth
    from correlator.stream.metrics import WorkerMetrics
    from correlator.notify.sink import Stats

    class Sink:
        stats = Stats()

    exposed = set()
    for family in [*WorkerMetrics().registry.collect(), *FeedHealth("alerts", Sink()).registry.collect()]:
        exposed |= {family.name, f"{family.name}_total", f"{family.name}_bucket", f"{family.name}_count",
                    f"{family.name}_sum"}
    for name in ("correlator-rules.yml", "correlator-dashboard.json"):
        text = (REPO / "deploy" / "monitoring" / name).read_text()
        used = set(re.findall(r"\bcorrelator_[a-z_]+", text))
        assert used and used <= exposed, (name, sorted(used - exposed))
