#!/usr/bin/env bash
# A real single-node Apache Kafka (KRaft, combined broker+controller) on loopback, from jars Maven resolves.
#
#   kafka.sh fetch            resolve the broker jars into .cache/kafka-<version>/libs
#   kafka.sh start            start the broker (formatting the storage dir only when it holds no data yet: topics,
#                             offsets and records survive a stop/start); returns when a metadata request succeeds
#   kafka.sh stop             controlled shutdown (SIGTERM), SIGKILL after a grace period
#   kafka.sh reset            wipe the state dir of a stopped broker (the next start formats a new cluster)
#   kafka.sh status           exit 0 when the broker of STATE_DIR is running
#
# Environment: KAFKA_VERSION (3.9.1; 4.x selects the log4j2 backend), KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT
# (KAFKA_PORT+1), KAFKA_STATE_DIR (.run/kafka-<port>), KAFKA_HEAP (-Xms256m -Xmx512m), KAFKA_START_TIMEOUT (60 s),
# PYTHON (used for the metadata check when it has confluent_kafka), KAFKA_MVN_OPTS (extra Maven flags),
# KAFKA_SERVER_EXTRA (more server.properties lines, appended: later keys win).
# KAFKA_SCRAM_USER / KAFKA_SCRAM_PASSWORD: the client port speaks SASL_PLAINTEXT with SCRAM-SHA-256 for that user
# (created at format time); the broker talks to itself on a PLAINTEXT listener at KAFKA_PORT+2.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KAFKA_VERSION="${KAFKA_VERSION:-3.9.1}"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-$((KAFKA_PORT + 1))}"
KAFKA_STATE_DIR="${KAFKA_STATE_DIR:-$ROOT/.run/kafka-$KAFKA_PORT}"
KAFKA_HEAP="${KAFKA_HEAP:--Xms256m -Xmx512m}"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-60}"
KAFKA_SCRAM_USER="${KAFKA_SCRAM_USER:-}"
KAFKA_INTERNAL_PORT=$((KAFKA_PORT + 2))
CACHE="$ROOT/.cache"
LIBS="$CACHE/kafka-$KAFKA_VERSION/libs"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"

die() { echo "kafka: $*" >&2; exit 1; }

major() { echo "${KAFKA_VERSION%%.*}"; }

fetch() {
  [ -f "$LIBS/.complete" ] && return 0
  command -v mvn >/dev/null || die "Maven (mvn) is not installed; it resolves the broker jars from Maven Central"
  local profile=() log
  [ "$(major)" -ge 4 ] && profile=(-Dkafka4)
  rm -rf "$LIBS"
  log="$CACHE/mvn-kafka-$KAFKA_VERSION.log"
  echo "kafka: resolving the Apache Kafka $KAFKA_VERSION broker jars from Maven Central (once; about a minute)"
  mkdir -p "$CACHE"
  # shellcheck disable=SC2086  # KAFKA_MVN_OPTS is a list of flags (e.g. -o for offline)
  if ! mvn -B -q ${KAFKA_MVN_OPTS:-} -f "$ROOT/deploy/local/pom.xml" "${profile[@]}" \
      -Dkafka.version="$KAFKA_VERSION" -Dmaven.repo.local="$CACHE/m2" \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIBS" >"$log" 2>&1; then
    die "Maven could not resolve org.apache.kafka:kafka_2.13:$KAFKA_VERSION (offline? see $log): $(grep -m1 ERROR "$log" || true)"
  fi
  touch "$LIBS/.complete"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pid_alive() { [ -f "$KAFKA_STATE_DIR/kafka.pid" ] && kill -0 "$(cat "$KAFKA_STATE_DIR/kafka.pid")" 2>/dev/null; }

write_config() {
  mkdir -p "$KAFKA_STATE_DIR"
  cat >"$KAFKA_STATE_DIR/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_STATE_DIR/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
log.flush.interval.messages=9223372036854775807
PROPS
  if [ -n "$KAFKA_SCRAM_USER" ]; then
    # Later keys win in java.util.Properties: these replace the plaintext listeners above.
    cat >>"$KAFKA_STATE_DIR/server.properties" <<SCRAM
listeners=CLIENT://127.0.0.1:$KAFKA_PORT,INTERNAL://127.0.0.1:$KAFKA_INTERNAL_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=CLIENT://127.0.0.1:$KAFKA_PORT,INTERNAL://127.0.0.1:$KAFKA_INTERNAL_PORT
inter.broker.listener.name=INTERNAL
listener.security.protocol.map=CLIENT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT
sasl.enabled.mechanisms=SCRAM-SHA-256
listener.name.client.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
SCRAM
  fi
  if [ -n "${KAFKA_SERVER_EXTRA:-}" ]; then printf '%s\n' "$KAFKA_SERVER_EXTRA" >>"$KAFKA_STATE_DIR/server.properties"; fi
  if [ "$(major)" -ge 4 ]; then
    cat >"$KAFKA_STATE_DIR/log4j2.properties" <<'PROPS'
appender.file.type=File
appender.file.name=FILE
appender.file.fileName=${sys:kafka.logs.dir}/server.log
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=INFO
rootLogger.appenderRef.file.ref=FILE
PROPS
  else
    cat >"$KAFKA_STATE_DIR/log4j.properties" <<'PROPS'
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=${kafka.logs.dir}/server.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
PROPS
  fi
}

java_logging_opt() {
  if [ "$(major)" -ge 4 ]; then echo "-Dlog4j2.configurationFile=$KAFKA_STATE_DIR/log4j2.properties"
  else echo "-Dlog4j.configuration=file:$KAFKA_STATE_DIR/log4j.properties"; fi
}

metadata_ok() {
  if "$PYTHON" -c 'import confluent_kafka' 2>/dev/null; then
    local port="$KAFKA_PORT"
    [ -n "$KAFKA_SCRAM_USER" ] && port="$KAFKA_INTERNAL_PORT"
    "$PYTHON" - "$port" <<'PY' 2>/dev/null
import sys
from confluent_kafka.admin import AdminClient
md = AdminClient({"bootstrap.servers": f"127.0.0.1:{sys.argv[1]}"}).list_topics(timeout=2)
sys.exit(0 if md.brokers else 1)
PY
  else
    grep -q "Kafka Server started" "$KAFKA_STATE_DIR/logs/server.log" 2>/dev/null
  fi
}

format() {
  local cluster_id
  cluster_id="$("$@" kafka.tools.StorageTool random-uuid 2>"$KAFKA_STATE_DIR/logs/format.err" | tail -n1)" \
    || die "could not run the storage tool: $(tail -n1 "$KAFKA_STATE_DIR/logs/format.err")"
  local scram=()
  [ -n "$KAFKA_SCRAM_USER" ] && scram=(--add-scram "SCRAM-SHA-256=[name=$KAFKA_SCRAM_USER,password=$KAFKA_SCRAM_PASSWORD]")
  "$@" kafka.tools.StorageTool format -t "$cluster_id" -c "$KAFKA_STATE_DIR/server.properties" "${scram[@]}" \
    >"$KAFKA_STATE_DIR/logs/format.log" 2>&1 || die "formatting KRaft storage failed: $(tail -n1 "$KAFKA_STATE_DIR/logs/format.log")"
}

reset() {
  pid_alive && die "a broker runs from $KAFKA_STATE_DIR (pid $(cat "$KAFKA_STATE_DIR/kafka.pid")): stop it first"
  rm -rf "$KAFKA_STATE_DIR"
  echo "kafka state in $KAFKA_STATE_DIR wiped"
}

start() {
  command -v java >/dev/null || die "Java is not installed (JDK 17 runs the broker)"
  pid_alive && die "a broker already runs from $KAFKA_STATE_DIR (pid $(cat "$KAFKA_STATE_DIR/kafka.pid"))"
  port_in_use "$KAFKA_PORT" && die "port $KAFKA_PORT on 127.0.0.1 is already in use"
  port_in_use "$KAFKA_CONTROLLER_PORT" && die "controller port $KAFKA_CONTROLLER_PORT on 127.0.0.1 is already in use"
  if [ -n "$KAFKA_SCRAM_USER" ]; then
    [ -n "${KAFKA_SCRAM_PASSWORD:-}" ] || die "KAFKA_SCRAM_USER is set but KAFKA_SCRAM_PASSWORD is empty"
    port_in_use "$KAFKA_INTERNAL_PORT" && die "internal port $KAFKA_INTERNAL_PORT on 127.0.0.1 is already in use"
  fi
  fetch
  write_config
  mkdir -p "$KAFKA_STATE_DIR/logs"
  local jvm=(java $KAFKA_HEAP -XX:+UseG1GC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true
             "-Dkafka.logs.dir=$KAFKA_STATE_DIR/logs" "$(java_logging_opt)" -cp "$LIBS/*")
  [ -f "$KAFKA_STATE_DIR/data/meta.properties" ] || format "${jvm[@]}"
  nohup "${jvm[@]}" kafka.Kafka "$KAFKA_STATE_DIR/server.properties" \
    >"$KAFKA_STATE_DIR/logs/stdout.log" 2>&1 </dev/null &
  echo $! >"$KAFKA_STATE_DIR/kafka.pid"
  local deadline=$((SECONDS + KAFKA_START_TIMEOUT))
  until metadata_ok; do
    if ! pid_alive; then
      local why
      why="$(grep -m1 -E 'ERROR|Exception' "$KAFKA_STATE_DIR/logs/server.log" "$KAFKA_STATE_DIR/logs/stdout.log" 2>/dev/null | head -n1 | cut -c1-200)"
      rm -f "$KAFKA_STATE_DIR/kafka.pid"
      die "the broker exited during start-up: ${why:-see $KAFKA_STATE_DIR/logs}"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      stop >/dev/null 2>&1 || true
      die "the broker did not answer a metadata request within ${KAFKA_START_TIMEOUT}s (logs: $KAFKA_STATE_DIR/logs)"
    fi
    sleep 0.5
  done
  echo "kafka $KAFKA_VERSION ready on 127.0.0.1:$KAFKA_PORT (pid $(cat "$KAFKA_STATE_DIR/kafka.pid"))"
}

stop() {
  pid_alive || { rm -f "$KAFKA_STATE_DIR/kafka.pid"; return 0; }
  local pid
  pid="$(cat "$KAFKA_STATE_DIR/kafka.pid")"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$KAFKA_STATE_DIR/kafka.pid"
  echo "kafka on 127.0.0.1:$KAFKA_PORT stopped"
}

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  reset) reset ;;
  status) pid_alive ;;
  *) echo "usage: $0 fetch|start|stop|reset|status" >&2; exit 2 ;;
esac
