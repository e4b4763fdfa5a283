"""The documentation site builds without a warning and documents everything it should.

``mkdocs build --strict`` runs once (about 20 s) into a scratch folder: a broken link, a
missing snippet, a docstring reference that resolves to nothing or a docstring that
mkdocstrings cannot parse fails it. The built pages are then checked against what the
package itself reports, independently of the hooks that generated them: every id
registered with Gymnasium has a page with its scenario file, every public name of
``rigidrot_gym`` and of each module (read from the source) has a reference entry, every
registered method is on the integrators page, and the committed benchmark tables appear
row for row.
"""

from __future__ import annotations

import ast
import html
import inspect
import logging
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocstrings_handlers.python", reason="needs the [docs] extra")
pytest.importorskip("material", reason="needs the [docs] extra")

import importlib

from rigidrot_gym.physics.rotation import integrators

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "rigidrot_gym"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    env["NO_MKDOCS_2_WARNING"] = "1"
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = out.stdout + out.stderr
    assert out.returncode == 0, log[-5000:]
    problems = [line for line in log.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert not problems, "\n".join(problems)
    return folder


def _page(site: Path, uri: str) -> str:
    path = site / uri / "index.html"
    assert path.is_file(), f"no page {uri}"
    return path.read_text()


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _ids(site: Path) -> set[str]:
    found = set()
    for path in (site / "reference").rglob("index.html"):
        found.update(re.findall(r'id="([^"]+)"', path.read_text()))
    return found


def _table_rows(page: str) -> set[tuple[str, ...]]:
    rows = set()
    for row in re.findall(r"<tr>(.*?)</tr>", page, flags=re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
        rows.add(tuple(" ".join(_text(c).split()) for c in cells))
    return rows


def _markdown_rows(path: Path) -> list[tuple[str, ...]]:
    """The body rows of every Markdown table in ``path`` (headers, those followed by |---|, left out)."""
    lines = path.read_text().splitlines()
    rows = []
    for line, after in zip(lines, [*lines[1:], ""], strict=True):
        if (
            line.startswith("|")
            and not re.fullmatch(r"[|\-: ]+", line)
            and not re.fullmatch(r"[|\-: ]+", after)
        ):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            rows.append(tuple(" ".join(c.replace("\\|", "|").replace("`", "").split()) for c in cells))
    return rows


def test_every_registered_id_has_a_page_with_its_scenario_file(site):
    import gymnasium as gym

    from rigidrot_gym.attitude.scenario import builtin

    ids = sorted(k for k in gym.registry if k.startswith("RigidRot/"))
    assert len(ids) >= 4
    by_id = {s.id: Path(s.source) for s in builtin()}
    assert sorted(by_id) == ids
    index = _page(site, "environments")
    for env_id in ids:
        path = by_id[env_id]
        page = _page(site, f"environments/{path.stem}")
        text = _text(page)
        assert env_id in _text(page.split("</h1>")[0]), f"{env_id}: not the page's title"
        # The scenario file itself, every line of it.
        for line in path.read_text().splitlines():
            assert line.strip() in text, f"{env_id}: {line!r} of {path.name} is not on its page"
        assert f'href="{path.stem}/"' in index, f"{env_id}: the environments page does not link to it"


def test_the_environments_page_shows_the_observation_the_env_lists(site):
    # The docstring's table is completed at import, after the source that mkdocstrings reads.
    import gymnasium as gym

    env = gym.make("RigidRot/NadirPoint-v0", sun=True, actuation_delay=True).unwrapped
    for uri in ("environments", "reference/rigidrot_gym.attitude.env"):
        text = " ".join(_text(_page(site, uri)).split())
        for block in env.observation_columns():
            assert " ".join(block.meaning.replace("``", "").split()) in text, (uri, block.name)


def _canonical(value) -> str | None:
    if inspect.ismodule(value):
        return value.__name__
    if inspect.isclass(value) or inspect.isfunction(value):
        return f"{value.__module__}.{value.__qualname__}"
    return None


@pytest.mark.parametrize(
    "package", ["rigidrot_gym", "rigidrot_gym.physics", "rigidrot_gym.control", "rigidrot_gym.render"]
)
def test_every_public_name_has_a_reference_entry(site, package):
    module = importlib.import_module(package)
    ids = _ids(site)
    for name in module.__all__:
        if name == "ENV_IDS":
            continue  # a list of ids: the environment pages, checked above
        value = getattr(module, name)
        path = _canonical(value)
        if path is None:
            assert any(i.endswith(f".{name}") for i in ids), f"{module.__name__}.{name}: no reference entry"
        else:
            assert path in ids, f"{module.__name__}.{name} ({path}): no reference entry"


def _modules() -> list[str]:
    return ["rigidrot_gym"] + [
        m.name for m in pkgutil.walk_packages([str(PACKAGE_DIR)], prefix="rigidrot_gym.")
    ]


def _public_definitions(module: str) -> list[str]:
    source = ROOT / Path(*module.split("."))
    source = source / "__init__.py" if source.is_dir() else source.with_suffix(".py")
    tree = ast.parse(source.read_text())
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_")
    ]


def test_every_module_function_and_class_has_a_reference_entry(site):
    ids = _ids(site)
    modules = _modules()
    assert len(modules) > 60
    missing = [m for m in modules if m not in ids]
    missing += [f"{m}.{name}" for m in modules for name in _public_definitions(m) if f"{m}.{name}" not in ids]
    assert not missing, f"no reference entry for: {missing}"


def test_every_registered_method_is_on_the_integrators_page(site):
    page = _page(site, "integrators")
    tables = [
        t for t in re.findall(r"<table>.*?</table>", page, flags=re.S) if "torque evaluations / step" in t
    ]
    assert len(tables) == 1, "the integrators page has no table of the registered methods"
    rows = {row[0]: row for row in _table_rows(tables[0]) if row}
    for name in integrators.names():
        method = integrators.get(name)
        assert name in rows, f"method {name!r} is not in the table of the integrators page"
        assert rows[name][1] == ("exact" if method.order == 0 else str(method.order)), rows[name]
    assert 'src="../results/accuracy/work_precision.png"' in page
    assert (site / "results" / "accuracy" / "work_precision.png").is_file()


@pytest.mark.parametrize(
    ("uri", "results"),
    [
        ("integrators", "accuracy/headline.md"),
        ("integrators", "accuracy/accuracy.md"),
        ("engines", "crosscheck/crosscheck.md"),
        ("controllers", "control/control.md"),
        ("leaderboard", "suite/leaderboard.md"),
    ],
)
def test_the_committed_results_are_included_row_for_row(site, uri, results):
    expected = _markdown_rows(ROOT / "benchmarks" / "results" / results)
    assert expected
    shown = _table_rows(_page(site, uri))
    missing = [row for row in expected if row not in shown]
    assert not missing, f"rows of {results} not on the {uri} page: {missing[:3]}"


def test_the_conventions_page_states_the_quaternion_conventions(site):
    text = " ".join(_text(_page(site, "conventions")).split())
    for phrase in ("scalar-first", "[w, x, y, z]", "Hamilton", "body to world", "q̇ = ½ q ⊗ (0, ω)"):
        assert phrase in text, phrase


# The cross-reference extension, on the package as griffe loads it (no build needed).


@pytest.fixture(scope="module")
def crossrefs():
    import griffe

    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import crossrefs
    finally:
        sys.path.remove(str(ROOT / "docs"))
    return crossrefs, griffe.load("rigidrot_gym", search_paths=[str(ROOT)])


def test_roles_resolve_as_python_would(crossrefs):
    module, root = crossrefs
    quaternion = root["physics.rotation.quaternion"]
    assert (
        module._resolve(root, quaternion, "to_scalar_last")
        == "rigidrot_gym.physics.rotation.quaternion.to_scalar_last"
    )
    # Through an import of the module where the docstring stands.
    propagate = root["physics.rotation.propagate"]
    assert (
        module._resolve(root, propagate, "Trajectory")
        == "rigidrot_gym.physics.rotation.trajectory.Trajectory"
    )
    # Inherited: PD documents QuaternionFeedback's constructor.
    pd = root["control.pd.PD"]
    assert (
        module._resolve(root, pd, "critically_damped")
        == "rigidrot_gym.control.quaternion_feedback.QuaternionFeedback.critically_damped"
    )
    assert module._resolve(root, quaternion, "no_such_function") is None


def test_an_unresolved_role_is_a_warning(crossrefs, caplog):
    module, root = crossrefs
    scope = root["physics.rotation.quaternion"]
    role = ":func:`~rigidrot_gym.physics.rotation.quaternion.no_such_function`"
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.rigidrot_crossrefs"):
        text = module.ROLE.sub(lambda m: module.SphinxRolesToCrossrefs()._link(root, scope, m), role)
    assert text == "`no_such_function`"
    assert "no_such_function" in caplog.text
    linked = module.ROLE.sub(
        lambda m: module.SphinxRolesToCrossrefs()._link(root, scope, m),
        ":class:`numpy.ndarray` :func:`multiply`",
    )
    assert linked == "`numpy.ndarray` [`multiply`][rigidrot_gym.physics.rotation.quaternion.multiply]"


def test_the_components_page_names_every_component_and_shows_real_signatures():
    # The stage table links every module of attitude.components (a new one must be placed in
    # a stage), and the excerpts' signatures are the pipeline's and its stages', read from
    # their source.
    import rigidrot_gym.attitude.components as components

    page = (ROOT / "docs" / "components.md").read_text(encoding="utf-8")
    modules = [m.name for m in pkgutil.iter_modules(components.__path__)]
    missing = [m for m in modules if f"][rigidrot_gym.attitude.components.{m}]" not in page]
    assert not missing, f"docs/components.md's stage table lacks {missing}"
    attitude = ROOT / "rigidrot_gym" / "attitude"
    functions = {
        node.name: [a.arg for a in node.args.args]
        for path in [attitude / "pipeline.py", *sorted((attitude / "stages").glob("*.py"))]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef)
    }
    assert "load" in functions
    for name, arguments in re.findall(r"def (\w+)\(([^)]*)\):", page):
        if name in functions:
            assert [a.strip() for a in arguments.split(",")] == functions[name], name
