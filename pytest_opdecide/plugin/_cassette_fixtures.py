"""The plugin side of cassettes: where each test's cassette lives, and the fixture glue.

A ``cassette=True`` test's ``runtime`` and ``decision_provider`` fixtures wire its HTTP requests
to ``<rootdir>/<cassette_dir>/<test module's path>/<[Class.]test name>.yaml`` through
:func:`~pytest_opdecide._cassettes._cassette.use_cassette`; what only pytest knows (the test's id
and outcome, the run's other modules, the project's scrub hook) comes from here, and so do the
failures that name a fix (``pytest.fail``).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_opdecide._cassettes._cassette import MachinePaths, use_cassette
from pytest_opdecide._cassettes._scrub import DEFAULT_BODY_FIELDS
from pytest_opdecide._cassettes._tape import Tape
from pytest_opdecide._files import LinkLeavesFolder, check_inside
from pytest_opdecide.plugin._case_twins import exact_digest, needs_digest
from pytest_opdecide.plugin._outcomes import call_passed
from pytest_opdecide.plugin._settings import Settings

__all__ = ["cassette_for", "cassette_path"]

_ID_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _short(name: str, limit: int = 80) -> str:
    """A file-name-safe, stable form of a test name; long parametrised ids get a hash."""
    cleaned = _ID_SAFE.sub("_", name).strip("_") or "test"
    if len(cleaned) <= limit and cleaned == name:
        return cleaned
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    base, _, _ = name.partition("[")
    base = _ID_SAFE.sub("_", base).strip("_") or "test"
    room = max(8, limit - len(base) - 10)
    param = _ID_SAFE.sub("_", name[len(base) :]).strip("_")[:room]
    return f"{base}-{param}-{digest}" if param else f"{base}-{digest}"


def _module_parts(rootdir: Path, module: Path) -> tuple[str, ...]:
    """The test module's path under the rootdir, without ``.py`` (``tests/orders/test_flow``);
    a module outside the rootdir gets ``_outside/<its folder's hash>/<name>``."""
    try:
        parts = module.with_suffix("").relative_to(rootdir).parts
    except ValueError:
        digest = hashlib.sha256(str(module.parent).encode()).hexdigest()[:8]
        return ("_outside", digest, _short(module.stem))
    return tuple(_short(part) for part in parts)


_INSIDE_FIX = "set opdecide_cassette_dir to a folder of the project"


def cassette_folder(rootdir: Path, settings: Settings) -> Path:
    """The folder no cassette leaves: the project's root, or the configured absolute
    ``cassette_dir`` outside it."""
    base = Path(settings.cassette_dir)
    return base if base.is_absolute() and not base.is_relative_to(rootdir) else rootdir


def cassette_path(rootdir: Path, node: Any, settings: Settings) -> Path:
    """``<rootdir>/<cassette_dir>/<test module's path>/<[Class.]test name>.yaml``: one file per
    test of the session, whatever the modules' names (``tests/orders/test_flow.py`` and
    ``tests/refunds/test_flow.py`` have folders of their own), on every xdist worker, and on
    every file system: a test with a case twin (``test_A`` beside ``test_a``) gets the hash of
    its exact name (``test_A-1a2b3c4d.yaml``; see :mod:`._case_twins`)."""
    classes = [item.name for item in node.listchain() if isinstance(item, pytest.Class)]
    base = Path(settings.cassette_dir)
    if not base.is_absolute():
        base = rootdir / base
    folder = base.joinpath(*_module_parts(rootdir, Path(str(node.path))))
    name = ".".join([*classes, node.name])
    stem = _short(name)
    # A name kept as it is could be a case twin's too (a hashed one never is).
    if stem == name and needs_digest(node, str):
        stem = f"{stem}-{exact_digest(name)}"
    return folder / f"{stem}.yaml"


def _former_path(rootdir: Path, node: Any, settings: Settings) -> Path:
    """Where earlier versions put the cassette: ``<cassette_dir>/<module name>/...``."""
    cls = getattr(node, "cls", None)
    name = f"{cls.__name__}.{node.name}" if cls is not None else node.name
    base = Path(settings.cassette_dir)
    if not base.is_absolute():
        base = rootdir / base
    return base / Path(str(node.path)).stem / f"{_short(name)}.yaml"


def _no_cassette(path: Path, node: Any, rootdir: Path, settings: Settings) -> str:
    plain = path.with_name(path.name.rpartition("-")[0] + ".yaml")
    if "-" in path.stem and needs_digest(node, str) and plain.is_file():
        return (
            f"no cassette at {path} for {node.nodeid}, but there is one at\n    {plain}\n"
            f"{node.name} has a case twin in its module (a test whose name differs only in "
            "case): on macOS and Windows the two would share that file, so each now has a file "
            "of its own. If it holds this test's interactions, move it:\n"
            f"    git mv {plain} {path}"
        )
    old = _former_path(rootdir, node, settings)
    if old != path and old.is_file():
        return (
            f"no cassette at {path} for {node.nodeid}, but there is one where earlier versions "
            f"of pytest-opdecide put it:\n    {old}\nCassettes are now named after the test "
            "module's path, so that same-named modules never share one. Move it:\n"
            f"    git mv {old} {path}"
        )
    return (
        f"no cassette at {path} for {node.nodeid}.\n"
        "Record it once with the model server running at base_url (--opdecide-base-url=URL, "
        "or opdecide_base_url in the ini file):\n"
        f"    pytest '{node.nodeid}' --opdecide-record=once"
    )


def _machine_paths(request: pytest.FixtureRequest) -> MachinePaths:
    """This machine's paths, with the project's root (pytest's rootdir) and pytest's temporary
    folder of the run: what a cassette names as ``<PROJECT>`` and ``<PYTEST-TMP>``."""
    factory = request.getfixturevalue("tmp_path_factory")
    return MachinePaths.current(project=request.config.rootpath, pytest_tmp=factory.getbasetemp())


@contextlib.contextmanager
def cassette_for(request: pytest.FixtureRequest, settings: Settings, mode: str) -> Iterator[Tape]:
    """Wire every HTTP request of the test to its cassette (replay or record).

    Replay (``record=none``): requests not in the cassette fail with a diff; interactions
    never replayed fail the test at teardown unless ``allow_unused``. Record: new interactions
    are scrubbed and written atomically at teardown, only when the test passed (a test that
    passed without any request gets an empty cassette, so that its replay finds one).
    """
    node = request.node
    path = cassette_path(request.config.rootpath, node, settings)
    record = "none" if mode == "replay" else settings.record
    hook = request.config.hook
    try:
        check_inside(path, cassette_folder(request.config.rootpath, settings), fix=_INSIDE_FIX)
    except LinkLeavesFolder as refused:
        pytest.fail(str(refused), pytrace=False)
    if mode == "replay" and not path.is_file():
        pytest.fail(_no_cassette(path, node, request.config.rootpath, settings), pytrace=False)

    def scrub_hook(interaction: dict[str, Any]) -> dict[str, Any] | None:
        results = hook.pytest_opdecide_scrub_interaction(interaction=interaction, settings=settings)
        for result in results:
            if result is not None:
                interaction = result
        return interaction

    with use_cassette(
        path,
        machine_paths=_machine_paths(request),
        record=record,
        volatile=tuple(settings.volatile),
        # Configured fields add to the defaults: naming one field must not unprotect the rest.
        scrub_fields=tuple(dict.fromkeys((*DEFAULT_BODY_FIELDS, *settings.scrub_fields))),
        allow_unused=settings.allow_unused,
        nodeid=node.nodeid,
        scrub_hook=scrub_hook,
        passed=lambda: call_passed(node),
    ) as cassette:
        yield cassette
