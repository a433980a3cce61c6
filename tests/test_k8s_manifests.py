"""Both Kubernetes deployments as rendered — deploy/k8s through kustomize, the Helm chart through the pinned helm —
deploy the way platform teams require: probes and metrics on every long-running pod, the restricted security context,
no service-account token, resources, disruption budgets, a network policy, and secrets referenced, never shipped.

helm is not in the test environment (building it takes minutes): `make helm-check` lints the chart, renders it into
deploy/helm/rendered.yaml and checks every rendered object against the types of a pinned k8s.io/api. Here that
rendering is read, after checking it was made from the chart as it is now (its digest header)."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
import pytest
import yaml

from correlator.cli import COMMANDS, cli
from correlator.config import SECRET_FIELDS, env_var

REPO = Path(__file__).resolve().parents[1]
K8S = REPO / "deploy" / "k8s"
CHART = REPO / "deploy" / "helm" / "correlator"
WORKLOADS = ("Deployment", "StatefulSet", "Job")
SERVERS = ("Deployment", "StatefulSet")
ENV_ONLY_SECRETS = {"alerts": {"webhook_secret", "pagerduty_routing_key", "opsgenie_api_key"}}
"""Secrets a command reads from the environment only (no option would show them in the process list)."""


def _render() -> Any:
    spec = importlib.util.spec_from_file_location("deploy_render", REPO / "deploy" / "render.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


render = _render()
DIGEST, HELM_DOCS = render.read_rendered()
RENDERINGS = {"kustomize": render.kustomize(), "helm": HELM_DOCS}


@pytest.fixture(params=sorted(RENDERINGS))
def docs(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return RENDERINGS[request.param]


def of_kind(docs: list[dict[str, Any]], *kinds: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] in kinds]


def component(doc: dict[str, Any]) -> str:
    return str(doc["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"])


def config(docs: list[dict[str, Any]]) -> dict[str, str]:
    [configmap] = of_kind(docs, "ConfigMap")
    return dict(configmap["data"])


def containers(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    pod = doc["spec"]["template"]["spec"]
    yield from pod.get("initContainers", [])
    yield from pod["containers"]


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, "only matchLabels selectors are read here"
    return bool(selector.get("matchLabels")) and selector["matchLabels"].items() <= labels.items()


def secret_refs(doc: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """Environment variable -> (Secret name, optional) for a workload's containers."""
    refs = {}
    for container in containers(doc):
        assert not any("secretRef" in source for source in container.get("envFrom", [])), "whole-Secret envFrom"
        for entry in container.get("env", []):
            ref = entry.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                assert ref["key"] == entry["name"]
                refs[entry["name"]] = (ref["name"], bool(ref.get("optional")))
    return refs


def secret_fields_of(command: str) -> set[str]:
    args = command.split()
    found = cli.get_command(click.Context(cli), args[0])
    for sub in args[1:]:
        assert isinstance(found, click.Group)
        found = found.get_command(click.Context(found), sub)
    assert found is not None
    return {p.name for p in found.params if p.name in SECRET_FIELDS} | ENV_ONLY_SECRETS.get(args[0], set())


def test_the_helm_rendering_is_of_the_chart_as_it_is() -> None:
    """deploy/helm/rendered.yaml was rendered from the chart's current files: after a chart change, `make helm-check`
    renders it again (and checks it against the API types)."""
    assert DIGEST == render.chart_digest(CHART), "the chart changed since deploy/helm/rendered.yaml: make helm-check"


def test_both_deploy_the_same_workloads() -> None:
    """The same components of the same kinds, running the same commands, with the same secret keys."""
    shapes = {}
    for name, docs in RENDERINGS.items():
        shapes[name] = {
            (d["kind"], component(d)): ([c["args"] for c in containers(d)],
                                        {k: optional for k, (_, optional) in secret_refs(d).items()})
            for d in of_kind(docs, *WORKLOADS)
        }
    assert shapes["kustomize"] == shapes["helm"]
    assert set(shapes["helm"]) == {("StatefulSet", "worker"), ("Deployment", "slack"), ("Deployment", "alerts"),
                                   ("Job", "topics")}


def test_every_server_has_probes_and_metrics(docs: list[dict[str, Any]]) -> None:
    """Each Deployment and StatefulSet: readiness on /healthz and liveness on a port the container declares, that
    port being the one its command serves (CORRELATOR_WEB_PORT for the worker, CORRELATOR_METRICS_PORT for the bot
    and the forwarder), and prometheus.io annotations pointing at /metrics on it."""
    settings = config(docs)
    servers = of_kind(docs, *SERVERS)
    assert len(servers) == 3
    for doc in servers:
        [container] = list(containers(doc))
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        setting = "CORRELATOR_WEB_PORT" if container["args"] == ["worker"] else "CORRELATOR_METRICS_PORT"
        served = int(settings[setting])
        assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
        for probe in (container["readinessProbe"], container["livenessProbe"]):
            [how] = [probe[k] for k in ("httpGet", "tcpSocket") if k in probe]
            assert ports[how["port"]] == served, (component(doc), probe)
        annotations = doc["spec"]["template"]["metadata"]["annotations"]
        assert (annotations["prometheus.io/scrape"], annotations["prometheus.io/path"]) == ("true", "/metrics")
        assert int(annotations["prometheus.io/port"]) == served
        assert container["args"][0] in COMMANDS


def test_every_pod_is_restricted(docs: list[dict[str, Any]]) -> None:
    """The restricted Pod Security Standard and then some: non-root with a numeric user, seccomp RuntimeDefault, no
    privilege escalation, every capability dropped, a read-only root filesystem with /tmp a volume; no
    service-account token mounted, no Service variables in the environment."""
    workloads = of_kind(docs, *WORKLOADS)
    assert len(workloads) == 4
    for doc in workloads:
        pod = doc["spec"]["template"]["spec"]
        context = pod["securityContext"]
        assert context["runAsNonRoot"] is True and context["runAsUser"] > 0 and context["runAsGroup"] > 0
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["automountServiceAccountToken"] is False
        assert pod["enableServiceLinks"] is False
        assert not {"hostNetwork", "hostPID", "hostIPC"} & set(pod)
        assert all("hostPath" not in volume for volume in pod.get("volumes", []))
        for container in containers(doc):
            own = container["securityContext"]
            assert own["allowPrivilegeEscalation"] is False
            assert own["capabilities"] == {"drop": ["ALL"]}
            assert own["readOnlyRootFilesystem"] is True
            assert not own.get("privileged") and own.get("runAsUser", 1) != 0
            if doc["kind"] != "Job":
                assert "/tmp" in {m["mountPath"] for m in container["volumeMounts"]}


def test_every_container_has_resources(docs: list[dict[str, Any]]) -> None:
    """CPU and memory requested, memory limited (no CPU limit: throttling a catch-up helps nobody)."""
    for doc in of_kind(docs, *WORKLOADS):
        for container in containers(doc):
            resources = container["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]) and "memory" in resources["limits"]


def test_every_server_has_a_disruption_budget_that_lets_nodes_drain(docs: list[dict[str, Any]]) -> None:
    """One PodDisruptionBudget per Deployment/StatefulSet, selecting its pods and only them, letting at least one
    pod go (a budget of zero disruptions would block every node drain)."""
    budgets = of_kind(docs, "PodDisruptionBudget")
    servers = of_kind(docs, *SERVERS)
    for doc in servers:
        labels = doc["spec"]["template"]["metadata"]["labels"]
        [budget] = [b for b in budgets if selects(b["spec"]["selector"], labels)]
        assert budget["spec"]["maxUnavailable"] >= 1 and "minAvailable" not in budget["spec"]
    assert len(budgets) == len(servers)


def test_the_network_policy_admits_only_the_served_ports(docs: list[dict[str, Any]]) -> None:
    """A NetworkPolicy selects every pod for both directions. In: only the named ports the servers declare (the
    Job's pods take nothing). Out: DNS, and the ports of what the configuration names — the brokers, Alertmanager,
    Redis (as in secret.example.yaml), HTTPS (Slack, PagerDuty, Opsgenie)."""
    [policy] = of_kind(docs, "NetworkPolicy")
    spec = policy["spec"]
    assert set(spec["policyTypes"]) == {"Ingress", "Egress"}
    for doc in of_kind(docs, *WORKLOADS):
        assert selects(spec["podSelector"], doc["spec"]["template"]["metadata"]["labels"]), component(doc)
    declared = {p["name"] for d in of_kind(docs, *SERVERS) for c in containers(d) for p in c["ports"]}
    admitted = {p["port"] for rule in spec["ingress"] for p in rule["ports"]}
    assert admitted == declared == {"web", "metrics"}
    out = {(p["protocol"], p["port"]) for rule in spec["egress"] for p in rule["ports"]}
    assert {("UDP", 53), ("TCP", 53)} <= out
    settings = config(docs)
    example = yaml.safe_load((K8S / "secret.example.yaml").read_text())["stringData"]
    needed = {int(server.rsplit(":", 1)[1]) for server in settings["CORRELATOR_BOOTSTRAP_SERVERS"].split(",")}
    needed |= {urlsplit(settings["CORRELATOR_ALERTMANAGER_URL"]).port, urlsplit(example["CORRELATOR_REDIS_URL"]).port,
               443}
    assert {("TCP", port) for port in needed} <= out


def test_secrets_are_referenced_never_shipped(docs: list[dict[str, Any]]) -> None:
    """No Secret object is rendered; every pod reads the one Secret by key; every secret setting its command uses
    comes from it; the required keys (not optional) are the Slack token and the Redis URL, and the example lists
    every key read."""
    assert not of_kind(docs, "Secret")
    example = (K8S / "secret.example.yaml").read_text()
    example_keys = set(yaml.safe_load(example)["stringData"])
    names = set()
    required = set()
    for doc in of_kind(docs, *WORKLOADS):
        refs = secret_refs(doc)
        names |= {name for name, _ in refs.values()}
        required |= {key for key, (_, optional) in refs.items() if not optional}
        [container] = list(containers(doc))
        command = " ".join(container["args"])
        assert {env_var(f) for f in secret_fields_of(command)} <= set(refs), command
        assert not {env_var(f) for f in SECRET_FIELDS} & set(config(docs)), "a secret in the ConfigMap"
        for key in refs:
            assert re.search(rf"^\s*#?\s*{key}:", example, re.M), f"secret.example.yaml does not show {key}"
    assert names == {"correlator-secrets"}
    assert required == {"CORRELATOR_SLACK_TOKEN", "CORRELATOR_REDIS_URL"} <= example_keys


def test_the_chart_ships_no_secret() -> None:
    """No template makes a Secret; the chart reads the one named by secrets.existingSecret."""
    for path in (CHART / "templates").iterdir():
        assert not re.search(r"^kind:\s*Secret\b", path.read_text(), re.M), path.name
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["secrets"]["existingSecret"] == "correlator-secrets"


def test_the_docs_create_the_secret_with_every_required_key() -> None:
    """deploy/README.md's `kubectl create secret` gives every key a pod cannot start without."""
    text = (REPO / "deploy" / "README.md").read_text()
    command = re.search(r"kubectl create secret generic correlator-secrets(?:[^\n]*\\\n)*[^\n]*", text)
    assert command, "no kubectl create secret in deploy/README.md"
    given = set(re.findall(r"--from-literal=(CORRELATOR_[A-Z_]+)=", command.group(0)))
    assert {"CORRELATOR_SLACK_TOKEN", "CORRELATOR_REDIS_URL"} <= given


def test_every_correlator_variable_in_the_chart_is_a_setting() -> None:
    """Every CORRELATOR_* name in the chart's values and templates is a field of Settings."""
    from correlator.config import Settings

    settings = {env_var(name) for name in Settings.model_fields}
    for path in [CHART / "values.yaml", *(CHART / "templates").iterdir()]:
        assert set(re.findall(r"\bCORRELATOR_[A-Z0-9_]+\b", path.read_text())) <= settings, path.name
