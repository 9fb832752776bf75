"""Menu snapshots: the rendered menu of a test compared with a file stored next to the test."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from pytest_opdecide._files import check_inside, write_atomic
from pytest_opdecide.plugin._case_twins import exact_digest

__all__ = ["MenuSnapshot", "SnapshotMismatch", "snapshot_path"]


class SnapshotMismatch(AssertionError):
    """The rendered menu differs from its stored snapshot (or none is stored)."""

    __module__ = "pytest_opdecide"


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _safe(name: str, limit: int = 120) -> str:
    cleaned = _UNSAFE.sub("_", name).strip("_") or "snapshot"
    if len(cleaned) <= limit:
        return cleaned
    import hashlib

    digest = hashlib.sha1(name.encode()).hexdigest()[:10]
    return f"{cleaned[: limit - 11]}-{digest}"


def shown_in_file_name(name: str) -> str:
    """How a test's name appears in its snapshot's file name (characters cleaned up)."""
    return _safe(name)


def snapshot_path(
    test_file: Path, test_name: str, snapshot_dir: str, name: str | None, *, distinct: bool = False
) -> Path:
    """``<test dir>/<snapshot_dir>/<module stem>/<test name>[-<hash>][-<name>].txt``.

    ``distinct``: the test has a case twin (:mod:`._case_twins`), and its name gets the hash of
    its exact spelling, so that the two never share a file where case is ignored.
    """
    stem = _safe(test_name) + (f"-{exact_digest(test_name)}" if distinct else "")
    stem += f"-{_safe(name)}" if name else ""
    return test_file.parent / snapshot_dir / test_file.stem / f"{stem}.txt"


class MenuSnapshot:
    """Compare rendered menus with snapshot files stored next to the test.

    Args:
        test_file: The test module's path.
        test_name: The test's name (parametrised ids included).
        snapshot_dir: The directory name (``__menus__`` by default).
        update: Write snapshots instead of comparing.
        within: The folder no snapshot leaves through a link (the project's root); by default
            the test module's folder.
        distinct: The test has a case twin: its file names get the hash of its exact name.
    """

    def __init__(
        self,
        test_file: Path,
        test_name: str,
        snapshot_dir: str,
        update: bool,
        within: Path | None = None,
        *,
        distinct: bool = False,
    ) -> None:
        self.test_file = test_file
        self.distinct = distinct
        self.test_name = test_name
        self.snapshot_dir = snapshot_dir
        self.update = update
        self.within = within
        self.used: list[Path] = []

    def assert_match(self, options_or_text: Any, name: str | None = None) -> None:
        """Assert the rendered menu (or a given text) equals the stored snapshot.

        Args:
            options_or_text: Options (dict or list form), rendered with
                ``decision.render_options``, or a string compared as is.
            name: Tells several snapshots of one test apart.

        Raises:
            SnapshotMismatch: The text differs (the message holds a unified diff), or no
                snapshot is stored yet.
            LinkLeavesFolder: A link on the way to the snapshot leads outside the project.
        """
        __tracebackhide__ = True
        if isinstance(options_or_text, str):
            text = options_or_text
        else:
            from pytest_opdecide.decision import render_options

            text = render_options(options_or_text)
        path = snapshot_path(
            self.test_file, self.test_name, self.snapshot_dir, name, distinct=self.distinct
        )
        within = self.within or self.test_file.parent
        if not path.is_relative_to(within):
            within = self.test_file.parent
        check_inside(path, within, fix="set opdecide_snapshot_dir to a folder name")
        if path in self.used:
            raise ValueError(
                f"snapshot {path.name} is asserted twice in one test; pass name=... to tell "
                "the snapshots apart"
            )
        twins = [used for used in self.used if used.name.lower() == path.name.lower()]
        if twins:
            raise ValueError(
                f"snapshots {twins[0].name} and {path.name} of one test differ only in case: "
                "on macOS and Windows they would be one file. Pass names that differ in more "
                "than case."
            )
        self.used.append(path)
        if self.update:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                write_atomic(path, text)
            return
        if not path.exists():
            plain = snapshot_path(self.test_file, self.test_name, self.snapshot_dir, name)
            if plain != path and plain.is_file():
                raise SnapshotMismatch(
                    f"no menu snapshot stored at {path}, but there is one at\n    {plain}\n"
                    f"{self.test_name} has a case twin in {self.test_file.name} (a test whose "
                    "name differs only in case): on macOS and Windows the two would share that "
                    "file, so each now has a file of its own. If it holds this test's menu, "
                    f"move it:\n    git mv {plain} {path}\n"
                    "else run pytest with --opdecide-update-snapshots to write it."
                )
            raise SnapshotMismatch(
                f"no menu snapshot stored at {path}.\n"
                "Run pytest with --opdecide-update-snapshots to write it, then review and "
                "commit it."
            )
        stored = path.read_text(encoding="utf-8")
        if stored == text:
            return
        diff = "".join(
            difflib.unified_diff(
                stored.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"{path.name} (stored)",
                tofile="rendered now",
            )
        )
        raise SnapshotMismatch(
            f"the menu differs from its snapshot {path}:\n{diff}\n"
            "If the change is intended, run pytest with --opdecide-update-snapshots."
        )
