"""Who wrote a log on Kubernetes: the pod, from the kubelet's file names or a shipper's Kubernetes metadata.

On Kubernetes the pod is the host: a node runs several TaskManagers, and a DataNode keeps its identity (a
StatefulSet's ``hdfs-datanode-2``) across nodes. The node is kept beside it. Where the files are:

* ``/var/log/containers/<pod>_<namespace>_<container>-<container id>.log`` (the kubelet's symlinks),
* ``/var/log/pods/<namespace>_<pod>_<pod uid>/<container>/<restart>.log`` (the files themselves, rotated as
  ``<restart>.log.<yyyyMMdd-HHmmss>`` and ``….gz``).

The role comes from Flink's pod naming (native Kubernetes and the operator name TaskManagers
``<cluster-id>-taskmanager-<attempt>-<index>``), the ``component`` label both set, or a role word in the pod or
container name (``namenode``, ``datanode``); the JobManager's ``<cluster-id>-<hash>-<hash>`` names nothing, so its
role comes from its lines' logger names, as everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_NAME = r"[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?"
_CONTAINERS = re.compile(rf"(?:^|/)(?P<pod>{_NAME})_(?P<ns>{_NAME})_(?P<container>{_NAME})-(?P<id>[0-9a-f]{{64}})\.log$")
_PODS = re.compile(
    rf"(?:^|/)(?P<ns>{_NAME})_(?P<pod>{_NAME})_(?P<uid>[0-9a-f-]{{36}})/(?P<container>{_NAME})/\d+\.log"
    r"(?:\.\d{8}-\d{6})?(?:\.gz)?$"
)
_TASKMANAGER = re.compile(r"-taskmanager-\d+-\d+$")
POD_NAME = re.compile(r"^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?-(?:\d+|[a-z0-9]{5}|taskmanager-\d+-\d+)$")
"""A name Kubernetes gives pods: a StatefulSet's ``<name>-<ordinal>``, a ReplicaSet's ``<name>-<hash>-<5 chars>``."""
_ROLE_WORDS = ("taskmanager", "jobmanager", "datanode", "namenode")


@dataclass(frozen=True, slots=True)
class PodFacts:
    pod: str
    namespace: str | None
    container: str | None
    role: str | None
    node: str | None = None


def role_of_pod(pod: str, container: str | None = None, component: str | None = None) -> str | None:
    """The Flink or HDFS role a pod's name, container or ``component`` label names (None when they name none)."""
    if component in _ROLE_WORDS:
        return component
    if _TASKMANAGER.search(pod):
        return "taskmanager"
    for name in (container or "", pod):
        for word in _ROLE_WORDS:
            if word in name:
                return word
    return None


def pod_of_path(path: str) -> PodFacts | None:
    """The pod a kubelet log file's path names, or None for any other path."""
    path = path.replace("\\", "/")
    m = _CONTAINERS.search(path) or _PODS.search(path)
    if m is None:
        return None
    return PodFacts(m["pod"], m["ns"], m["container"], role_of_pod(m["pod"], m["container"]))


def pod_of_metadata(data: dict[str, Any]) -> PodFacts | None:
    """The pod a shipper's Kubernetes metadata names: Fluent Bit's ``kubernetes`` filter, Vector's
    ``kubernetes_logs`` source, Filebeat's ``add_kubernetes_metadata``, OpenTelemetry's ``k8s.*`` attributes."""
    k8s = data.get("kubernetes")
    if isinstance(k8s, dict):
        pod = first_str(k8s.get("pod_name"), path_of(k8s, "pod", "name"))
        if pod is None:
            return None
        labels = first_dict(k8s.get("labels"), k8s.get("pod_labels"))
        container = first_str(k8s.get("container_name"), path_of(k8s, "container", "name"))
        return PodFacts(
            pod,
            first_str(k8s.get("namespace_name"), k8s.get("pod_namespace"), k8s.get("namespace")),
            container,
            role_of_pod(pod, container, first_str(labels.get("component"))),
            first_str(k8s.get("host"), k8s.get("pod_node_name"), path_of(k8s, "node", "name")),
        )
    pod = first_str(data.get("k8s.pod.name"))
    if pod is None:
        return None
    container = first_str(data.get("k8s.container.name"))
    return PodFacts(pod, first_str(data.get("k8s.namespace.name")), container,
                    role_of_pod(pod, container, first_str(data.get("k8s.pod.label.component"))),
                    first_str(data.get("k8s.node.name")))


def path_of(node: Any, *keys: str) -> Any:
    """``node[k1][k2]…``, None where a level is missing or not an object."""
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def first_str(*values: Any) -> str | None:
    """The first non-blank string, stripped."""
    for value in values:
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def first_dict(*values: Any) -> dict[str, Any]:
    for value in values:
        if isinstance(value, dict):
            return value
    return {}
