"""Engine state kept per thread and per process.

An engine's client, models and bodies are mutable: two threads stepping through one of
them interleave their calls and corrupt each other's bodies (PyBullet: differences up
to 1.8 rad/s between two envs stepped from two threads). :class:`PerThread` gives every
thread its own engine state, made on first use; a forked process makes its own on first
use instead of sharing its parent's. A thread's state is released when the thread ends
(its ``close`` runs then); :meth:`PerThread.close` closes every state of this process
(at exit). The state is never reachable from an env or a method object, so copying or
pickling an env copies no engine state and closes nothing.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar


class Closable(Protocol):
    def close(self) -> None: ...


T = TypeVar("T", bound=Closable)


class _Holder:
    """Owns one thread's state and closes it when the thread's locals are released."""

    def __init__(self, state, pid: int):
        self.state, self.pid = state, pid

    def __del__(self):
        # Only in the process that made it: a forked child must not close its parent's.
        if self.pid == os.getpid():
            self.state.close()


class PerThread(Generic[T]):
    """One engine state per thread and process, made by ``factory`` on first use."""

    def __init__(self, factory: Callable[[], T]):
        self._factory = factory
        self._local = threading.local()
        self._lock = threading.Lock()
        self._holders: weakref.WeakSet[_Holder] = weakref.WeakSet()

    def get(self) -> T:
        """This thread's state (a new one in a thread or process that has none yet)."""
        holder = getattr(self._local, "holder", None)
        if holder is None or holder.pid != os.getpid():
            holder = _Holder(self._factory(), os.getpid())
            self._local.holder = holder
            with self._lock:
                self._holders.add(holder)
        return holder.state

    def close(self) -> None:
        """Close every state of this process; threads make new ones on their next use."""
        with self._lock:
            holders = [h for h in self._holders if h.pid == os.getpid()]
            self._holders = weakref.WeakSet()
        for holder in holders:
            holder.state.close()
        self._local = threading.local()
