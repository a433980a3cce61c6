#!/usr/bin/env bash
# A redis-server on loopback: throwaway (no persistence) for tests and the demo, or with an append-only file.
#
#   redis.sh start | stop | status     Environment: REDIS_PORT (6390), REDIS_STATE_DIR (.run/redis-<port>),
#                                      REDIS_APPENDONLY (no; yes keeps the data in STATE_DIR across restarts)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
REDIS_PORT="${REDIS_PORT:-6390}"
REDIS_STATE_DIR="${REDIS_STATE_DIR:-$ROOT/.run/redis-$REDIS_PORT}"
REDIS_APPENDONLY="${REDIS_APPENDONLY:-no}"
PIDFILE="$REDIS_STATE_DIR/redis.pid"

die() { echo "redis: $*" >&2; exit 1; }
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pid_alive() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

start() {
  command -v redis-server >/dev/null || die "redis-server is not installed (Debian package redis-server)"
  pid_alive && die "a redis-server already runs from $REDIS_STATE_DIR"
  port_in_use "$REDIS_PORT" && die "port $REDIS_PORT on 127.0.0.1 is already in use"
  mkdir -p "$REDIS_STATE_DIR"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly "$REDIS_APPENDONLY" --appendfsync everysec --daemonize yes \
    --pidfile "$PIDFILE" --dir "$REDIS_STATE_DIR" --logfile "$REDIS_STATE_DIR/redis.log" \
    || die "redis-server refused to start: $(tail -n1 "$REDIS_STATE_DIR/redis.log" 2>/dev/null)"
  for _ in $(seq 1 200); do
    if [ "$(redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = "PONG" ]; then
      echo "redis ready on 127.0.0.1:$REDIS_PORT"; return 0
    fi
    sleep 0.05
  done
  stop >/dev/null 2>&1 || true
  die "redis-server on port $REDIS_PORT did not answer PING within 10s"
}

stop() {
  pid_alive || { rm -f "$PIDFILE"; return 0; }
  local pid; pid="$(cat "$PIDFILE")"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$PIDFILE"
  echo "redis on 127.0.0.1:$REDIS_PORT stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) pid_alive ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
