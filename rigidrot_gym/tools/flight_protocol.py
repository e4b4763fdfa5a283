"""The binary protocol of ``rigidrot serve``: length-prefixed little-endian frames.

Every frame is a ``u32`` payload length L (bytes after these four, 4 <= L <= 65,536),
then the payload: ``u16`` version (``VERSION``), ``u16`` message type, then the
message's fields, little-endian, packed (no padding). n and m are the env's observation
and action sizes (``policy.json``'s ``observation_size`` and ``action_size``).

| message | from | fields after version and type |
|---|---|---|
| HELLO (1) | server | `u32` n, `u32` m, `f64` control period dt (s), `u16` k, k bytes of the env id (UTF-8) |
| RESET (2) | client | `u64` seed |
| OBSERVATION (3) | server | n x `f32`: the reset's observation |
| STEP (4) | client | m x `f32`: the action, each finite |
| STEP_RESULT (5) | server | n x `f32` observation, `f64` reward, `u8` terminated, `u8` truncated (0 or 1) |
| ERROR (6) | server | `u16` code (`Code`), the message (UTF-8, the rest); then the server closes |
| BYE (7) | client | none; the server closes the connection |

The server sends HELLO on connecting; the client answers RESET, then STEP after STEP
until a STEP_RESULT has terminated or truncated set, then RESET again or BYE.
"""

from __future__ import annotations

import enum
import struct

import numpy as np

VERSION = 1
# The header: u32 payload length, u16 version, u16 type.
LENGTH = struct.Struct("<I")
HEADER = struct.Struct("<HH")
# The largest payload accepted: far above any env's (a 1000-column observation is 4 kB),
# small enough that a corrupt length is refused before anything is read.
MAX_PAYLOAD = 65_536


class Message(enum.IntEnum):
    """The message types (the ``u16`` after the version)."""

    HELLO = 1
    RESET = 2
    OBSERVATION = 3
    STEP = 4
    STEP_RESULT = 5
    ERROR = 6
    BYE = 7


class Code(enum.IntEnum):
    """The codes of an ERROR frame."""

    MALFORMED = 1  # a length outside 4 ... MAX_PAYLOAD, or a payload cut short
    VERSION = 2  # a version other than VERSION
    UNKNOWN_TYPE = 3  # a type a client does not send
    WRONG_SIZE = 4  # a RESET or STEP of the wrong length (e.g. the wrong number of actions)
    NOT_FINITE = 5  # an action NaN or infinite
    NO_EPISODE = 6  # a STEP before a RESET or after the episode ended
    BUSY = 7  # another client is flying
    TIMEOUT = 8  # no frame within the server's --timeout
    ENV = 9  # the env raised on the reset or step


class ProtocolError(Exception):
    """A frame that breaks the protocol: ``code`` (:class:`Code`) and a message saying what
    was received and what was expected."""

    def __init__(self, code: Code, message: str):
        super().__init__(message)
        self.code = code


def frame(kind: Message, body: bytes = b"") -> bytes:
    """A whole frame: length, version, type, ``body``."""
    payload = HEADER.pack(VERSION, kind) + body
    return LENGTH.pack(len(payload)) + payload


def hello(env_id: str, n: int, m: int, dt: float) -> bytes:
    """The HELLO frame: sizes n and m, control period dt (s), the env id."""
    name = env_id.encode()
    return frame(Message.HELLO, struct.pack("<IIdH", n, m, dt, len(name)) + name)


def observation(obs: np.ndarray) -> bytes:
    """The OBSERVATION frame of a reset's observation (sent as float32)."""
    return frame(Message.OBSERVATION, np.asarray(obs, dtype="<f4").tobytes())


def step_result(obs: np.ndarray, reward: float, terminated: bool, truncated: bool) -> bytes:
    """The STEP_RESULT frame: the observation (float32), the reward (float64), the flags."""
    body = np.asarray(obs, dtype="<f4").tobytes()
    return frame(Message.STEP_RESULT, body + struct.pack("<dBB", reward, bool(terminated), bool(truncated)))


def error(code: Code, message: str) -> bytes:
    """The ERROR frame: ``code`` and ``message``."""
    return frame(Message.ERROR, struct.pack("<H", code) + message.encode())


def check_length(length: int) -> None:
    """Refuse a payload length outside 4 ... ``MAX_PAYLOAD`` before reading it.

    Raises:
        ProtocolError: MALFORMED.
    """
    if not HEADER.size <= length <= MAX_PAYLOAD:
        raise ProtocolError(
            Code.MALFORMED,
            f"frame length {length}: expected {HEADER.size} to {MAX_PAYLOAD} bytes "
            "(a little-endian u32 counting the bytes after it)",
        )


def parse(payload: bytes, m: int) -> tuple[Message, int | np.ndarray | None]:
    """A client's payload: (RESET, seed), (STEP, the m actions as float32) or (BYE, None).

    Raises:
        ProtocolError: a version other than ``VERSION``, a type a client does not send,
            a payload of the wrong length for its type, an action that is not finite.
    """
    version, kind = HEADER.unpack_from(payload)
    if version != VERSION:
        raise ProtocolError(Code.VERSION, f"protocol version {version}: expected {VERSION}")
    body = payload[HEADER.size :]
    sizes = {Message.RESET: 8, Message.STEP: 4 * m, Message.BYE: 0}
    if kind not in sizes:
        expected = ", ".join(f"{k.name} ({k.value})" for k in sizes)
        raise ProtocolError(Code.UNKNOWN_TYPE, f"message type {kind}: expected {expected}")
    kind = Message(kind)
    if len(body) != sizes[kind]:
        what = f"{m} actions, {4 * m} bytes" if kind == Message.STEP else f"{sizes[kind]} bytes"
        raise ProtocolError(
            Code.WRONG_SIZE, f"{kind.name} with {len(body)} bytes after its type: expected {what}"
        )
    if kind == Message.RESET:
        return kind, struct.unpack("<Q", body)[0]
    if kind == Message.STEP:
        action = np.frombuffer(body, dtype="<f4").astype(np.float32)
        if not np.all(np.isfinite(action)):
            raise ProtocolError(
                Code.NOT_FINITE, f"STEP action {action.tolist()}: expected {m} finite float32 values"
            )
        return kind, action
    return kind, None
