"""The components that take part in a stage, chained when its kernel is built: a stage
that runs one hook per component for each body builds the hooks of the components the
scenario enables (None for the others) and calls them as one compiled function, in the
order given. A later list of the components' declarations can hand a stage its hooks."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any


def chain(hooks: Iterable[Any], then: Callable[[Any, Any], Any], nothing: Any) -> Any:
    """The ``hooks`` that are not None, joined in order by ``then(first, second)`` (the
    stage's own pair, which runs ``first``, then ``second``, with the stage's arguments);
    ``nothing`` where none is."""
    present = [hook for hook in hooks if hook is not None]
    return functools.reduce(then, present) if present else nothing
