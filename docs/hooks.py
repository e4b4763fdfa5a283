"""mkdocs hooks: pages generated at build time from the sources of truth.

* one API reference page per module of the package (``reference/<module>.md``, rendered by
  mkdocstrings from the docstrings), listed in the nav by layer;
* one page per scenario file in ``envs/`` (``environments/<stem>.md``): its id, the values
  the package reads from it, and the file itself;
* the scenario file format (``environments/scenario-format.md``), every key with its
  keyword, unit, range and default, from the declarations that read the files;
* the committed benchmark figures (``benchmarks/results/*/*.png``) served under
  ``results/``, so the pages show the plots the tables came with.

Nothing here is copied into ``docs/``: the site changes when the code, a scenario or a
committed result does.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import numpy as np
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "rigidrot_gym"
# Reference sections in layer order, bottom up (README, "Layout").
LAYERS = ("physics", "engines", "render", "attitude", "control", "tools")


def modules() -> list[str]:
    """Every module and package of rigidrot_gym, by its dotted name, sorted."""
    found = [PACKAGE]
    for info in pkgutil.walk_packages([str(ROOT / PACKAGE)], prefix=f"{PACKAGE}."):
        found.append(info.name)
    return sorted(found)


def reference_page(module: str) -> str:
    return f"reference/{module}.md"


def scenario_files() -> list[Path]:
    return sorted((ROOT / "envs").glob("*.toml"))


def environment_page(path: Path) -> str:
    return f"environments/{path.stem}.md"


FORMAT_PAGE = "environments/scenario-format.md"


def on_config(config, **kwargs):
    """Add the generated pages to the nav: environments after the overview, then the file
    format; the reference last."""
    nav = config["nav"]
    for entry in nav:
        if isinstance(entry, dict) and "Environments" in entry:
            entry["Environments"] = [
                *entry["Environments"],
                *_environment_nav(),
                {"Scenario file format": FORMAT_PAGE},
            ]
    nav.append({"Reference": _reference_nav()})
    return config


def _environment_nav() -> list[dict[str, str]]:
    from rigidrot_gym.attitude.scenario import load

    return [{load(path).id: environment_page(path)} for path in scenario_files()]


def _reference_nav() -> list:
    names = modules()
    section = [{PACKAGE: reference_page(PACKAGE)}]
    for layer in LAYERS:
        prefix = f"{PACKAGE}.{layer}"
        members = [n for n in names if n == prefix or n.startswith(prefix + ".")]
        section.append({layer: [{n.removeprefix(PACKAGE + "."): reference_page(n)} for n in members]})
    listed = {PACKAGE} | {n for n in names for layer in LAYERS if n.split(".")[1:2] == [layer]}
    missing = sorted(set(names) - listed)
    if missing:
        raise ValueError(f"modules outside the layers {LAYERS}: {missing}; add their layer to docs/hooks.py")
    return section


def on_files(files: Files, config, **kwargs) -> Files:
    for module in modules():
        files.append(File.generated(config, reference_page(module), content=_reference_markdown(module)))
    for path in scenario_files():
        files.append(File.generated(config, environment_page(path), content=_environment_markdown(path)))
    files.append(File.generated(config, FORMAT_PAGE, content=_format_markdown()))
    results = ROOT / "benchmarks" / "results"
    for image in sorted(results.glob("*/*.png")):
        uri = f"results/{image.relative_to(results).as_posix()}"
        files.append(File.generated(config, uri, abs_src_path=str(image)))
    return files


# Markers in hand-written pages, replaced by tables read from the package.
MARKERS = {
    "<!-- rigidrot:methods -->": lambda: _methods_table(),
    "<!-- rigidrot:environments -->": lambda: _environments_table(),
    "<!-- rigidrot:components -->": lambda: _components_table(),
}


# <!-- rigidrot:figures FOLDER -->: every plot committed in benchmarks/results/FOLDER/.
FIGURES = re.compile(r"<!-- rigidrot:figures ([\w-]+) -->")


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    for marker, table in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, table())
    up = "../" * page.file.src_uri.count("/")
    return FIGURES.sub(lambda m: _figures(m.group(1), up), markdown)


def _figures(folder: str, up: str) -> str:
    images = sorted((ROOT / "benchmarks" / "results" / folder).glob("*.png"))
    if not images:
        raise ValueError(f"benchmarks/results/{folder}/ has no plot to show")
    return "\n\n".join(f"![{folder}: {i.stem}]({up}results/{folder}/{i.name})" for i in images)


def _methods_table() -> str:
    """Every registered method (engines included): its module, order, cost and source."""
    import sys

    import rigidrot_gym  # noqa: F401  (registers the engines' methods too)
    from rigidrot_gym.physics.rotation import integrators

    rows = []
    for name in integrators.names():
        method = integrators.get(name)
        owners = [
            m.__name__
            for m in list(sys.modules.values())
            if getattr(m, "__name__", "").startswith(PACKAGE)
            and (getattr(m, "METHOD", None) is method or any(x is method for x in getattr(m, "METHODS", ())))
        ]
        if len(owners) != 1:
            raise ValueError(
                f"method {name!r}: expected one module defining it as METHOD or in METHODS, found {owners}"
            )
        evals = f"{method.torque_evals}" + (
            f" + {method.torque_evals_per_iteration} per iteration"
            if method.torque_evals_per_iteration
            else ""
        )
        order = "exact" if method.order == 0 else str(method.order)
        torque = "yes" if method.accepts_torque else "torque-free only"
        rows.append(f"| [`{name}`][{owners[0]}] | {order} | {evals} | {torque} | {method.source} |")
    header = "| method | order | torque evaluations / step | torque | source |\n|---|---:|---|---|---|\n"
    return header + "\n".join(rows) + "\n"


def _environments_table() -> str:
    from rigidrot_gym.attitude.scenario import load

    rows = []
    for path in scenario_files():
        s = load(path)
        page = environment_page(path).removeprefix("environments/")
        rows.append(f"| [`{s.id}`]({page}) | {s.description} | `envs/{path.name}` |")
    return "| id | task | scenario file |\n|---|---|---|\n" + "\n".join(rows) + "\n"


def _components_table() -> str:
    from rigidrot_gym.attitude.components import reference

    return reference()


def _format_markdown() -> str:
    from rigidrot_gym.attitude.scenario import format_reference

    return format_reference()


def _reference_markdown(module: str) -> str:
    """A module's page: mkdocstrings renders it. A package's page renders its docstring and
    what it defines itself, then links each name of its ``__all__`` to the one page that
    documents it (no second copy of a re-exported class)."""
    source = ROOT / Path(*module.split("."))
    if not (source / "__init__.py").exists():
        return f"::: {module}\n"
    own = _defined_names(source / "__init__.py")
    page = f"::: {module}\n    options:\n      members: {own!r}\n"
    exports = _exports(module, own)
    if exports:
        rows = "\n".join(f"| `{name}` | {link} |" for name, link in exports)
        page += f"\n## Importable from `{module}`\n\n| name | documented at |\n|---|---|\n{rows}\n"
    return page


def _defined_names(init: Path) -> list[str]:
    """Public names a package's ``__init__`` defines itself (not imports), and ``__version__``."""
    names = []
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return [n for n in names if not n.startswith("_") or n == "__version__"]


def _exports(module: str, own: list[str]) -> list[tuple[str, str]]:
    """(name, Markdown link to its reference entry) for each re-exported name of ``__all__``.

    Resolved from the source, following imports, so that nothing heavy is imported (the
    SB3 adapter's module imports stable-baselines3 and torch)."""
    package = importlib.import_module(module)
    lazy = getattr(package, "_LAZY", {})  # PEP 562 names: the module that holds each
    found = []
    for name in getattr(package, "__all__", []):
        if name in own:
            found.append((name, f"[`{module}.{name}`][{module}.{name}]"))
        elif name == "ENV_IDS":
            found.append((name, "the ids of the scenario files: [Environments](../environments/index.md)"))
        else:
            path = _definition(module, name) or (_definition(lazy[name], name) if name in lazy else None)
            if path is None:
                raise ValueError(
                    f"{module}.{name}: cannot find where it is defined, so no reference entry to link"
                )
            found.append((name, f"[`{path}`][{path}]"))
    return found


def _source(module: str) -> Path | None:
    base = ROOT / Path(*module.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _definition(module: str, name: str) -> str | None:
    """The dotted path where ``name``, as seen in ``module``, is defined: in the module
    itself, a submodule, or followed through ``from rigidrot_gym... import name``."""
    if _source(f"{module}.{name}") is not None:
        return f"{module}.{name}"
    source = _source(module)
    if source is None:
        return None
    if name in _defined_names(source):
        return f"{module}.{name}"
    for node in ast.parse(source.read_text()).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _definition(node.module, alias.name)
    return None


def _environment_markdown(path: Path) -> str:
    """The page of one scenario: its id and what it sets, read by the package, then the file."""
    from rigidrot_gym.attitude.scenario import load

    s = load(path)
    moments = _numbers(s.inertia.diagonal())
    diagonal = not np.any(s.inertia - np.diag(s.inertia.diagonal()))
    body = (
        f"I = diag({moments}) kg·m²"
        if diagonal
        else f"tensor with diagonal ({moments}) kg·m², products of inertia"
    )
    torque = _numbers(s.max_torque)
    rows = [
        ("id", f"`{s.id}`"),
        ("task", s.description),
        ("body", body),
        ("torque limit", f"({torque}) N·m per body axis"),
        ("control period", f"{s.dt:g} s, {s.substeps} substep(s) of `{s.integrator}`"),
        ("episode", f"{s.max_episode_steps} steps ({s.max_episode_steps * s.dt:g} s)"),
        (
            "start",
            f"attitude {_attitude(s.start_attitude)}, "
            f"rates ({_numbers(s.start_rate)}) ± {s.start_rate_spread:g} rad/s",
        ),
        ("target", f"attitude {_attitude(s.target_attitude)}"),
        ("success", f"pointing error < {s.pointing_tolerance_deg:g}°, \\|ω\\| < {s.rate_tolerance:g} rad/s"),
        ("safety", f"\\|ω\\| > {s.max_rate:g} rad/s ends the episode"),
        ("realism options", _realism(s)),
    ]
    table = "\n".join(f"| {k} | {v} |" for k, v in rows)
    return f"""# {s.id}

{s.description}.

```python
import gymnasium as gym
import rigidrot_gym  # registers the ids

env = gym.make("{s.id}")
```

Read by [`load`][rigidrot_gym.attitude.scenario.load] from `envs/{path.name}`:

| field | value |
|---|---|
{table}

The observation, action, reward and episode end are those of every id: see
[`AttitudeEnv`][rigidrot_gym.attitude.env.AttitudeEnv]; the realism options are explained
in [Realism options](../realism.md).

## The scenario file

```toml
{path.read_text().rstrip()}
```
"""


def _attitude(value) -> str:
    return f'"{value}"' if isinstance(value, str) else f"[{_numbers(value)}]"


def _numbers(values) -> str:
    return ", ".join(f"{v:g}" for v in values)


def _realism(s) -> str:
    on = []
    if s.wheels:
        on.append(
            f"{s.wheel_layout} reaction wheels ({s.wheel_max_torque:g} N·m, {s.wheel_max_momentum:g} N·m·s)"
        )
    if s.actuator_noise:
        on.append(f"actuator noise {s.actuator_noise:g}")
    if s.actuation_delay:
        on.append("actuation delay")
    if s.disturbance_constant or s.disturbance_random_walk or s.gravity_gradient:
        on.append("disturbances")
    if s.attitude_noise_deg or s.rate_noise or s.rate_bias:
        on.append("sensor noise")
    if s.randomize_inertia or s.randomize_inertia_rotation_deg or s.randomize_torque or s.randomize_start:
        on.append("domain randomisation")
    return ", ".join(on) if on else "none"
