"""The plugin side of cassettes: where each test's cassette lives, and the fixture glue.

A ``cassette=True`` test's ``runtime`` and ``decision_provider`` fixtures wire its HTTP requests
to ``<rootdir>/<cassette_dir>/<test module>/<[Class.]test name>.yaml`` through
:func:`~pytest_opdecide._cassettes.use_cassette`; what only pytest knows (the test's id and
outcome, the run's other modules, the project's scrub hook) comes from here, and so do the
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

from pytest_opdecide._cassettes import use_cassette
from pytest_opdecide._pytest_state import call_passed
from pytest_opdecide._scrub import DEFAULT_BODY_FIELDS
from pytest_opdecide._settings import Settings
from pytest_opdecide._tape import Tape

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


def cassette_path(rootdir: Path, node: Any, settings: Settings) -> Path:
    """``<rootdir>/<cassette_dir>/<test module>/<[Class.]test name>.yaml``."""
    module = Path(str(node.path)).stem
    name = node.name
    cls = getattr(node, "cls", None)
    if cls is not None:
        name = f"{cls.__name__}.{name}"
    base = Path(settings.cassette_dir)
    if not base.is_absolute():
        base = rootdir / base
    return base / module / f"{_short(name)}.yaml"


_folder_owners = pytest.StashKey[dict[Path, Path]]()


def _claim_folder(config: pytest.Config, folder: Path, module: Path) -> None:
    """Fail the test when another test module of this run already uses its cassette folder.

    The folder is named after the module's file name alone, so ``tests/a/test_x.py`` and
    ``tests/b/test_x.py`` would read and write each other's cassettes.
    """
    owners = config.stash.setdefault(_folder_owners, {})
    owner = owners.setdefault(folder, module)
    if owner != module:
        pytest.fail(
            f"two test modules share the cassette folder {folder}:\n"
            f"    {owner}\n    {module}\n"
            "Cassettes are named after the module's file name and the test's name, so tests "
            "of the same name would replay and overwrite each other's cassettes. Rename one "
            "module, or give one module a folder of its own:\n"
            f'    pytestmark = pytest.mark.opdecide(cassette_dir="cassettes/{module.parent.name}")',
            pytrace=False,
        )


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
    _claim_folder(request.config, path.parent, Path(str(node.path)))
    record = "none" if mode == "replay" else settings.record
    hook = request.config.hook
    if mode == "replay" and not path.is_file():
        pytest.fail(
            f"no cassette at {path} for {node.nodeid}.\n"
            "Record it once: start the local model (scripts/local-model start) and run\n"
            f"    pytest '{node.nodeid}' --opdecide-record=once",
            pytrace=False,
        )

    def scrub_hook(interaction: dict[str, Any]) -> dict[str, Any] | None:
        results = hook.pytest_opdecide_scrub_interaction(interaction=interaction, settings=settings)
        for result in results:
            if result is not None:
                interaction = result
        return interaction

    with use_cassette(
        path,
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
