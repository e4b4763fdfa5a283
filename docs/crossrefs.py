"""A griffe extension: the docstrings' Sphinx roles become checked cross-references.

The docstrings write references as Sphinx roles (``:func:`propagate```,
``:class:`~rigidrot_gym.physics.rotation.torques.BodyTorque```). Markdown has no such roles, so
before mkdocstrings renders a docstring each role is resolved the way Python would resolve
the name where the docstring stands (the enclosing class, the module, the module's
imports, then as an absolute path) and rewritten as an autorefs link ``[text][path]`` to
the object's own page. A name in the package that does not resolve is a warning, which
``mkdocs build --strict`` turns into a failed build; names outside the package
(numpy, Gymnasium, ...) become plain code.
"""

from __future__ import annotations

import logging
import re

import griffe

PACKAGE = "rigidrot_gym"
# :role:`name`, :role:`~dotted.name` (shown as its last part), :role:`text <dotted.name>`.
ROLE = re.compile(
    r":(?:py:)?(?:func|mod|class|meth|attr|data|exc|obj|const):`(~?)\.?([^`<]+?)(?:\s*<([^`>]+)>)?`"
)
log = logging.getLogger("mkdocs.plugins.rigidrot_crossrefs")


def _lookup(root: griffe.Module, path: str) -> griffe.Object | griffe.Alias | None:
    """The object at the absolute dotted ``path`` in the package, or None."""
    parts = path.split(".")
    if parts[0] != PACKAGE:
        return None
    obj = root
    for part in parts[1:]:
        try:
            obj = getattr(obj, "all_members", obj.members)[part]
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return None
    return obj


def _canonical(obj: griffe.Object | griffe.Alias) -> str | None:
    """The path where ``obj`` is defined (an import followed to its target)."""
    try:
        return obj.final_target.path if isinstance(obj, griffe.Alias) else obj.path
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def _resolve(root: griffe.Module, scope: griffe.Object, name: str) -> str | None:
    """The canonical path of ``name`` as written in a docstring of ``scope``."""
    head, _, rest = name.partition(".")
    candidates = []
    node: griffe.Object | None = scope
    while node is not None:
        # A class's inherited members resolve too (a method documented on its base).
        if head in getattr(node, "all_members", node.members):
            candidates.append(f"{node.path}.{name}")
        node = node.parent
    imports = scope.module.imports
    if head in imports:
        candidates.append(imports[head] + (f".{rest}" if rest else ""))
    candidates.append(name)
    for path in candidates:
        obj = _lookup(root, path)
        if obj is not None:
            return _canonical(obj)
    return None


class SphinxRolesToCrossrefs(griffe.Extension):
    """Rewrite Sphinx roles in every docstring of the package as autorefs links."""

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        if pkg.name == PACKAGE:
            self._visit(pkg, pkg, set())

    def _visit(self, root: griffe.Module, obj: griffe.Object, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(lambda m: self._link(root, obj, m), obj.docstring.value)
        for member in obj.members.values():
            if not member.is_alias:
                self._visit(root, member, seen)

    def _link(self, root: griffe.Module, scope: griffe.Object, match: re.Match) -> str:
        short, name, target = match.group(1), match.group(2).strip(), match.group(3)
        text = name.rsplit(".", 1)[-1] if short else name
        if target is not None:
            name = target.strip()
        path = _resolve(root, scope, name)
        if path is not None and _is_private(path):
            # Private objects have no reference entry: named, not linked.
            return f"`{text}`"
        if path is not None:
            return f"[`{text}`][{path}]"
        if name.split(".")[0] == PACKAGE or not _is_external(name):
            log.warning("%s: the docstring's reference %r resolves to nothing", scope.path, match.group(0))
        return f"`{text}`"


# Top-level names of other libraries that docstrings refer to: written as code, not linked.
EXTERNAL = {
    "numpy",
    "np",
    "scipy",
    "gymnasium",
    "gym",
    "stable_baselines3",
    "pybullet",
    "numba",
    "ray",
    "torch",
    "mujoco",
    "Basilisk",
    "warnings",
}


def _is_private(path: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in path.split("."))


def _is_external(name: str) -> bool:
    return name.split(".")[0] in EXTERNAL
