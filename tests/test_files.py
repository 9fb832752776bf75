"""write_atomic: one implementation behind cassettes, recordings and menu snapshots."""

from __future__ import annotations

import os
import stat
import time
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


def _aged(path: Path) -> None:
    old = time.time() - _files.STALE_AFTER_S - 60
    os.utime(path, (old, old), follow_symlinks=False)


def test_the_leftovers_of_an_interrupted_write_are_removed(tmp_path: Path) -> None:
    leftover = tmp_path / f"{_files.TEMPORARY_FOLDER}abc"
    leftover.mkdir()
    (leftover / ".gitignore").write_text("*\n")
    (leftover / "cassette.yaml").write_text("half")
    _aged(leftover)
    write_atomic(tmp_path / "cassette.yaml", "whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cassette.yaml"]


def test_a_recent_temporary_folder_is_another_write_under_way(tmp_path: Path) -> None:
    busy = tmp_path / f"{_files.TEMPORARY_FOLDER}busy"
    busy.mkdir()
    (busy / "cassette.yaml").write_text("being written")
    write_atomic(tmp_path / "other.yaml", "x")
    assert (busy / "cassette.yaml").read_text() == "being written"


def test_a_link_named_like_a_temporary_folder_is_never_followed(tmp_path: Path) -> None:
    """A symlink planted beside a cassette (it arrives in a pull request) points at a folder of
    the user's: the clean-up of stale writes must leave every file there, and the link too."""
    victim = tmp_path / "home"
    victim.mkdir()
    for index in range(5):
        (victim / f"precious-{index}.txt").write_text("keep me")
    _aged(victim)
    project = tmp_path / "project" / "cassettes"
    project.mkdir(parents=True)
    link = project / f"{_files.TEMPORARY_FOLDER}planted"
    link.symlink_to(victim, target_is_directory=True)
    _aged(link)
    write_atomic(project / "test_x.yaml", "recorded")
    assert sorted(p.name for p in victim.iterdir()) == [f"precious-{i}.txt" for i in range(5)]
    assert all(p.read_text() == "keep me" for p in victim.iterdir())
    assert link.is_symlink()


def test_a_link_inside_a_stale_temporary_folder_is_removed_as_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    leftover = tmp_path / "cassettes" / f"{_files.TEMPORARY_FOLDER}old"
    leftover.mkdir(parents=True)
    (leftover / "cassette.yaml").symlink_to(victim)
    inner = leftover / "inner"
    inner.mkdir()
    (inner / "file.txt").write_text("kept: a write never makes a folder here")
    _aged(leftover)
    write_atomic(tmp_path / "cassettes" / "cassette.yaml", "x")
    assert victim.read_text() == "keep me"
    assert (inner / "file.txt").exists()
    assert not (leftover / "cassette.yaml").is_symlink()
