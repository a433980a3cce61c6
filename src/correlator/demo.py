"""``make demo``: the whole live path on this machine, end to end, then everything stopped again.

Kafka (KRaft, loopback) and Redis up, topics applied, the worker started, the bundled incident (the seed scenario:
Flink 1.7 on Hadoop 3.1, a DirectoryScanner holding the DataNode's dataset lock) replayed into the raw topics, and each
verdict printed as it arrives. Exit 0 once the expected verdict is in; 1 with a one-line reason otherwise.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

from correlator.core.explain.causes import Code

EXPECTED_CODE = Code.HDFS_DIRECTORY_SCAN
ROOT = Path.cwd()
LOCAL = ROOT / "deploy" / "local"
CLI = [sys.executable, "-m", "correlator.cli"]


class DemoFailed(RuntimeError):
    pass


def free_port(span: int = 1) -> int:
    """A loopback port whose ``span - 1`` successors are free too (Kafka's controller port sits next to it)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
        if port + span < 65535 and all(_free(port + i) for i in range(span)):
            return port
    raise DemoFailed("no free loopback port")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def say(text: str) -> None:
    print(f"demo: {text}", flush=True)


def script(name: str, action: str, env: dict[str, str]) -> None:
    done = subprocess.run(["bash", str(LOCAL / name), action], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise DemoFailed(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"{name} {action} failed")
    if done.stdout.strip():
        say(done.stdout.strip().splitlines()[-1])


def run(stack: ExitStack, workdir: Path) -> None:
    kafka_port, redis_port, web_port = free_port(2), free_port(), free_port()
    services = {
        **os.environ,
        "PYTHON": sys.executable,
        "KAFKA_PORT": str(kafka_port),
        "KAFKA_STATE_DIR": str(workdir / "kafka"),
        "REDIS_PORT": str(redis_port),
        "REDIS_STATE_DIR": str(workdir / "redis"),
    }
    script("kafka.sh", "start", services)
    stack.callback(_quietly, script, "kafka.sh", "stop", services)
    script("redis.sh", "start", services)
    stack.callback(_quietly, script, "redis.sh", "stop", services)

    env = {
        **os.environ,
        "CORRELATOR_BOOTSTRAP_SERVERS": f"127.0.0.1:{kafka_port}",
        "CORRELATOR_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "CORRELATOR_WORKER_ID": f"correlator-demo-{uuid.uuid4().hex[:6]}",
        "CORRELATOR_WEB_PORT": str(web_port),
        "CORRELATOR_DATA_DIR": str(workdir / "worker"),
        # The replay ends abruptly; let silent sources stop holding decisions back after a few seconds.
        "CORRELATOR_IDLE_TIMEOUT_MS": "5000",
        "CORRELATOR_LOG_LEVEL": "WARNING",
    }

    def cli(*args: str) -> str:
        done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines()
            raise DemoFailed(f"correlator {args[0]}: {lines[-1] if lines else f'exit {done.returncode}'}")
        return done.stdout + done.stderr

    say(cli("topics", "apply").strip().splitlines()[-1])
    logs = workdir / "logs"
    cli("simulate", "seed", "--out", str(logs))
    say(f"the bundled incident's logs written (to a temporary directory, removed at the end): "
        + ", ".join(sorted(p.name for p in logs.rglob("*.log"))))

    worker_log = stack.enter_context((workdir / "worker.log").open("wb"))
    worker = subprocess.Popen([*CLI, "worker"], env=env, stdout=worker_log, stderr=worker_log)
    stack.callback(_stop, worker, "worker")
    _wait_ready(worker, web_port, workdir / "worker.log")
    say("worker ready; replaying the incident into the raw topics")
    say(cli("replay", str(logs)).strip().splitlines()[-1])

    say("waiting for verdicts (they are decided once every source is past the failure's lookahead or idle)")
    reader = subprocess.Popen(
        [*CLI, "verdicts", "--from-beginning", "--follow"], env=env, stdout=subprocess.PIPE, text=True
    )
    stack.callback(_stop, reader, "verdict reader")
    _await_expected(reader)


def _await_expected(reader: subprocess.Popen[str], timeout_s: float = 90) -> None:
    """Echo the reader's output until the expected verdict has been printed in full."""
    import queue
    import threading

    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert reader.stdout is not None
        for line in reader.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout_s
    seen = False
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=2.0 if seen else 0.5)
        except queue.Empty:
            if seen:  # the verdict's text is complete once the reader pauses
                say(f"the expected verdict ({EXPECTED_CODE}) arrived")
                return
            continue
        if line is None:
            raise DemoFailed("the verdict reader exited early")
        print(line, end="", flush=True)
        seen = seen or EXPECTED_CODE in line
    raise DemoFailed(f"no {EXPECTED_CODE} verdict within {timeout_s:.0f} s")


def _wait_ready(worker: subprocess.Popen[bytes], port: int, log: Path, timeout_s: float = 90) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            lines = log.read_text(errors="replace").strip().splitlines() if log.exists() else []
            raise DemoFailed(f"the worker exited during start-up: {lines[-1] if lines else 'no output'}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise DemoFailed(f"the worker was not ready within {timeout_s:.0f} s")


def _quietly(step: object, *args: object) -> None:
    """A clean-up step that fails is reported in one line; the other clean-up steps still run."""
    try:
        step(*args)  # type: ignore[operator]
    except DemoFailed as exc:
        print(f"demo: clean-up: {exc}", file=sys.stderr)


def _stop(process: subprocess.Popen[bytes] | subprocess.Popen[str], name: str) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    say(f"{name} (pid {process.pid}) stopped")


def main() -> int:
    started = time.monotonic()
    if not (LOCAL / "kafka.sh").exists():
        print("demo: run from the repository root (deploy/local/kafka.sh not found)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="correlator-demo-") as tmp, ExitStack() as stack:
        try:
            run(stack, Path(tmp))
        except DemoFailed as exc:
            print(f"demo: failed: {exc}", file=sys.stderr)
            stack.close()
            return 1
        except KeyboardInterrupt:
            return 130
        stack.close()
    say(f"done in {time.monotonic() - started:.0f} s; everything it started is stopped")
    say("next, in this directory: source .venv/bin/activate (or prefix each command with .venv/bin/), then "
        "correlator simulate seed --out seed-logs && correlator analyze seed-logs --format text")
    return 0


if __name__ == "__main__":
    sys.exit(main())
