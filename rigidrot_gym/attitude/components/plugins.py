"""Components of other packages: declared in a module of their own (a
:class:`~rigidrot_gym.attitude.components.declaration.Component`) and registered through an
entry point of the group ``rigidrot_gym.components``, as Gymnasium finds its plugins' envs
and pytest its plugins. In a package's ``pyproject.toml``::

    [project.entry-points."rigidrot_gym.components"]
    drag_sail = "my_package.drag_sail:COMPONENT"

They join the list of components when :mod:`rigidrot_gym.attitude.components` is first
imported, after the package's own, sorted by entry point name: their draws, noise and
observation columns follow every built-in one's, so that every id keeps its random streams
and columns, and a scenario that leaves them off runs as it did without them. A component
module may import the declarations, the settings and the physics, but not the env core
(which derives its records from the list being made). Its source file joins the stamp of
the package's cached kernels (:func:`~rigidrot_gym.physics.plumbing.jit.stamp_also`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points

from rigidrot_gym.attitude.components.declaration import Component
from rigidrot_gym.physics.plumbing import jit

GROUP = "rigidrot_gym.components"


def _names(component: Component) -> dict[str, set[str]]:
    """What a component adds to the records the core derives, by kind."""
    return {
        "component": {component.name},
        "table": {component.table.key} if component.table is not None else set(),
        "feature": {f.name for f in component.features},
        "state": {s.name for s in component.state},
    }


def checked(entries: Iterable[EntryPoint], built_in: tuple[Component, ...]) -> tuple[Component, ...]:
    """The components the ``entries`` name, sorted by entry point name, each checked to be
    a :class:`Component` whose name, table, flags and state take no name that
    ``built_in`` or an earlier one took.

    Raises:
        ValueError: naming the entry point, what it gave and what was expected.
    """
    taken: dict[str, dict[str, str]] = {}
    for component in built_in:
        owner = f"the built-in component {component.name!r}"
        for kind, names in _names(component).items():
            taken.setdefault(kind, {}).update(dict.fromkeys(names, owner))
    found = []
    for entry in sorted(entries, key=lambda e: e.name):
        where = f"entry point {entry.name} = {entry.value!r} (group {GROUP})"
        try:
            component = entry.load()
        except Exception as err:
            raise ValueError(f"{where} failed to load: {type(err).__name__}: {err}") from err
        if not isinstance(component, Component):
            raise ValueError(
                f"{where} must name a rigidrot_gym Component (a module's COMPONENT), got {component!r}"
            )
        for kind, names in _names(component).items():
            for name in sorted(names):
                if name in taken.get(kind, {}):
                    raise ValueError(
                        f"{where}: its {kind} name {name!r} is taken by {taken[kind][name]}; choose another"
                    )
        for kind, names in _names(component).items():
            taken.setdefault(kind, {}).update(dict.fromkeys(names, f"component {component.name!r} ({where})"))
        found.append(component)
    return tuple(found)


def discover(built_in: tuple[Component, ...]) -> tuple[Component, ...]:
    """The components registered by the installed packages (:func:`checked`), each
    module's source added to the stamp of the package's cached kernels, which compile its
    hooks in (only here: a process whose stamp changed would rewrite the cache's indexes
    under it, and every other process sharing the cache would compile again)."""
    entries = entry_points(group=GROUP)
    found = checked(entries, built_in)
    for entry in entries:
        source = getattr(sys.modules.get(entry.module), "__file__", None)
        if source is not None:
            jit.stamp_also(source)
    return found
