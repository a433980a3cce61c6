"""Renders the two Kubernetes deployments of correlator for checking: ``deploy/k8s`` (kustomize) and the Helm chart
``deploy/helm/correlator``.

``make helm-check`` runs it with the pinned helm: the chart's default rendering is written to
``deploy/helm/rendered.yaml``, headed by a digest of the chart's files, so the test suite (which has no helm) reads
the chart's real output and notices when the chart changed after it was rendered; the kustomize rendering goes to
the file named by ``--kustomize-out`` for the API-schema check. The test suite imports ``kustomize`` and
``chart_digest`` from here.

    python deploy/render.py HELM [--helm-version V] [--kustomize-out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

DEPLOY = Path(__file__).resolve().parent
K8S = DEPLOY / "k8s"
CHART = DEPLOY / "helm" / "correlator"
RENDERED = DEPLOY / "helm" / "rendered.yaml"
RELEASE = "correlator"
NAMESPACE = "correlator"
DIGEST_PREFIX = "# chart digest: "


def chart_digest(chart: Path = CHART) -> str:
    """SHA-256 over the chart's files (relative path and content, in path order)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in chart.rglob("*") if p.is_file()):
        digest.update(path.relative_to(chart).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def kustomize(directory: Path = K8S) -> list[dict[str, Any]]:
    """What ``kubectl kustomize`` makes of the directory, for the features its kustomization.yaml uses: the listed
    resources, ``labels`` (added to each object's metadata only) and ``images`` (name -> newName:newTag)."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text(encoding="utf-8"))
    unknown = set(kustomization) - {"apiVersion", "kind", "labels", "resources", "images"}
    if unknown:
        raise ValueError(f"kustomization.yaml uses {sorted(unknown)}: teach deploy/render.py, or use kubectl kustomize")
    labels: dict[str, str] = {}
    for entry in kustomization.get("labels", []):
        if entry.get("includeSelectors") or entry.get("includeTemplates"):
            raise ValueError("labels with includeSelectors/includeTemplates: not rendered here")
        labels |= entry["pairs"]
    images = {i["name"]: f"{i.get('newName', i['name'])}:{i['newTag']}" for i in kustomization.get("images", [])}
    docs = []
    for name in kustomization["resources"]:
        for doc in yaml.safe_load_all((directory / name).read_text(encoding="utf-8")):
            if not doc:
                continue
            doc["metadata"].setdefault("labels", {}).update(labels)
            pod = doc.get("spec", {}).get("template", {}).get("spec", {})
            for container in pod.get("containers", []) + pod.get("initContainers", []):
                container["image"] = images.get(container["image"], container["image"])
            docs.append(doc)
    return docs


def read_rendered(path: Path = RENDERED) -> tuple[str, list[dict[str, Any]]]:
    """The chart digest the file was rendered from, and its objects."""
    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[0]
    if not first.startswith(DIGEST_PREFIX):
        raise ValueError(f"{path.name} does not start with its chart digest")
    return first.removeprefix(DIGEST_PREFIX).strip(), [d for d in yaml.safe_load_all(text) if d]


def helm_template(helm: str, *values: str) -> str:
    done = subprocess.run([helm, "template", RELEASE, str(CHART), "--namespace", NAMESPACE, *values],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"helm template failed:\n{done.stderr}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("helm", help="the helm binary")
    parser.add_argument("--helm-version", help="the version it was built as (a `go install` build reports only "
                        "major.minor)")
    parser.add_argument("--kustomize-out", type=Path, help="also write deploy/k8s as kustomize renders it here")
    args = parser.parse_args()
    version = args.helm_version or subprocess.run([args.helm, "version", "--short"], capture_output=True, text=True,
                                                  check=True).stdout
    rendered = helm_template(args.helm)
    RENDERED.write_text(
        f"{DIGEST_PREFIX}{chart_digest()}\n"
        f"# `helm template {RELEASE} deploy/helm/correlator --namespace {NAMESPACE}` by helm {version.strip()},\n"
        "# written by `make helm-check` (deploy/render.py); the test suite checks these objects. Do not edit.\n"
        + rendered, encoding="utf-8")
    print(f"render: {RENDERED.relative_to(DEPLOY.parent)} ({rendered.count(chr(10) + 'kind: ')} objects)")
    if args.kustomize_out:
        args.kustomize_out.parent.mkdir(parents=True, exist_ok=True)
        args.kustomize_out.write_text(yaml.safe_dump_all(kustomize(), sort_keys=False), encoding="utf-8")


if __name__ == "__main__":
    main()
