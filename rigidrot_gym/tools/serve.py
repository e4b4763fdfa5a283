"""``rigidrot serve``: a lockstep server that flight software drives, one period a frame.

The server holds one env (``gym.make``) and answers a client's frames
(:mod:`rigidrot_gym.tools.flight_protocol`): RESET with a seed gives the observation, STEP
with the actuator commands gives the next observation, the reward and the flags. One client
at a time, on TCP (127.0.0.1 by default) or a Unix socket. Every wait is bounded: a client
that sends no frame within ``timeout`` seconds is dropped, a second client is told BUSY and
closed while the first flies on, a malformed frame gets an ERROR frame naming what was
expected, and a client that disconnects is logged; the server then waits for the next.

With ``realtime`` each STEP_RESULT is sent at its period's boundary on the wall clock (the
reset's reply at t0, step k's at t0 + k dt), for hardware benches; the lateness of each
reply past its boundary is measured and reported (max and RMS, ms) per episode and at exit.
"""

from __future__ import annotations

import json
import math
import os
import selectors
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np

from rigidrot_gym.tools import flight_protocol as fp

DESCRIPTION = """\
Flight software in the loop: serves one env over a socket, in lockstep with a client that
drives it. The client sends RESET (a seed) and gets the observation, then STEP (the
actuator commands, float32) and gets the next observation, the reward and the flags, once
per control period, in length-prefixed little-endian frames (docs: Training, "Flight
software in the loop"). One client at a time; a second is refused (BUSY), a client silent
for --timeout seconds is dropped, a malformed frame gets an ERROR frame naming what was
expected; the server then serves the next client. --realtime paces each reply to the
period's boundary on the wall clock and reports the measured jitter.

ID is an env id or the policy.json of rigidrot export (its env and env_kwargs).
The server prints 'listening on ADDRESS' once it accepts connections.

example: rigidrot serve RigidRot/Reorient-v0 --port 5555"""


@dataclass
class Jitter:
    """The lateness of realtime replies past their period boundaries, s."""

    late: list[float] = field(default_factory=list)

    def summary(self) -> str:
        """``N periods, jitter max X ms, RMS Y ms`` (lateness past the boundary)."""
        if not self.late:
            return "0 periods"
        late = np.asarray(self.late)
        return (
            f"{late.size} periods, jitter max {1e3 * late.max():.3f} ms, "
            f"RMS {1e3 * math.sqrt(np.mean(late**2)):.3f} ms"
        )


def make_env(target: str) -> tuple[gym.Env, str]:
    """The env of an id or of a ``policy.json`` (its ``env`` and ``env_kwargs``), and its id.

    Raises:
        ValueError: for an id not registered, or a ``policy.json`` that does not describe
            this env's sizes.
    """
    import rigidrot_gym

    path = Path(target)
    if target.endswith(".json"):
        if not path.is_file():
            raise ValueError(f"{target}: no such file; expected an env id or rigidrot export's policy.json")
        info = json.loads(path.read_text())
        absent = [key for key in ("env", "observation_size", "action_size") if key not in info]
        if absent:
            raise ValueError(f"{target}: no {', '.join(absent)}; expected rigidrot export's policy.json")
        env_id, kwargs = info["env"], dict(info.get("env_kwargs") or {})
    else:
        env_id, kwargs, info = target, {}, None
    if env_id not in gym.registry:
        raise ValueError(
            f"{env_id}: not a registered env id; expected one of {', '.join(rigidrot_gym.ENV_IDS)}"
        )
    env = gym.make(env_id, **kwargs)
    if info is not None:
        sizes = (env.observation_space.shape[0], env.action_space.shape[0])
        if sizes != (info["observation_size"], info["action_size"]):
            raise ValueError(
                f"{target}: observation and action sizes {info['observation_size']}, "
                f"{info['action_size']}; the env {env_id} has {sizes[0]}, {sizes[1]}"
            )
    return env, env_id


def listen(port: int | None = None, host: str = "127.0.0.1", unix: str | None = None) -> socket.socket:
    """A listening socket: a Unix socket at ``unix``, else TCP at ``host``:``port`` (0: a
    free port).

    Raises:
        ValueError: for a port outside 0 ... 65535, a Unix path that exists already, or an
            address that cannot be bound (naming it and the system's reason).
    """
    if unix is not None:
        if os.path.exists(unix):
            raise ValueError(f"--unix {unix}: the path exists; expected a new socket path (remove it first)")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        address: object = unix
    else:
        if port is None or not 0 <= port <= 65535:
            raise ValueError(f"--port {port}: expected a TCP port 0 ... 65535 (0: any free port)")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        address = (host, port)
    try:
        sock.bind(address)
    except OSError as err:
        sock.close()
        raise ValueError(f"cannot listen on {address}: {err.strerror or err}") from None
    sock.listen(4)
    return sock


def _name(sock: socket.socket) -> str:
    """The listening address as said to the user: ``host:port`` or the Unix path."""
    address = sock.getsockname()
    return address if isinstance(address, str) else f"{address[0]}:{address[1]}"


def _peer(peer: object) -> str:
    """A client as said in the log: ``host:port``, or ``(unix)`` (Unix clients are unnamed)."""
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "(unix)"


def _receive(conn: socket.socket, count: int, deadline: float) -> bytes:
    """Exactly ``count`` bytes by ``deadline`` (``time.monotonic``, s); ``b""`` if the peer
    closed before the first one.

    Raises:
        ProtocolError: MALFORMED, if the peer closed inside them or the deadline passed
            with bytes still missing (a client trickling bytes is bounded too).
    """
    data = bytearray()
    while len(data) < count:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise fp.ProtocolError(
                fp.Code.MALFORMED, f"frame incomplete: {len(data)} of {count} bytes before the timeout"
            )
        conn.settimeout(remaining)
        try:
            chunk = conn.recv(count - len(data))
        except TimeoutError:
            continue
        if not chunk:
            if not data:
                return b""
            raise fp.ProtocolError(fp.Code.MALFORMED, f"frame cut short: {len(data)} of {count} bytes")
        data += chunk
    return bytes(data)


class Server:
    """Serves ``env`` on the listening socket ``sock`` (:func:`listen`), one client at a time.

    ``timeout`` (s) bounds the wait for each client frame; ``realtime`` paces the replies
    to the control period ``dt`` (s); ``max_episodes`` ends :meth:`serve` after that many
    finished episodes (terminated or truncated; None: never); ``log`` takes each line
    said about clients (stderr by default).
    """

    def __init__(
        self,
        env: gym.Env,
        env_id: str,
        sock: socket.socket,
        timeout: float = 10.0,
        realtime: bool = False,
        max_episodes: int | None = None,
        log: Callable[[str], None] | None = None,
    ):
        self.env, self.sock, self.timeout = env, sock, timeout
        self.realtime, self.max_episodes = realtime, max_episodes
        self.n, self.m = env.observation_space.shape[0], env.action_space.shape[0]
        self.dt = float(env.unwrapped.scenario.dt)
        self.hello = fp.hello(env_id, self.n, self.m, self.dt)
        self.log = log or (lambda line: print(f"rigidrot serve: {line}", file=sys.stderr, flush=True))
        self.episodes = 0
        self.jitter = Jitter()
        self._stopped = self._live = False

    def stop(self) -> None:
        """Ends :meth:`serve` within a timeout (from another thread)."""
        self._stopped = True

    def serve(self) -> None:
        """Accepts clients and flies their episodes until ``max_episodes`` or :meth:`stop`."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.sock, selectors.EVENT_READ)
            while not self._done():
                # Bounded, so that stop() is seen without a client.
                if selector.select(timeout=min(self.timeout, 0.5)):
                    conn, peer = self.sock.accept()
                    self._fly(conn, peer, selector)
        self.log(f"served {self.episodes} episodes" + (f"; {self.jitter.summary()}" if self.realtime else ""))

    def _done(self) -> bool:
        return self._stopped or (self.max_episodes is not None and self.episodes >= self.max_episodes)

    def _fly(self, conn: socket.socket, peer: object, selector: selectors.BaseSelector) -> None:
        """Serves one client until it says BYE, leaves, falls silent or errs."""
        name = _peer(peer)
        self.log(f"client {name} connected")
        self._live = False
        with conn:
            selector.register(conn, selectors.EVENT_READ)
            try:
                if conn.family != socket.AF_UNIX:
                    # Each reply is one small write the client waits for: no Nagle delay.
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn.settimeout(self.timeout)
                conn.sendall(self.hello)
                self.log(f"client {name} {self._loop(conn, selector)}")
            except fp.ProtocolError as err:
                self.log(f"client {name} dropped: {err} (error {err.code.name})")
                self._tell(conn, err.code, str(err))
            except OSError as err:  # reset by the peer, or a send that timed out
                self.log(f"client {name} lost{' mid-episode' if self._live else ''}: {err}")
            finally:
                selector.unregister(conn)

    def _loop(self, conn: socket.socket, selector: selectors.BaseSelector) -> str:
        """Answers the client's frames; returns how it ended (for the log)."""
        late: list[float] = []
        start, step = 0.0, 0
        while not self._done():
            kind, value = self._next(conn, selector)
            if kind is None:
                return "disconnected mid-episode" if self._live else "disconnected"
            if kind == fp.Message.BYE:
                return "said BYE"
            if kind == fp.Message.RESET:
                try:
                    obs, _ = self.env.reset(seed=int(value))
                except (ValueError, RuntimeError) as err:
                    raise fp.ProtocolError(fp.Code.ENV, f"reset failed: {err}") from None
                self._live, late, step = True, [], 0
                conn.sendall(fp.observation(obs))
                start = time.perf_counter()
                continue
            if not self._live:
                raise fp.ProtocolError(fp.Code.NO_EPISODE, "STEP without an episode: expected RESET first")
            try:
                obs, reward, terminated, truncated, _ = self.env.step(value)
            except (ValueError, RuntimeError) as err:
                # The env's own refusal, sent to the client; the server serves on.
                raise fp.ProtocolError(fp.Code.ENV, f"step failed: {err}") from None
            reply = fp.step_result(obs, float(reward), terminated, truncated)
            step += 1
            if self.realtime:
                late.append(self._pace(start + step * self.dt))
                self.jitter.late.append(late[-1])
            conn.sendall(reply)
            if terminated or truncated:
                self._live = False
                self.episodes += 1
                if self.realtime:
                    self.log(f"episode {self.episodes}: {Jitter(late).summary()}")
        return f"closed: the server stops after {self.episodes} episodes"

    def _pace(self, boundary: float) -> float:
        """Waits for ``boundary`` (perf_counter, s); returns the lateness past it, s."""
        remaining = boundary - time.perf_counter()
        if remaining > 0:
            time.sleep(remaining)
        return max(0.0, time.perf_counter() - boundary)

    def _next(
        self, conn: socket.socket, selector: selectors.BaseSelector
    ) -> tuple[fp.Message | None, object]:
        """The client's next frame, parsed (:func:`~rigidrot_gym.tools.flight_protocol.parse`),
        or (None, None) if it closed between frames; a second client connecting meanwhile is
        refused.

        Raises:
            ProtocolError: TIMEOUT after ``timeout`` s without a frame, or what
                :func:`~rigidrot_gym.tools.flight_protocol.parse` raises.
        """
        deadline = time.monotonic() + self.timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise fp.ProtocolError(
                    fp.Code.TIMEOUT, f"no frame within {self.timeout:g} s: expected one per period"
                )
            ready = [key.fileobj for key, _ in selector.select(timeout=remaining)]
            # The client first: if it has just left, the one connecting is served, not refused.
            if conn in ready:
                break
            if self.sock in ready:
                other, peer = self.sock.accept()
                with other:
                    self.log(f"client {_peer(peer)} refused: busy")
                    self._tell(other, fp.Code.BUSY, "busy: another client is flying; try again later")
        # The frame's bytes get the same time again: a whole frame within 2 timeouts.
        deadline = time.monotonic() + self.timeout
        header = _receive(conn, fp.LENGTH.size, deadline)
        if not header:
            return None, None
        (length,) = fp.LENGTH.unpack(header)
        fp.check_length(length)
        payload = _receive(conn, length, deadline)
        if not payload:
            raise fp.ProtocolError(fp.Code.MALFORMED, f"frame cut short: 0 of {length} bytes")
        conn.settimeout(self.timeout)  # for the reply's send
        return fp.parse(payload, self.m)

    def _tell(self, conn: socket.socket, code: fp.Code, message: str) -> None:
        """Sends an ERROR frame, as far as the peer still listens (it may be gone)."""
        try:
            conn.settimeout(1.0)
            conn.sendall(fp.error(code, message))
        except OSError:
            pass


def run(args) -> None:
    """``rigidrot serve``: checks the arguments, serves until ``--max-episodes`` or Ctrl-C.

    Raises:
        ValueError: naming the argument, its value and what is expected.
    """
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise ValueError(f"--timeout {args.timeout}: expected seconds > 0")
    if args.max_episodes is not None and args.max_episodes < 1:
        raise ValueError(f"--max-episodes {args.max_episodes}: expected a whole number >= 1")
    sock = listen(args.port, args.host, args.unix)
    try:
        env, env_id = make_env(args.id)
        # One reset and step before listening: numba compiles (or loads) the kernels now,
        # not inside a client's first period. The client's reset reseeds, so nothing carries.
        env.reset(seed=0)
        env.step(np.zeros(env.action_space.shape, dtype=np.float32))
        server = Server(env, env_id, sock, args.timeout, args.realtime, args.max_episodes)
        print(f"listening on {_name(sock)}", flush=True)
        try:
            server.serve()
        except KeyboardInterrupt:
            server.log(f"interrupted; served {server.episodes} episodes")
            if args.realtime:
                server.log(server.jitter.summary())
    finally:
        sock.close()
        if args.unix is not None and os.path.exists(args.unix):
            os.unlink(args.unix)
