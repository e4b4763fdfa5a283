"""``rigidrot serve``: the C flight client (examples/flight_client, built with gcc) flies an
episode against a real server, compared bit for bit with the same seed flown in process
(``gym.make``, the same C policy through ctypes); malformed frames, wrong sizes, a second
client, a silent client and a client leaving mid-episode get their ERROR frame within a
bounded wait and the server serves the next client; ``--realtime`` paces the replies; the
command's errors.

The frames here are packed with ``struct`` from the documented format, not with the
server's own encoder, and every wait has a timeout: a hung server fails a test, never
hangs it.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.tools.cli import main

ROOT = Path(__file__).resolve().parents[1]
REORIENT = ROOT / "training" / "agents" / "ppo" / "RigidRot-Reorient-v0_1"
CLIENT = ROOT / "examples" / "flight_client" / "client.c"
GCC = ["gcc", "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-O2"]
# The server's wait for each client frame in these tests, s: short, so that the silent
# client's test is quick; the clients here answer within milliseconds.
TIMEOUT = 1.5
# The most a test waits for any one reply, s: far above a loaded machine's delays, far
# below a hang.
WAIT = 60.0
# Message types and error codes as the docs give them.
HELLO, RESET, OBSERVATION, STEP, STEP_RESULT, ERROR, BYE = range(1, 8)
MALFORMED, VERSION, UNKNOWN_TYPE, WRONG_SIZE, NOT_FINITE, NO_EPISODE, BUSY, TIMED_OUT = range(1, 9)
ENV_ID = "RigidRot/Reorient-v0"


def _gcc() -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")


class Exported:
    """The committed Reorient agent exported into ``folder``: the flight client built
    against it, and its C policy loaded through ctypes for the in-process episode."""

    def __init__(self, folder: Path):
        pytest.importorskip("torch")
        pytest.importorskip("onnx")
        from rigidrot_gym.tools import export

        self.info = export.export(REORIENT, folder)
        self.folder = folder
        self.client = folder / "flight_client"
        for command in (
            [*GCC, "-I", str(folder), str(CLIENT), "policy.c", "-o", str(self.client), "-lm"],
            [*GCC, "-shared", "-fPIC", "policy.c", "-o", "policy.so", "-lm"],
        ):
            built = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=120)
            assert built.returncode == 0, built.stderr
        self.lib = ctypes.CDLL(str(folder / "policy.so"))
        pointer = ctypes.POINTER(ctypes.c_float)
        self.lib.rr_policy.argtypes = [pointer, pointer]
        self.lib.rr_policy.restype = ctypes.c_int

    def policy(self, observation: np.ndarray) -> np.ndarray:
        obs = np.ascontiguousarray(observation, dtype=np.float32)
        action = np.empty(self.info["action_size"], dtype=np.float32)
        pointer = ctypes.POINTER(ctypes.c_float)
        assert self.lib.rr_policy(obs.ctypes.data_as(pointer), action.ctypes.data_as(pointer)) == 0
        return action


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Exported:
    _gcc()
    return Exported(tmp_path_factory.mktemp("export"))


class Served:
    """``rigidrot serve`` in a subprocess; ``address`` is what it printed it listens on."""

    def __init__(self, *options: str):
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        # stderr (the server's log) into a file: a pipe nobody reads could fill and block it.
        self.log = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rigidrot_gym.tools.cli", "serve", *options],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
        )
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(120)  # importing, and compiling the kernels on a cold cache
        if not lines or not lines[0].startswith("listening on "):
            self.process.kill()
            self.process.wait(WAIT)
            self.log.seek(0)
            raise AssertionError(f"the server did not start: {lines} {self.log.read()}")
        self.address = lines[0].removeprefix("listening on ").strip()

    def close(self, ends: bool = False) -> tuple[int, str]:
        """Ends the server, or waits for it to end by itself (``ends``: it is killed only
        after WAIT); its exit status and its log."""
        if not ends:
            self.process.terminate()
        try:
            self.process.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(WAIT)
        self.process.stdout.close()
        self.log.seek(0)
        return self.process.returncode, self.log.read()


@pytest.fixture(scope="module")
def server():
    served = Served(ENV_ID, "--port", "0", "--timeout", str(TIMEOUT))
    yield served
    served.close()


class Client:
    """A raw socket client; frames packed here from the documented format."""

    def __init__(self, address: str):
        if "/" in address:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(WAIT)
            self.sock.connect(address)
        else:
            host, port = address.rsplit(":", 1)
            self.sock = socket.create_connection((host, int(port)), timeout=WAIT)

    def send(self, kind: int, body: bytes = b"", version: int = 1) -> None:
        self.sock.sendall(struct.pack("<IHH", 4 + len(body), version, kind) + body)

    def read(self) -> tuple[int, bytes]:
        """(type, body) of the next frame; (0, b"") if the server closed the connection."""
        head = self._exactly(4)
        if not head:
            return 0, b""
        payload = self._exactly(struct.unpack("<I", head)[0])
        version, kind = struct.unpack_from("<HH", payload)
        assert version == 1
        return kind, payload[4:]

    def _exactly(self, count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                return data
            data += chunk
        return data

    def hello(self) -> tuple[int, int, float, str]:
        kind, body = self.read()
        assert kind == HELLO, body
        n, m, dt, k = struct.unpack_from("<IIdH", body)
        return n, m, dt, body[18 : 18 + k].decode()

    def reset(self, seed: int) -> np.ndarray:
        self.send(RESET, struct.pack("<Q", seed))
        kind, body = self.read()
        assert kind == OBSERVATION, body
        return np.frombuffer(body, dtype="<f4")

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool]:
        self.send(STEP, np.asarray(action, dtype="<f4").tobytes())
        kind, body = self.read()
        assert kind == STEP_RESULT, body
        reward, terminated, truncated = struct.unpack_from("<dBB", body, len(body) - 10)
        return np.frombuffer(body[:-10], dtype="<f4"), reward, bool(terminated), bool(truncated)

    def error(self) -> tuple[int, str]:
        """The ERROR frame expected next, then the server closing the connection."""
        kind, body = self.read()
        assert kind == ERROR, (kind, body)
        (code,) = struct.unpack_from("<H", body)
        assert self.read() == (0, b"")  # closed after it
        return code, body[2:].decode()

    def close(self) -> None:
        self.sock.close()


def _in_process_reset(seed: int) -> np.ndarray:
    obs, _ = gym.make(ENV_ID).reset(seed=seed)
    return obs


def _serves(address: str, seed: int = 3) -> None:
    """The server takes a new client and resets its env as the in-process env does."""
    client = Client(address)
    try:
        assert client.hello() == (7, 3, 0.2, ENV_ID)
        assert client.reset(seed).tobytes() == _in_process_reset(seed).tobytes()
        client.send(BYE)
        assert client.read() == (0, b"")
    finally:
        client.close()


def _parse(line: str) -> dict[str, list[float]]:
    """A client line's fields: each name with the values after it (hex floats and ints)."""
    fields: dict[str, list[float]] = {}
    name = None
    for word in line.split()[2:]:
        if word[0].isalpha():
            name, fields[word] = word, []
        else:
            fields[name].append(float.fromhex(word) if "x" in word else int(word))
    return fields


def _f32(values: list[float]) -> bytes:
    return np.asarray(values, dtype=np.float32).tobytes()


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_the_c_client_flies_the_in_process_episode_bit_for_bit(exported, transport, tmp_path):
    seed = 2026
    where = ["--port", "0"] if transport == "tcp" else ["--unix", str(tmp_path / "rr.sock")]
    served = Served(str(exported.folder / "policy.json"), *where, "--max-episodes", "1")
    flown = subprocess.run(
        [str(exported.client), served.address, str(seed)], capture_output=True, text=True, timeout=WAIT
    )
    status, log = served.close(ends=True)
    assert flown.returncode == 0, flown.stderr + log
    assert status == 0, log  # the server ended by itself after its one episode
    assert "served 1 episodes" in log
    lines = flown.stdout.splitlines()
    # The same seed and the same C policy in process, through gym.make.
    env = gym.make(exported.info["env"], **exported.info["env_kwargs"])
    obs, _ = env.reset(seed=seed)
    assert lines[0].split()[:2] == ["reset", str(seed)]
    assert _f32(_parse(lines[0])["obs"]) == obs.tobytes()
    for k, line in enumerate(lines[1:], start=1):
        fields = _parse(line)
        action = exported.policy(obs)
        assert _f32(fields["action"]) == action.tobytes(), k
        obs, reward, terminated, truncated, _ = env.step(action)
        assert _f32(fields["obs"]) == obs.tobytes(), k
        assert fields["reward"][0].hex() == float(reward).hex(), k
        assert (fields["terminated"][0], fields["truncated"][0]) == (terminated, truncated), k
        assert (terminated or truncated) == (k == len(lines) - 1), k
    assert len(lines) > 10
    print(
        f"{transport}: {len(lines) - 1} periods, terminated {terminated}, truncated {truncated}, bit for bit"
    )


def test_a_python_client_flies_steps_as_the_in_process_env(server):
    client = Client(server.address)
    env = gym.make(ENV_ID)
    try:
        assert client.hello() == (7, 3, 0.2, ENV_ID)
        obs, _ = env.reset(seed=11)
        assert client.reset(11).tobytes() == obs.tobytes()
        rng = np.random.default_rng(0)
        for _ in range(5):
            action = rng.uniform(-1.2, 1.2, 3).astype(np.float32)  # beyond the bounds: clipped
            got, reward, terminated, truncated = client.step(action)
            obs, expected, term, trunc, _ = env.step(action)
            assert got.tobytes() == obs.tobytes()
            assert reward.hex() == float(expected).hex() and (terminated, truncated) == (term, trunc)
    finally:
        client.close()


@pytest.mark.parametrize(
    ("frame", "code", "says"),
    [
        (struct.pack("<I", 2), MALFORMED, "frame length 2: expected 4 to 65536"),
        (struct.pack("<I", 1 << 30), MALFORMED, "frame length 1073741824"),
        (struct.pack("<IHHQ", 12, 2, RESET, 1), VERSION, "protocol version 2: expected 1"),
        (
            struct.pack("<IHH", 4, 1, 99),
            UNKNOWN_TYPE,
            "message type 99: expected RESET (2), STEP (4), BYE (7)",
        ),
        (struct.pack("<IHHI", 8, 1, RESET, 1), WRONG_SIZE, "RESET with 4 bytes after its type: expected 8"),
        (struct.pack("<IHH", 4, 1, STEP), WRONG_SIZE, "STEP with 0 bytes after its type: expected 3 actions"),
    ],
    ids=["short-length", "huge-length", "version", "type", "reset-size", "empty-step"],
)
def test_a_malformed_frame_gets_an_error_naming_what_was_expected(server, frame, code, says):
    client = Client(server.address)
    try:
        client.hello()
        client.sock.sendall(frame)
        got, message = client.error()
        assert got == code and says in message, message
    finally:
        client.close()
    _serves(server.address)


@pytest.mark.parametrize(
    ("action", "code", "says"),
    [
        (
            np.zeros(2, np.float32),
            WRONG_SIZE,
            "STEP with 8 bytes after its type: expected 3 actions, 12 bytes",
        ),
        (np.zeros(4, np.float32), WRONG_SIZE, "expected 3 actions"),
        (np.array([0.0, np.nan, 0.0], np.float32), NOT_FINITE, "expected 3 finite float32 values"),
        (np.array([np.inf, 0.0, 0.0], np.float32), NOT_FINITE, "expected 3 finite float32 values"),
    ],
    ids=["two-actions", "four-actions", "nan", "inf"],
)
def test_a_wrong_action_gets_an_error_and_the_server_serves_on(server, action, code, says):
    client = Client(server.address)
    try:
        client.hello()
        client.reset(5)
        client.send(STEP, action.astype("<f4").tobytes())
        got, message = client.error()
        assert got == code and says in message, message
    finally:
        client.close()
    _serves(server.address)


def test_a_step_before_a_reset_is_refused(server):
    client = Client(server.address)
    try:
        client.hello()
        client.send(STEP, np.zeros(3, "<f4").tobytes())
        code, message = client.error()
        assert code == NO_EPISODE and "expected RESET first" in message
    finally:
        client.close()
    _serves(server.address)


def test_a_step_after_the_episode_ended_is_refused_and_a_reset_starts_another(server):
    client, env = Client(server.address), gym.make(ENV_ID)
    try:
        client.hello()
        client.reset(9)
        env.reset(seed=9)
        done, steps = False, 0
        while not done:
            _, _, terminated, truncated = client.step(np.zeros(3, np.float32))
            _, _, term, trunc, _ = env.step(np.zeros(3, np.float32))
            assert (terminated, truncated) == (term, trunc)
            done, steps = terminated or truncated, steps + 1
        assert steps <= env.spec.max_episode_steps
        assert client.reset(10).tobytes() == _in_process_reset(10).tobytes()
        _, _, terminated, truncated = client.step(np.zeros(3, np.float32))
        while not (terminated or truncated):
            _, _, terminated, truncated = client.step(np.zeros(3, np.float32))
        client.send(STEP, np.zeros(3, "<f4").tobytes())
        code, message = client.error()
        assert code == NO_EPISODE and "expected RESET first" in message
    finally:
        client.close()
    _serves(server.address)


def test_a_second_client_is_refused_while_the_first_flies_on(server):
    first, env = Client(server.address), gym.make(ENV_ID)
    try:
        first.hello()
        obs, _ = env.reset(seed=8)
        assert first.reset(8).tobytes() == obs.tobytes()
        second = Client(server.address)
        try:
            code, message = second.error()  # no HELLO: refused at once
            assert code == BUSY and "busy" in message
        finally:
            second.close()
        action = np.array([0.3, -0.2, 0.1], np.float32)
        got, reward, _, _ = first.step(action)
        obs, expected, _, _, _ = env.step(action)
        assert got.tobytes() == obs.tobytes() and reward == expected
        first.send(BYE)
        assert first.read() == (0, b"")
    finally:
        first.close()
    _serves(server.address)


@pytest.mark.parametrize("after", ["hello", "reset", "half-frame"])
def test_a_client_that_stops_talking_is_dropped_after_the_timeout(server, after):
    client = Client(server.address)
    try:
        client.hello()
        if after != "hello":
            client.reset(4)
        if after == "half-frame":
            client.sock.sendall(struct.pack("<IHH", 16, 1, STEP))  # 4 of its 16 bytes
        start = time.monotonic()
        code, message = client.error()
        waited = time.monotonic() - start
    finally:
        client.close()
    if after == "half-frame":
        assert code == MALFORMED and "frame incomplete: 4 of 16 bytes before the timeout" in message
    else:
        assert code == TIMED_OUT and f"no frame within {TIMEOUT:g} s" in message
    # Not a timing test: only that the drop came from the timeout (not earlier) and did
    # come (the read's own WAIT would have failed the test otherwise).
    assert waited >= TIMEOUT * 0.9
    _serves(server.address)


@pytest.mark.parametrize("when", ["before-reset", "mid-episode", "mid-frame"])
def test_a_client_leaving_is_survived(server, when):
    client = Client(server.address)
    client.hello()
    if when != "before-reset":
        client.reset(6)
        client.step(np.zeros(3, np.float32))
    if when == "mid-frame":
        client.sock.sendall(struct.pack("<IHH", 16, 1, STEP) + b"\0\0")
    client.close()
    _serves(server.address)


def test_realtime_paces_each_reply_to_the_control_period():
    from rigidrot_gym.tools.serve import Server, listen

    dt, steps = 0.05, 12
    env = gym.make(ENV_ID, dt=dt)
    lines: list[str] = []
    server = Server(env, ENV_ID, listen(0), timeout=WAIT, realtime=True, log=lines.append)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        client = Client(f"127.0.0.1:{server.sock.getsockname()[1]}")
        client.hello()
        client.reset(1)
        start = time.perf_counter()
        for k in range(1, steps + 1):
            client.step(np.zeros(3, np.float32))
            # The reply of step k is not sent before its boundary, k dt after the reset's.
            assert time.perf_counter() - start >= k * dt - 1e-3, k
        client.send(BYE)
        client.close()
    finally:
        server.stop()
        thread.join(WAIT)
        server.sock.close()
    assert not thread.is_alive()
    assert len(server.jitter.late) == steps and all(late >= 0 for late in server.jitter.late)
    assert f"{steps} periods, jitter max" in lines[-1] and "RMS" in lines[-1], lines
    print(lines[-1])


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["RigidRot/Nope-v0", "--port", "0"], "RigidRot/Nope-v0: not a registered env id"),
        ([ENV_ID, "--port", "70000"], "--port 70000: expected a TCP port 0 ... 65535"),
        ([ENV_ID, "--port", "0", "--timeout", "0"], "--timeout 0.0: expected seconds > 0"),
        ([ENV_ID, "--port", "0", "--timeout", "nan"], "--timeout nan: expected seconds > 0"),
        ([ENV_ID, "--port", "0", "--max-episodes", "0"], "--max-episodes 0: expected a whole number >= 1"),
        (["missing/policy.json", "--port", "0"], "missing/policy.json: no such file"),
    ],
    ids=["unknown-id", "bad-port", "zero-timeout", "nan-timeout", "zero-episodes", "no-policy-json"],
)
def test_bad_arguments_are_errors_naming_them(capsys, argv, says):
    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rigidrot: error: ") and says in err, err


def test_a_json_that_is_not_a_policy_json_is_an_error(capsys, tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"env": "RigidRot/Reorient-v0"}')
    assert main(["serve", str(other), "--port", "0"]) == 2
    assert f"{other}: no observation_size, action_size; expected" in capsys.readouterr().err
    other.write_text("not json")
    assert main(["serve", str(other), "--port", "0"]) == 2
    assert capsys.readouterr().err.startswith("rigidrot: error: ")


def test_a_unix_path_that_exists_or_a_port_in_use_is_an_error(capsys, tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("")
    assert main(["serve", ENV_ID, "--unix", str(taken)]) == 2
    assert f"--unix {taken}: the path exists" in capsys.readouterr().err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert main(["serve", ENV_ID, "--port", str(port)]) == 2
        assert f"cannot listen on ('127.0.0.1', {port})" in capsys.readouterr().err
