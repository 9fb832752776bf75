"""Layers you can see: the import-linter contract holds, covers every module, hides no cycle
behind a late import, and the cassette layer touches nothing private of vcrpy."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import runpy
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGES = ("pytest_opdecide", "fake_runtimes")


def modules() -> Iterator[tuple[str, Path]]:
    """Every module of both packages: ``(dotted name, file)``."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join(parts), path


def layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = config["tool"]["importlinter"]["contracts"]
    return [
        [name.strip() for name in layer.replace("|", ":").split(":")]
        for layer in contract["layers"]
    ]


def test_the_layers_contract_is_kept() -> None:
    from importlinter.cli import lint_imports

    output = io.StringIO()
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(output):
            code = lint_imports(no_cache=True, no_logo=True)
    finally:
        os.chdir(cwd)
    assert code == 0, output.getvalue()
    assert "1 kept, 0 broken" in output.getvalue()


def test_every_module_is_in_a_layer() -> None:
    """A module left out of the contract could import anything: each one has its layer."""
    named = [name for layer in layers() for name in layer]
    assert len(named) == len(set(named)), "a module is named in two layers"
    roots = {"pytest_opdecide"}  # the package's facade: it imports lazily, at attribute access
    missing = [
        name
        for name, _ in modules()
        if name not in roots and not any(name == n or name.startswith(f"{n}.") for n in named)
    ]
    assert missing == []


def test_the_layers_are_in_the_order_the_project_states() -> None:
    order = [layer[0] for layer in layers()]
    assert order == [
        "pytest_opdecide.plugin",
        "pytest_opdecide.conformance",
        "pytest_opdecide.recording",
        "fake_runtimes",
        "pytest_opdecide.runtimes",
        "pytest_opdecide.decision",
        "pytest_opdecide._nextstep",
        "pytest_opdecide._files",
    ]


def test_the_contract_names_rooms_not_modules() -> None:
    """At most 20 names, each a subpackage or a module directly in a package: a module inside a
    room falls into its room's layer by where it lives, so the contract never lists it."""
    named = [name for layer in layers() for name in layer]
    assert len(named) <= 20
    for name in named:
        parts = name.split(".")
        assert len(parts) <= 2, f"{name} is a module inside a room: name its room"


def test_the_contributing_page_shows_the_rooms_of_the_contract() -> None:
    rooms = runpy.run_path(str(ROOT / "scripts" / "rooms.py"), run_name="rooms")
    page = rooms["PAGE"].read_text(encoding="utf-8")
    assert rooms["written"](page) == page, "run `python scripts/rooms.py --write`"


def test_at_most_15_modules_sit_directly_in_the_package() -> None:
    direct = sorted(path.name for path in (ROOT / "pytest_opdecide").glob("*.py"))
    assert len(direct) <= 15, direct


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_is_over_900_lines(package: str) -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in (ROOT / package).rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 900
    }
    assert long == {}, "split each along its own sections"


def test_no_two_modules_share_a_file_name() -> None:
    """A basename used twice for different jobs makes every search ambiguous."""
    seen: dict[str, list[str]] = {}
    for name, path in modules():
        if path.name != "__init__.py":
            seen.setdefault(path.name, []).append(name)
    assert {base: names for base, names in seen.items() if len(names) > 1} == {}


def private_imports(tree: ast.Module) -> list[str]:
    """The private modules or names of ``pytest_opdecide`` that a module imports."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if "._" in f"{a.name}."[len("pytest_opdecide") :]]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pytest_opdecide"):
            module = node.module or ""
            if any(part.startswith("_") for part in module.split(".")):
                found.append(module)
            found += [f"{module}.{a.name}" for a in node.names if a.name.startswith("_")]
    return found


@pytest.mark.parametrize("module", ["fake_runtimes", "pytest_opdecide.strategies"])
def test_fakes_and_strategies_use_public_names_of_pytest_opdecide_only(module: str) -> None:
    """Outside their own room: the private modules of the strategies package import each other."""
    for name, path in modules():
        if name == module or name.startswith(f"{module}."):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            own = f"{module}."
            outside = [found for found in private_imports(tree) if not found.startswith(own)]
            assert outside == [], name


def test_the_names_tools_build_on_are_public_and_documented() -> None:
    import doctest

    from pytest_opdecide import options

    for name in options.__all__:
        value = getattr(options, name)
        if callable(value):
            assert value.__doc__, name
    assert doctest.testmod(options).failed == 0


LATE_IMPORTS = {
    ("fake_runtimes", "fake_runtimes"): "start-up of a scripted test: the question fakes (and "
    "the question side's models, providers and httpx) load with the first one asked for",
    ("fake_runtimes", "fake_runtimes._providers"): "start-up of a scripted test: the fake "
    "decision provider (and the question side) loads with its first use",
    ("pytest_opdecide.plugin", "fake_runtimes"): "start-up: pytest loads the plugin in every "
    "run; the fakes (and pydantic, hypothesis...) load with the first test that uses them",
    (
        "pytest_opdecide.plugin",
        "pytest_opdecide.plugin._real_components",
    ): "start-up: the real runtimes, httpx and vcrpy load with the first cassette or live test",
    ("pytest_opdecide.cli", "pytest_opdecide.decision"): "start-up of the opdecide command: "
    "each subcommand loads what it needs",
    ("pytest_opdecide.cli", "pytest_opdecide.conformance"): "start-up of the opdecide "
    "command: the conformance suite (hypothesis) loads for `opdecide check` only",
    ("pytest_opdecide.plugin._snapshots", "pytest_opdecide.decision"): "start-up: the plugin loads "
    "this module; the decision library loads when a menu is first rendered",
    (
        "pytest_opdecide.plugin._live_runs",
        "pytest_opdecide.plugin._pass_rates",
    ): "start-up: the plugin "
    "registers the live runs in every session; the counting (and the decision library it "
    "re-reads picks with) loads with the first repeated live test",
}
"""Imports inside functions, each with why it is late (none hides a cycle: the contract above
sees them, and each goes down the layers)."""


def late_imports() -> Iterator[tuple[str, str, int]]:
    for name, path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import):
                    imported = [alias.name for alias in inner.names]
                elif isinstance(inner, ast.ImportFrom) and inner.level == 0:
                    imported = [inner.module or ""]
                else:
                    continue
                for target in imported:
                    if target.split(".")[0] in PACKAGES:
                        yield name, target, inner.lineno


def test_every_late_import_of_the_project_is_justified() -> None:
    found = {(module, target) for module, target, _ in late_imports()}
    unexplained = sorted(found - set(LATE_IMPORTS))
    assert unexplained == [], "a function-level import: move it up, or say why it is late"
    assert sorted(set(LATE_IMPORTS) - found) == [], "a justified late import is gone: drop it"


# --- vcrpy through its public API only ------------------------------------------------------

PUBLIC_VCR_MODULES = {
    "vcr",
    "vcr.errors",
    "vcr.persisters.filesystem",
    "vcr.record_mode",
    "vcr.request",
}
"""The vcrpy modules the cassette layer may import (their public names only)."""


def vcrpy_users() -> list[tuple[str, Path, ast.Module]]:
    found = []
    for name, path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Import) and any(a.name.startswith("vcr") for a in node.names)
            ) or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "vcr"):
                found.append((name, path, tree))
                break
    return found


def test_the_cassette_layer_imports_public_vcrpy_modules_and_names_only() -> None:
    users = vcrpy_users()
    assert {name for name, _, _ in users} == {
        "pytest_opdecide._cassettes._matching",
        "pytest_opdecide._cassettes._vcr",
    }
    for name, _, tree in users:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "vcr":
                        assert alias.name in PUBLIC_VCR_MODULES, (name, alias.name)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("vcr"):
                assert node.module in PUBLIC_VCR_MODULES, (name, node.module)
                for alias in node.names:
                    assert not alias.name.startswith("_"), (name, alias.name)


def test_the_cassette_layer_reads_no_private_attribute_of_another_object() -> None:
    """In a module that uses vcrpy, only ``self`` has private attributes."""
    for name, _, tree in vcrpy_users():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
                if node.attr.startswith("__") and node.attr.endswith("__"):
                    continue
                owner = node.value
                where = f"{name}, line {node.lineno}: .{node.attr} of another object"
                assert isinstance(owner, ast.Name), where
                assert owner.id in {"self", "cls"}, where


FORBIDDEN = (
    "httpx_stubs",
    "._vcr_request",
    "._deserialize_response",
    "._from_dict",
    "._to_dict",
    "._loaded_count",
    "._played_interactions",
    "._before_record_request",
    "custom_patches",
    "__dict__[",
)
"""What the package must never do with vcrpy (or any library): patch its module globals, read
or override its private names, stash keys in its objects."""


@pytest.mark.parametrize("needle", FORBIDDEN)
def test_no_module_of_the_package_touches_vcrpy_internals(needle: str) -> None:
    for name, path in modules():
        text = path.read_text(encoding="utf-8")
        assert needle not in text, f"{name} contains {needle!r}"


def test_no_module_of_the_package_changes_sys_modules() -> None:
    def is_sys_modules(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "modules"
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        )

    for name, path in modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[ast.AST] = []
            if isinstance(node, ast.Assign | ast.Delete):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                assert not (isinstance(target, ast.Subscript) and is_sys_modules(target.value)), (
                    f"{name}, line {node.lineno}"
                )
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                assert not (
                    is_sys_modules(node.func.value)
                    and node.func.attr in {"__setitem__", "setdefault", "update", "pop"}
                ), f"{name}, line {node.lineno}"


def test_only_the_plugin_side_and_the_conformance_suites_import_pytest() -> None:
    """pytest glue (fixtures, stash, ``pytest.fail``) lives on the plugin side; the conformance
    suites are pytest test classes. No library module imports pytest or the plugin."""
    allowed = set(layers()[0]) | {"pytest_opdecide.conformance"}
    for name, path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            (node.module or "").split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 0
        }
        plugin = any(
            isinstance(node, ast.ImportFrom) and node.module == "pytest_opdecide.plugin"
            for node in ast.walk(tree)
        )
        if not any(name == a or name.startswith(f"{a}.") for a in allowed):
            assert "pytest" not in imported, name
            assert not plugin, name


@pytest.mark.parametrize("name", ["RECORD_MODES", "SECRET_HEADERS", "SECRET_NAME", "SETTINGS"])
def test_a_concept_is_defined_once(name: str) -> None:
    """Two definitions of one list drift apart (two lists of secret headers leaked a
    credential): each is assigned in one module, which every other imports."""
    places = [
        f"{module}:{node.lineno}"
        for module, path in modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name) and target.id == name
    ]
    assert len(places) == 1, places
