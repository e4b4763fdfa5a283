"""The components that take part in a stage, chained when its kernel is built: a stage
that runs one hook per component for each body takes the hooks the components declare
(:class:`~rigidrot_gym.attitude.components.declaration.Component`'s ``load``, ``advance``
and ``observe``), builds those of the components the scenario enables and calls them as
one compiled function, in the list's order."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from rigidrot_gym.attitude.components import COMPONENTS


def declared(kind: str, features: Any) -> list[Callable | None]:
    """Each component's hook of the stage ``kind`` (``"load"``, ``"advance"`` or
    ``"observe"``) built for ``features``, in the list's order (None where its flags
    leave it out)."""
    return [getattr(c, kind)(features) for c in COMPONENTS if getattr(c, kind) is not None]


def chain(hooks: Iterable[Any], then: Callable[[Any, Any], Any], nothing: Any) -> Any:
    """The ``hooks`` that are not None, joined in order by ``then(first, second)`` (the
    stage's own pair, which runs ``first``, then ``second``, with the stage's arguments);
    ``nothing`` where none is."""
    present = [hook for hook in hooks if hook is not None]
    return functools.reduce(then, present) if present else nothing
