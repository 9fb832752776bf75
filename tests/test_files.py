"""write_atomic: one implementation behind cassettes, recordings and menu snapshots."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_opdecide import _files
from pytest_opdecide._files import write_atomic


def test_writes_the_text_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "cassette.yaml"
    write_atomic(target, "héllo\r\nworld\n")
    assert target.read_bytes() == "héllo\r\nworld\n".encode()
    assert [p.name for p in target.parent.iterdir()] == ["cassette.yaml"]


def test_a_new_file_gets_the_umask_mode_not_the_private_temporary_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "a.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o640


def test_a_rewrite_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old")
    target.chmod(0o604)
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o604


def test_a_failure_keeps_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old and whole")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(_files.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, "new")
    assert target.read_text() == "old and whole"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]
