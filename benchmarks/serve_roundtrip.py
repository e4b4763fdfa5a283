"""The round trip of ``rigidrot serve`` per control period over loopback, TCP and Unix socket.

    python benchmarks/serve_roundtrip.py                 # 2,000 periods a transport
    python benchmarks/serve_roundtrip.py --steps 20000

Not a test: a measurement, on this machine. A server runs in a subprocess (as
``rigidrot serve RigidRot/Reorient-v0``), a Python client sends STEP frames (the zero
action; a RESET when an episode ends, not timed) and times each STEP until its STEP_RESULT
has arrived (``time.perf_counter_ns``). The same steps of the env in process
(``gym.make``, ``env.step``) are timed too: the difference is what the socket, the framing
and the server's loop add. Prints the median and the 99th percentile, µs, and the CPU model
(``lscpu``).
"""

from __future__ import annotations

import argparse
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import rigidrot_gym  # noqa: F401  (registers the ids)

ROOT = Path(__file__).resolve().parents[1]
ENV_ID = "RigidRot/Reorient-v0"
# Frames of the documented format (docs/training.md, "Flight software in the loop").
RESET, STEP, BYE = 2, 4, 7


def cpu_model() -> str:
    """The CPU's model name as ``lscpu`` gives it (``unknown`` without lscpu)."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return "unknown"
    return next(
        (line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")),
        "unknown",
    )


def _exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data += chunk
    return data


def _frame(sock: socket.socket) -> bytes:
    return _exactly(sock, struct.unpack("<I", _exactly(sock, 4))[0])


def served(steps: int, options: list[str]) -> np.ndarray:
    """Round trips of ``steps`` STEP frames against a server started with ``options``, ns."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "rigidrot_gym.tools.cli", "serve", ENV_ID, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        address = server.stdout.readline().removeprefix("listening on ").strip()
        if "/" in address:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(address)
        else:
            host, port = address.rsplit(":", 1)
            sock = socket.create_connection((host, int(port)))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(60)
        _frame(sock)  # HELLO
        step = struct.pack("<IHH", 16, 1, STEP) + np.zeros(3, "<f4").tobytes()
        times = np.empty(steps, dtype=np.int64)
        done, seed = True, 0
        for k in range(steps):
            if done:
                sock.sendall(struct.pack("<IHHQ", 12, 1, RESET, seed))
                _frame(sock)
                seed += 1
            start = time.perf_counter_ns()
            sock.sendall(step)
            result = _frame(sock)
            times[k] = time.perf_counter_ns() - start
            done = any(result[-2:])
        sock.sendall(struct.pack("<IHH", 4, 1, BYE))
        sock.close()
    finally:
        server.terminate()
        server.wait(60)
    return times


def in_process(steps: int) -> np.ndarray:
    """The same env's ``step`` in this process, ns a call."""
    env = gym.make(ENV_ID)
    action = np.zeros(3, np.float32)
    times = np.empty(steps, dtype=np.int64)
    done, seed = True, 0
    for k in range(steps):
        if done:
            env.reset(seed=seed)
            seed += 1
        start = time.perf_counter_ns()
        _, _, terminated, truncated, _ = env.step(action)
        times[k] = time.perf_counter_ns() - start
        done = terminated or truncated
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=2000, help="periods timed per transport")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        rows = {
            "env.step in process": in_process(args.steps),
            "TCP 127.0.0.1": served(args.steps, ["--port", "0"]),
            "Unix socket": served(args.steps, ["--unix", str(Path(folder) / "rr.sock")]),
        }
    print(f"{ENV_ID}, {args.steps} periods each; CPU: {cpu_model()} ({os.cpu_count()} cores)\n")
    print("| round trip per period | median µs | 99th percentile µs |")
    print("|---|---|---|")
    for name, times in rows.items():
        median, p99 = np.percentile(times / 1e3, [50, 99])
        print(f"| {name} | {median:.1f} | {p99:.1f} |")


if __name__ == "__main__":
    main()
