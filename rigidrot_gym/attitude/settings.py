"""Scenario settings, each declared once: its key, keyword, unit, range, default and doc.

A scenario file is TOML: a few top-level keys and one table per part of the task
(``[simulation]``, ``[wheels]``, ...). Each table is a class that derives :class:`Table`
(which makes it a frozen dataclass) and names its TOML table; each of its fields is
declared by :func:`setting`, with everything the package needs to know about it::

    class Magnetorquer(Table, key="magnetorquer"):
        \"\"\"Magnetic torque rods.\"\"\"

        dipole: float = setting(
            0.0, check=non_negative, unit="A·m²", doc="dipole limit per rod",
            flat="magnetorquer_dipole", switch=True,
        )

A table can be declared in any module, next to the code that uses it; a document (the
:class:`~rigidrot_gym.attitude.scenario.Scenario`) lists its tables as typed fields
(``magnetorquer: Magnetorquer``), and its own top-level keys as :func:`setting` fields.
Everything else is derived from the declarations: reading a file (:func:`read`, which
refuses unknown keys and tables), building the tables from keyword arguments
(:func:`compose`), the keyword names and TOML keys (:func:`settings_of`) and the docs
(:func:`reference`). So a value is checked by the same code, with the same message,
however it arrives: from a file, a keyword or a constructor.

The checks (:class:`Check`) convert as they check (an int to a float, a list to a
read-only float64 array) and raise :class:`ScenarioError` naming where the value came
from, what was expected and what was given.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
import sys
import typing
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover
    from typing_extensions import dataclass_transform  # a dependency of gymnasium

INT64_MAX = 2**63 - 1  # the step counters are int64
# Smallest positive value of a field that is divided by (a subnormal's reciprocal is inf).
_TINY = float(np.finfo(np.float64).tiny)
# The default of a setting that has none: the file (or the keywords) must give it.
REQUIRED: Any = dataclasses.MISSING


class ScenarioError(ValueError):
    """A scenario file or override is malformed; the message names the file and field."""


def invalid(where: str, expected: str, value: Any) -> ScenarioError:
    """The error for ``value`` at ``where`` (``"<file>: field simulation.dt"``)."""
    return ScenarioError(f"{where}: expected {expected}, got {value!r}")


# --------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Check:
    """How a setting's value is checked: ``convert(value, where)`` returns it normalised
    or raises :class:`ScenarioError` naming ``where``; ``expected`` says in words what
    passes (the range column of the docs)."""

    expected: str
    convert: Callable[[Any, str], Any]

    def __call__(self, value: Any, where: str) -> Any:
        return self.convert(value, where)


def _is_real(value: Any) -> bool:
    """A real number: an int or a float (numpy's included), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _number(value: Any, where: str, positive: bool = False, minimum: float | None = None) -> float:
    """A finite real number (ints and numpy scalars too; a Python int too large for a
    float is rejected, not raised as ``OverflowError``)."""
    try:
        x = float(value) if _is_real(value) else np.nan
    except OverflowError:
        x = np.nan
    if not np.isfinite(x):
        raise invalid(where, "a finite number", value)
    if positive and x <= 0:
        raise invalid(where, "a positive number", value)
    if positive and x < _TINY:
        raise invalid(where, f"a positive number ≥ {_TINY:.17g} (smaller has no finite inverse)", value)
    if minimum is not None and x < minimum:
        raise invalid(where, f"a number ≥ {minimum}", value)
    return x


number = Check("a finite number", _number)
positive = Check("a positive number", functools.partial(_number, positive=True))
non_negative = Check("a number ≥ 0", functools.partial(_number, minimum=0.0))


# A model parameter's default: the value of the preset the scenario chose.
PRESET = "preset"


def or_preset(check: Check) -> Check:
    """What ``check`` passes, or ``"preset"`` (:data:`PRESET`): the chosen preset's value."""
    expected = f'{check.expected}, or "{PRESET}" (the preset\'s)'

    def convert(value: Any, where: str) -> Any:
        if isinstance(value, str) and value == PRESET:
            return PRESET
        try:
            return check(value, where)
        except ScenarioError:
            raise invalid(where, expected, value) from None

    return Check(expected, convert)


def or_preset_value(value: float | str, scale: float, preset: float) -> float:
    """A model parameter of an :func:`or_preset` setting: ``value`` × ``scale`` (its unit to
    SI), or ``preset`` where the scenario leaves it at :data:`PRESET`."""
    return preset if value == PRESET else value * scale


def bounded(maximum: float, positive: bool = False) -> Check:
    """A number in [0, ``maximum``] (or (0, ``maximum``] if ``positive``)."""
    expected = f"a number in {'(0' if positive else '[0'}, {maximum:g}]"

    def convert(value: Any, where: str) -> float:
        x = _number(value, where, positive=positive, minimum=None if positive else 0.0)
        if x > maximum:
            raise invalid(where, expected, value)
        return x

    return Check(expected, convert)


def _fraction(value: Any, where: str) -> float:
    value = _number(value, where, minimum=0.0)
    if value >= 1.0:
        raise invalid(where, "a fraction in [0, 1)", value)
    return value


fraction = Check("a fraction in [0, 1)", _fraction)


def integer(minimum: int, maximum: int = INT64_MAX) -> Check:
    """An integer in [``minimum``, ``maximum``] (not a bool, not a float)."""
    expected = f"an integer in [{minimum}, {maximum}]"

    def convert(value: Any, where: str) -> int:
        integral = isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)
        if not integral or not minimum <= value <= maximum:
            raise invalid(where, expected, value)
        return int(value)

    return Check(expected, convert)


def _has_bool(value: Any) -> bool:
    if isinstance(value, list | tuple):
        return any(_has_bool(v) for v in value)
    return isinstance(value, bool | np.bool_)


def reals(value: Any, where: str, expected: str) -> np.ndarray:
    """``value`` (nested lists or an array of real numbers) as a float64 array; bools,
    strings, complex numbers and values too large for a float are rejected."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        arr = value
    elif isinstance(value, list | tuple) and not _has_bool(value):
        try:
            arr = np.array(value)
        except (TypeError, ValueError):  # ragged
            raise invalid(where, expected, value) from None
        if arr.dtype == object and not all(_is_real(v) for v in arr.flat):
            raise invalid(where, expected, value)
        if arr.dtype != object and arr.dtype.kind not in "fiu":
            raise invalid(where, expected, value)
    else:
        raise invalid(where, expected, value)
    try:
        return arr.astype(np.float64)
    except OverflowError:
        raise invalid(where, expected, value) from None


def vector(size: int = 3, positive: bool = False) -> Check:
    """A list of ``size`` finite numbers (positive ones if ``positive``), as a read-only
    float64 array."""
    expected = f"a list of {size} {'positive ' if positive else ''}finite numbers"

    def convert(value: Any, where: str) -> np.ndarray:
        arr = reals(value, where, expected)
        if arr.shape != (size,) or not np.all(np.isfinite(arr)) or (positive and np.any(arr <= 0)):
            raise invalid(where, expected, value)
        arr.setflags(write=False)
        return arr

    return Check(expected, convert)


_four = vector(4)


def _quaternion(value: Any, where: str) -> np.ndarray:
    q = _four(value, where)
    if abs(np.linalg.norm(q) - 1.0) > 1e-6:
        raise invalid(where, "a unit quaternion [w, x, y, z]", value)
    q = q / np.linalg.norm(q)
    q.setflags(write=False)
    return q


# Within 1e-6 of unit norm, then normalised: a file's 0.7071067811865476 is unit enough.
quaternion = Check("a unit quaternion [w, x, y, z]", _quaternion)


def choice(choices: tuple[str, ...]) -> Check:
    """One of the strings ``choices``."""
    expected = f"one of {list(choices)}"

    def convert(value: Any, where: str) -> str:
        if not isinstance(value, str) or value not in choices:
            raise invalid(where, expected, value)
        return value

    return Check(expected, convert)


def attitude(choices: tuple[str, ...]) -> Check:
    """One of the strings ``choices`` (how to draw an attitude) or a fixed attitude, a
    unit quaternion."""
    expected = f"one of {list(choices)} or a unit quaternion [w, x, y, z]"

    def convert(value: Any, where: str) -> str | np.ndarray:
        if isinstance(value, str):
            if value not in choices:
                raise invalid(where, expected, value)
            return value
        return _quaternion(value, where)

    return Check(expected, convert)


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise invalid(where, "true or false", value)
    return value


flag = Check("true or false", _flag)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise invalid(where, "a string", value)
    return value


text = Check("a string", _text)


# --------------------------------------------------------------------------- declarations


def setting(
    default: Any,
    *,
    check: Check,
    doc: str,
    unit: str | None = None,
    flat: str | None = None,
    legacy: tuple[str, ...] = (),
    switch: bool = False,
) -> Any:
    """Declare a field of a :class:`Table` (or a top-level key of a document).

    Args:
        default: the value when the file leaves the key out (in TOML terms: a tuple for
            a list), or :data:`REQUIRED`.
        check: the :class:`Check` every value goes through.
        doc: what it is, in one line.
        unit: its unit (``"N·m"``), if it has one.
        flat: its keyword name, if not the key itself: ``[wheels] max_torque`` is
            ``wheel_max_torque``. Keyword names are one namespace over all tables.
        legacy: TOML keys (``"table.key"`` or a top-level ``"key"``) that older files
            give it under; a file gives it under one of them or its own key, not two.
        switch: a realism option, on when the value is not the default (which is off).

    Returns:
        The ``dataclasses.field`` (keyword-only, so required and optional fields can
        come in any order).
    """
    if switch and default is REQUIRED:
        raise TypeError("a realism switch needs a default: the value that leaves the option off")
    declared = {
        "check": check,
        "doc": doc,
        "unit": unit,
        "flat": flat,
        "legacy": tuple(legacy),
        "switch": switch,
    }
    return dataclasses.field(default=default, kw_only=True, metadata={"setting": declared})


@dataclass(frozen=True)
class Setting:
    """A declared setting, placed: where its value lives and what it takes."""

    path: tuple[str, ...]  # attributes from the object it was listed from: ("simulation", "dt")
    key: str  # TOML key: "simulation.dt", or "id" at the top level
    flat: str  # keyword name: "dt"
    check: Check
    default: Any  # REQUIRED: the file must give it
    doc: str
    unit: str | None
    legacy: tuple[str, ...]
    switch: bool

    @property
    def required(self) -> bool:
        """Without a default: a file must give it."""
        return self.default is REQUIRED

    def value(self, obj: Any) -> Any:
        """This setting's value in ``obj`` (the object it was listed from)."""
        return functools.reduce(getattr, self.path, obj)


@functools.cache
def _declared(cls: type, prefix: str) -> tuple[Setting, ...]:
    """The fields of the dataclass ``cls`` declared by :func:`setting`, keys prefixed."""
    found = []
    for f in dataclasses.fields(cls):
        if "setting" in f.metadata:
            declared = dict(f.metadata["setting"])
            flat = declared.pop("flat") or f.name
            found.append(Setting((f.name,), prefix + f.name, flat, default=f.default, **declared))
    return tuple(found)


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(setting,))
class Table:
    """Base of one TOML table: ``class Wheels(Table, key="wheels")`` reads ``[wheels]``.

    A subclass is made a frozen dataclass (no decorator to add) whose every field is
    declared by :func:`setting`. The fields are checked when the table is built, so a
    table holds valid values only; an error names the field as ``field
    wheels.max_torque`` (a document adds its file).
    """

    key: ClassVar[str]

    def __init_subclass__(cls, *, key: str, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not key or "." in key:
            raise TypeError(f"{cls.__name__}: a table key is one TOML name, got {key!r}")
        cls.key = key
        dataclass(frozen=True)(cls)

    def __post_init__(self) -> None:
        for s in self.settings():
            object.__setattr__(self, s.path[0], s.check(s.value(self), f"field {s.key}"))

    @classmethod
    def settings(cls) -> tuple[Setting, ...]:
        """The table's settings, in declaration order; every field is one."""
        found = _declared(cls, f"{cls.key}.")
        undeclared = [f.name for f in dataclasses.fields(cls) if "setting" not in f.metadata]
        if undeclared:
            raise TypeError(f"{cls.__name__}: fields {undeclared} are not declared with setting()")
        return found


# --------------------------------------------------------------------------- documents


@functools.cache
def tables_of(document: type) -> dict[str, type[Table]]:
    """The tables of a document class: attribute name -> :class:`Table` subclass, from
    its fields' type hints, in field order."""
    hints = typing.get_type_hints(document)
    return {
        f.name: hint
        for f in dataclasses.fields(document)
        if typing.get_origin(hint := hints[f.name]) is None
        and isinstance(hint, type)
        and issubclass(hint, Table)
    }


@functools.cache
def settings_of(document: type) -> dict[str, Setting]:
    """Every setting of a document class, by keyword name, in field order: its own
    top-level keys and its tables' keys.

    Raises:
        TypeError: for two settings with one keyword name or one TOML key (legacy keys
            included), two tables with one key, or a keyword name that is already an
            attribute of the document.
    """
    fields = {f.name for f in dataclasses.fields(document)}
    tables = tables_of(document)
    found: dict[str, Setting] = {}
    keys: set[str] = set()
    for f in dataclasses.fields(document):
        if f.name in tables:
            placed = [dataclasses.replace(s, path=(f.name, *s.path)) for s in tables[f.name].settings()]
        else:
            placed = [s for s in _declared(document, "") if s.path == (f.name,)]
        for s in placed:
            top_level = len(s.path) == 1
            if s.flat in found or (not top_level and (s.flat in fields or hasattr(document, s.flat))):
                raise TypeError(f"{document.__name__}: keyword {s.flat!r} of {s.key} is already taken")
            if top_level and s.flat != s.key:
                raise TypeError(
                    f"{document.__name__}: top-level key {s.key} has no other keyword than its name"
                )
            for key in (s.key, *s.legacy):
                if key in keys or key.count(".") > 1:
                    raise TypeError(f"{document.__name__}: TOML key {key!r} of {s.key} is taken or nested")
                keys.add(key)
            found[s.flat] = s
    names = [table.key for table in tables.values()]
    if len(set(names)) != len(names):
        raise TypeError(f"{document.__name__}: two tables share a key: {names}")
    return found


_ABSENT = object()


def _lookup(data: dict[str, Any], key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        node = node.get(part, _ABSENT) if isinstance(node, dict) else _ABSENT
    return node


def read(document: type, data: dict[str, Any], where: str, own: Collection[str] = ()) -> dict[str, Any]:
    """The values that ``data`` (a parsed TOML file) gives, by keyword name, unchecked
    (the document's constructor checks them). A setting is read from its key or, in a
    file written before it moved, from one of its legacy keys.

    Args:
        document: the document class whose settings the file gives.
        data: the parsed file.
        where: the file, for the messages.
        own: top-level keys the caller reads itself (``body``).

    Raises:
        ScenarioError: for a key or table no setting declares, a table that is not one,
            or one setting given twice (under its key and a legacy key).
    """
    settings = settings_of(document).values()
    known = {key for s in settings for key in (s.key, *s.legacy)}
    unknown = sorted(set(data) - {key.split(".")[0] for key in known} - set(own))
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) {unknown}")
    tables = sorted({key.split(".")[0] for key in known if "." in key})
    for table in tables:
        if table in data and not isinstance(data[table], dict):
            raise ScenarioError(f"{where}: [{table}] must be a table")
    extra = [f"{t}.{k}" for t in tables for k in data.get(t, {}) if f"{t}.{k}" not in known]
    if extra:
        raise ScenarioError(f"{where}: unknown key(s) {extra}")
    values = {}
    for s in settings:
        given = [key for key in (s.key, *s.legacy) if _lookup(data, key) is not _ABSENT]
        if len(given) > 1:
            raise ScenarioError(f"{where}: {' and '.join(given)} are one field; give it once, as {s.key}")
        if given:
            values[s.flat] = _lookup(data, given[0])
    return values


def compose(document: type, values: dict[str, Any], where: str) -> dict[str, Any]:
    """The declared attributes of a ``document`` built from ``values``: each table from
    the table given under its attribute name (or its defaults), with the settings given
    by keyword name on top, each top-level setting from its keyword; all checked.

    Raises:
        ScenarioError: naming ``where`` and the field: for an unknown name, a missing
            required field, or a value out of its range.
    """
    settings = settings_of(document)
    tables = tables_of(document)
    unknown = sorted(set(values) - set(settings) - set(tables))
    if unknown:
        raise ScenarioError(
            f"{where}: unknown scenario field(s) {unknown}; valid names: {', '.join([*tables, *settings])}"
        )
    built: dict[str, Any] = {}
    for s in settings.values():
        if len(s.path) == 1:
            _require([s] if s.flat not in values else [], where)
            built[s.key] = s.check(values.get(s.flat, s.default), f"{where}: field {s.key}")
    for attribute, table in tables.items():
        fields = {}
        if attribute in values:
            given = values[attribute]
            if not isinstance(given, table):
                raise invalid(f"{where}: field {table.key}", f"a {table.__name__}", given)
            fields = {f.name: getattr(given, f.name) for f in dataclasses.fields(table)}
        fields.update({s.path[0]: values[s.flat] for s in table.settings() if s.flat in values})
        _require([s for s in table.settings() if s.path[0] not in fields], where)
        try:
            built[attribute] = table(**fields)
        except ScenarioError as err:
            raise ScenarioError(f"{where}: {err}") from None
    return built


def _require(absent: Iterable[Setting], where: str) -> None:
    """Refuse the first required setting of ``absent`` (those not given)."""
    missing = [s.key for s in absent if s.required]
    if missing:
        raise ScenarioError(f"{where}: missing field {missing[0]}")


# --------------------------------------------------------------------------- docs


def _toml(value: Any) -> str:
    """``value`` as TOML writes it (a default)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return f"[{', '.join(_toml(v) for v in value)}]"
    return repr(value)


def reference(settings: Iterable[Setting]) -> str:
    """A Markdown table of ``settings``: key | keyword | unit | range | default | what."""
    rows = ["| key | keyword | unit | range | default | what |", "|---|---|---|---|---|---|"]
    for s in settings:
        what = s.doc + (" (realism option)" if s.switch else "")
        if s.legacy:
            what += f"; older files give it as {' or '.join(f'`{key}`' for key in s.legacy)}"
        default = "required" if s.required else f"`{_toml(s.default)}`"
        cells = [f"`{s.key.split('.')[-1]}`", f"`{s.flat}`", s.unit or "", s.check.expected, default, what]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"
