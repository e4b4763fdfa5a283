"""A griffe extension: a class docstring that its module completes at import is shown as
Python shows it.

Griffe reads docstrings from the source. Where a module assigns ``Class.__doc__`` after
the class (``AttitudeEnv``'s observation table, made from the layout the env builds its
observation by, so that the two cannot drift apart), the source holds a placeholder; the
imported class's docstring replaces it.
"""

from __future__ import annotations

import importlib
import inspect

import griffe


class RuntimeDocstrings(griffe.Extension):
    def on_class_instance(self, *, cls: griffe.Class, **kwargs) -> None:
        if f"{cls.name}.__doc__ = " not in cls.module.filepath.read_text():
            return
        runtime = getattr(importlib.import_module(cls.module.path), cls.name).__doc__
        cls.docstring = griffe.Docstring(inspect.cleandoc(runtime), parent=cls)
