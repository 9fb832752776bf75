"""Writing files whole or not at all: cassettes, recordings and menu snapshots.

A file is written to a temporary file first, then renamed over its final name. The temporary
file lives in a hidden folder of its own next to the final file (``.opdecide-tmp-...``), made
for this one write and removed after it, which holds a ``.gitignore`` that ignores everything in
it, itself included: a write interrupted by a crash or a ``kill -9`` leaves nothing that
``git add`` would pick up, and a later write to the same folder removes what such a write left
behind once it is :data:`STALE_AFTER_S` seconds old.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from pathlib import Path

__all__ = ["STALE_AFTER_S", "TEMPORARY_FOLDER", "LinkLeavesFolder", "check_inside", "write_atomic"]

TEMPORARY_FOLDER = ".opdecide-tmp-"
"""How the hidden folder of each write begins (a random part follows)."""
STALE_AFTER_S = 600.0
"""A temporary folder this old (in seconds) belongs to a write that never finished."""
_GITIGNORE = b"*\n"
"""Ignores everything in its folder, itself included; one write of two bytes (a file cut short
still holds ``*``)."""


class LinkLeavesFolder(ValueError):
    """A path that the plugin reads or writes leads, through a link, outside its folder."""

    __module__ = "pytest_opdecide"


def check_inside(path: Path, folder: Path, *, fix: str) -> None:
    """Refuse ``path`` when a link on the way to it leads outside ``folder``.

    Cassettes and snapshots arrive in pull requests, links among them: one planted at
    ``cassettes/tests/test_x`` and pointing at ``~/.config`` would have the next recording
    write there. ``folder`` (the project's root, or a folder the user configured) is trusted
    as it is; every link below it must stay below it.

    Raises:
        LinkLeavesFolder: Naming the link, where it leads and ``fix``.
    """
    root = folder.resolve()
    if path.is_relative_to(folder) and path.resolve().is_relative_to(root):
        return
    step = folder
    for part in path.relative_to(folder).parts if path.is_relative_to(folder) else ():
        step = step / part
        if step.is_symlink() and not step.resolve().is_relative_to(root):
            raise LinkLeavesFolder(
                f"refusing to use {path}: {step} is a link to {step.resolve()}, outside "
                f"{folder}. Nothing is read or written outside the project through a link "
                f"(it may have come in a pull request): remove it, or {fix}."
            )
    raise LinkLeavesFolder(f"refusing to use {path}: it is outside {folder}; {fix}.")


def _umask() -> int:
    # Read where the system shows it: setting it to read it back races with other threads.
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _file_mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _remove_stale(folder: Path) -> None:
    """Remove the temporary folders of writes that never finished (old enough to be sure).

    The folder being written to is untrusted (a cassette folder arrives in pull requests):
    nothing here follows a link. Each candidate is opened with ``O_NOFOLLOW`` as a directory,
    checked to be a real directory that this process could have made, and emptied through its
    file descriptor, so that a link planted under the name of a temporary folder, or swapped in
    while this runs, is never entered; only the files a write leaves behind are removed (links
    among them are removed as links), never a folder inside.
    """
    limit = time.time() - STALE_AFTER_S
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.startswith(TEMPORARY_FOLDER):
            continue
        with contextlib.suppress(OSError):
            _remove_stale_one(folder, name, limit)


_NO_FOLLOW_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)


def _remove_stale_one(folder: Path, name: str, limit: float) -> None:
    parent = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        before = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if not stat.S_ISDIR(before.st_mode) or before.st_mtime >= limit:
            return  # a link, a file, or a write still under way
        hidden = os.open(name, _NO_FOLLOW_DIRECTORY, dir_fd=parent)
        try:
            opened = os.fstat(hidden)
            if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
                return  # swapped between the two looks
            for entry in os.scandir(hidden):
                if not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.name, dir_fd=hidden)
        finally:
            os.close(hidden)
        os.rmdir(name, dir_fd=parent)
    finally:
        os.close(parent)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all.

    The text goes to a temporary file in a hidden folder next to ``path`` (the same file
    system; see the module's docstring), is flushed to disk, and replaces ``path`` in one
    rename: a reader (or a crash) never sees half a file, and ``git add`` never sees the
    temporary file. The file keeps the mode of the one it replaces, else gets the mode a new
    file would (0666 less the umask), not the private mode of the temporary file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(path.parent)
    hidden = Path(tempfile.mkdtemp(prefix=TEMPORARY_FOLDER, dir=path.parent))
    ignore = hidden / ".gitignore"
    tmp = hidden / path.name
    try:
        fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, _GITIGNORE)
        finally:
            os.close(fd)
        with open(tmp, "x", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _file_mode(path))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        ignore.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            hidden.rmdir()
