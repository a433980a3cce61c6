# correlator — every target does its own set-up on a fresh machine (virtualenv, dependencies, Kafka jars, redis-server).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
KAFKA_VERSION ?= 3.9.1
PYTEST_ARGS ?=

.PHONY: setup demo test test-unit bench soak lint up down reset clean lab lab-fixtures lab-shipper

setup: $(STAMP) kafka-jars redis-server
	@$(PY) -m compileall -q src >/dev/null  # an editable install is not byte-compiled: every start would compile it

$(STAMP): pyproject.toml setup.py requirements.lock src/correlator/adapters/_write_lines.c
	@command -v $(PYTHON) >/dev/null || { echo "setup: $(PYTHON) is required" >&2; exit 1; }
	@test -x $(PY) || { echo "setup: creating the virtualenv $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "setup: 1/3 upgrading pip"
	@$(PY) -m pip install -q --upgrade pip
	@echo "setup: 2/3 installing the locked dependencies (requirements.lock; a few minutes on a fresh machine)"
	@$(PY) -m pip install -q -r requirements.lock
	@echo "setup: 3/3 installing correlator itself (builds the native block-write reader)"
	@$(PY) -m pip install -q --no-deps -e .
	@touch $@

.PHONY: venv kafka-jars redis-server
venv: $(STAMP)

kafka-jars:
	@KAFKA_VERSION=$(KAFKA_VERSION) bash deploy/local/kafka.sh fetch

redis-server:
	@command -v redis-server >/dev/null || bash deploy/local/install-redis.sh

# The report test shows the HTML report in Debian's chromium (headless).
.PHONY: chromium
chromium:
	@command -v chromium >/dev/null || bash deploy/local/install-chromium.sh

# `correlator alerts` is tested against Debian's Alertmanager, the worker's alerting rules with its promtool.
.PHONY: prometheus
prometheus:
	@command -v prometheus-alertmanager >/dev/null && command -v promtool >/dev/null || bash deploy/local/install-prometheus.sh

demo: setup
	$(PY) -m correlator.demo

# Tests without services spread over the cores (pytest-xdist). The integration tests run two at a time, a file's
# tests together (each xdist process starts its own broker and Redis on free ports; most of their time is waiting on
# timeouts), the slowest named; a test that loads every core (`serial`: a CPU hog) runs alone after them, as its busy
# loops would stretch the timing of the faults beside it. CI keeps to its time budget.
PARALLEL = -n auto --maxprocesses=4
test: setup chromium prometheus
	$(PY) -m pytest -m "not integration" $(PARALLEL) $(PYTEST_ARGS)
	$(PY) -m pytest -m "integration and not serial" -n 2 --dist loadfile --durations=25 $(PYTEST_ARGS)
	$(PY) -m pytest -m "integration and serial" --durations=5 $(PYTEST_ARGS)

test-unit: $(STAMP)
	$(PY) -m pytest -m "not integration" $(PARALLEL) $(PYTEST_ARGS)

# The inner loop: no broker, no browser, no bench, no long property run (the `slow` list in tests/conftest.py); about
# a minute on a 2-core machine. `make test` runs these and the rest.
.PHONY: check
check: $(STAMP)
	$(PY) -m pytest -m "not integration and not slow" $(PARALLEL) $(PYTEST_ARGS)

# The parse benchmark needs nothing; the stream benchmark gets a throwaway broker of its own.
BENCH_KAFKA_PORT ?= 19392
bench: setup
	$(VENV)/bin/correlator bench parse
	@KAFKA_PORT=$(BENCH_KAFKA_PORT) KAFKA_STATE_DIR=.run/bench-kafka bash deploy/local/kafka.sh reset
	@KAFKA_PORT=$(BENCH_KAFKA_PORT) KAFKA_STATE_DIR=.run/bench-kafka bash deploy/local/kafka.sh start
	@status=0; $(VENV)/bin/correlator bench stream --bootstrap-servers 127.0.0.1:$(BENCH_KAFKA_PORT) || status=$$?; \
	  $(VENV)/bin/correlator bench stream --day bad --bootstrap-servers 127.0.0.1:$(BENCH_KAFKA_PORT) || status=$$?; \
	  $(VENV)/bin/correlator bench stream --day real --bootstrap-servers 127.0.0.1:$(BENCH_KAFKA_PORT) || status=$$?; \
	  KAFKA_PORT=$(BENCH_KAFKA_PORT) KAFKA_STATE_DIR=.run/bench-kafka bash deploy/local/kafka.sh stop; exit $$status

# Ten minutes of a steady 20k records/s: is the worker's memory flat while it keeps up?
soak: setup
	@KAFKA_PORT=$(BENCH_KAFKA_PORT) KAFKA_STATE_DIR=.run/bench-kafka bash deploy/local/kafka.sh reset
	@KAFKA_PORT=$(BENCH_KAFKA_PORT) KAFKA_STATE_DIR=.run/bench-kafka bash deploy/local/kafka.sh start
	@status=0; $(VENV)/bin/correlator bench soak --bootstrap-servers 127.0.0.1:$(BENCH_KAFKA_PORT) || status=$$?; \
	  KAFKA_PORT=$(BENCH_KAFKA_PORT) KAFKA_STATE_DIR=.run/bench-kafka bash deploy/local/kafka.sh stop; exit $$status

# The lab: real HDFS and Flink from Maven jars, real faults, every daemon's log shipped live by Debian's rsyslog
# (imfile + omkafka) into a real Kafka, the worker deciding; prints truth against verdict per scenario.
LAB_HADOOP ?= 3.3.6
LAB_FLINK ?= 1.20.1
LAB_SCENARIOS ?=
LAB_SILENT_SHIPPER ?=
LAB_ARGS = --hadoop $(LAB_HADOOP) --flink $(LAB_FLINK) $(foreach s,$(LAB_SCENARIOS),--scenario $(s))
# `make lab LAB_SILENT_SHIPPER=1`: the faulted daemon's shipper stops while its fault lasts (see deploy/lab/live.py)
LIVE_ARGS = $(LAB_ARGS) $(if $(LAB_SILENT_SHIPPER),--silent-shipper)
# `make lab LAB_STORAGE=s3 [LAB_FLINK=2.1.1]`: the object-store scenarios (s3-*), Flink checkpointing to s3://, its
# logs streamed live and the store's access log shipped once the first verdicts are out (see deploy/lab/live_s3.py)
LAB_STORAGE ?= hdfs
LIVE_S3_ARGS = --storage s3 --flink $(LAB_FLINK) $(foreach s,$(LAB_SCENARIOS),--scenario $(s))
lab: setup lab-shipper
	$(PY) deploy/lab/live.py $(if $(filter s3,$(LAB_STORAGE)),$(LIVE_S3_ARGS),$(LIVE_ARGS))

lab-shipper:
	@bash deploy/local/install-shippers.sh

# Re-capture the real logs under tests/data/lab/<hadoop>-<flink>/ (no Kafka; the cluster and faults only). The
# directory-scan scenarios run only when named (minutes of replica fabrication each; LAB_SCAN_REPLICAS, default 3 M):
# `make lab-fixtures LAB_HADOOP=3.2.1 LAB_SCENARIOS="directory-scan directory-scan-harmless"`.
lab-fixtures: setup
	$(PY) deploy/lab/lab.py run $(LAB_ARGS) --fixtures tests/data/lab

# Flink checkpointing to s3:// (flink-s3-fs-hadoop; s3proxy behind the lab's fault proxy, which writes the S3 server
# access log) into tests/data/lab/s3-<flink>/, e.g. `make lab-s3-fixtures LAB_SCENARIOS="s3-throttling s3-control"`.
.PHONY: lab-s3-fixtures
lab-s3-fixtures: setup
	$(PY) deploy/lab/objectstore.py run --flink $(LAB_FLINK) $(foreach s,$(LAB_SCENARIOS),--scenario $(s)) \
		--fixtures tests/data/lab

# The same with Flink's log files in log4j2's JSON template layout (ECS template), into <scenario>-json/, e.g.
# `make lab-fixtures-json LAB_SCENARIOS="slow-disk control"`.
.PHONY: lab-fixtures-json
lab-fixtures-json: setup
	$(PY) deploy/lab/lab.py run $(LAB_ARGS) --flink-layout json --fixtures tests/data/lab

lint: $(STAMP)
	$(VENV)/bin/lint-imports

# The image's install step (deploy/Dockerfile) in a fresh venv: the runtime lock, then correlator without deps; what
# that leaves must hold together (pip check), run, and carry no test tool. 25-70 s with downloads: not in `make test`
# (tests/test_locks.py checks the locks against the installed metadata instead).
IMAGE_VENV := .cache/image-venv
.PHONY: image-install-check
image-install-check:
	@rm -rf $(IMAGE_VENV) && $(PYTHON) -m venv $(IMAGE_VENV)
	$(IMAGE_VENV)/bin/pip install -q -r requirements-runtime.lock
	$(IMAGE_VENV)/bin/pip install -q --no-deps .
	$(IMAGE_VENV)/bin/pip check
	$(IMAGE_VENV)/bin/correlator --help >/dev/null
	@! $(IMAGE_VENV)/bin/python -c "import pytest" 2>/dev/null || { echo "image-install-check: pytest is installed" >&2; exit 1; }
	@echo "image-install-check: $$(du -sh $(IMAGE_VENV) | cut -f1) installed, no test tool"

# The Helm chart, checked with the pinned helm v4 (built by `go install` into .cache: about 3.5 minutes on a fresh
# 2-core machine, so not part of `make test`): lint, render into deploy/helm/rendered.yaml (the test suite checks
# those objects, and that they were rendered from the chart as it is now), then decode every object of that rendering
# and of deploy/k8s strictly into the types of a pinned k8s.io/api (deploy/helm/validate). Commit rendered.yaml.
HELM_VERSION ?= v4.3.2
HELM := .cache/helm-$(HELM_VERSION)/helm
K8S_VALIDATE := .cache/k8s-validate/validate
.PHONY: helm-check
helm-check: $(STAMP) $(HELM) $(K8S_VALIDATE)
	$(HELM) lint --strict deploy/helm/correlator
	$(HELM) lint --strict deploy/helm/correlator --set metrics.podMonitor.enabled=true \
	  --set 'networkPolicy.ingressFrom[0].namespaceSelector.matchLabels.name=monitoring'
	$(HELM) lint --strict deploy/helm/correlator --set slack.enabled=false --set alerts.enabled=false \
	  --set topics.enabled=false --set networkPolicy.enabled=false --set podDisruptionBudget.enabled=false
	$(PY) deploy/render.py $(HELM) --helm-version $(HELM_VERSION) --kustomize-out .cache/k8s-validate/kustomize.yaml
	$(K8S_VALIDATE) deploy/helm/rendered.yaml .cache/k8s-validate/kustomize.yaml

$(HELM):
	@command -v go >/dev/null || { echo "helm-check: Go is required to build helm" >&2; exit 1; }
	@echo "helm-check: building helm $(HELM_VERSION) with go install (minutes the first time)"
	GOBIN=$(abspath $(dir $(HELM))) go install helm.sh/helm/v4/cmd/helm@$(HELM_VERSION)

$(K8S_VALIDATE): deploy/helm/validate/main.go deploy/helm/validate/go.mod deploy/helm/validate/go.sum
	@command -v go >/dev/null || { echo "helm-check: Go is required to build the schema check" >&2; exit 1; }
	cd deploy/helm/validate && go build -o $(abspath $(K8S_VALIDATE)) .

# A local stack that stays up and keeps its data across down/up: Kafka on 9092, Redis (AOF) on 6390, topics applied.
# `make reset` wipes both.
up: setup
	@KAFKA_PORT=9092 bash deploy/local/kafka.sh start
	@REDIS_PORT=6390 REDIS_APPENDONLY=yes bash deploy/local/redis.sh start
	$(VENV)/bin/correlator topics apply --bootstrap-servers 127.0.0.1:9092

down:
	@KAFKA_PORT=9092 bash deploy/local/kafka.sh stop
	@REDIS_PORT=6390 bash deploy/local/redis.sh stop

reset: down
	@KAFKA_PORT=9092 bash deploy/local/kafka.sh reset
	rm -rf .run/redis-6390

clean: down
	rm -rf .run $(VENV)
