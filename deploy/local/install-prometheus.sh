#!/usr/bin/env bash
# Installs Debian's prometheus-alertmanager and prometheus (for promtool) when missing: `correlator alerts` is tested
# against a real Alertmanager, and the worker's alerting rules with promtool. The tests start their own Alertmanager
# instances (own config, storage and port); the packaged services are left stopped.
set -euo pipefail
have() { command -v prometheus-alertmanager >/dev/null && command -v promtool >/dev/null; }
have && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
command -v apt-get >/dev/null || { echo "prometheus: prometheus-alertmanager or promtool is missing and apt-get is not available" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends prometheus-alertmanager prometheus >/dev/null
for service in prometheus-alertmanager prometheus; do
  ( $SUDO systemctl stop "$service" || $SUDO service "$service" stop ) >/dev/null 2>&1 || true
done
have || { echo "prometheus: installing prometheus-alertmanager and prometheus failed" >&2; exit 1; }
