"""A cassette is whole or absent; a broken one says which file and how to record it again."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest
from _openai_server import OpenAIServer

from pytest_opdecide._cassettes._file import CassetteCorrupt, write_cassette
from pytest_opdecide._cassettes._scrub import Scrubber
from pytest_opdecide._files import write_atomic
from pytest_opdecide._http._secrets import Secrets

from ._support import cassette, contents, dedent, error_text

TESTS = dedent(
    """
    import pytest
    from pytest_opdecide import decision

    OPTIONS = {"alpha": "A", "beta": "B"}

    @pytest.mark.opdecide(cassette=True)
    def test_flow(runtime):
        assert decision.make("First.", OPTIONS) == "A"
        assert decision.make("Second.", OPTIONS) == "A"
    """
)

BROKEN_SERIALIZER = dedent(
    """
    import importlib

    import pytest

    @pytest.fixture(autouse=True)
    def crash_while_saving(monkeypatch):
        # Through sys.modules: an in-process pytester run may re-import the module.
        _cassette_yaml = importlib.import_module("pytest_opdecide._cassettes._yaml_format")

        def serialize(data):
            raise OSError("disk full (simulated)")
        monkeypatch.setattr(_cassette_yaml.ReadableYaml, "serialize", staticmethod(serialize))
    """
)

BROKEN_WRITE = dedent(
    """
    import os
    import pytest

    @pytest.fixture(autouse=True)
    def crash_after_half_a_file(monkeypatch):
        real_fsync = os.fsync

        def fsync(fd):
            os.write(fd, b"garbage that must never be seen")
            raise OSError("power cut (simulated)")
        monkeypatch.setattr(os, "fsync", fsync)
    """
)


def test_a_test_that_fails_while_recording_writes_nothing(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_atomic=TESTS + "    assert False, 'the test failed'\n")
    project.runpytest("--opdecide-record=once").assert_outcomes(failed=1)
    assert len(server.completions) == 2  # it did talk to the server...
    assert contents(project) == {}  # ...and kept nothing


KILLED_MID_WRITE = dedent(
    """
    import os
    import signal

    import pytest

    @pytest.fixture(autouse=True)
    def killed_while_the_cassette_is_written(monkeypatch):
        def fsync(fd):
            os.kill(os.getpid(), signal.SIGKILL)  # as a kill -9 or a power cut would
        monkeypatch.setattr(os, "fsync", fsync)
    """
)


def git(project: pytest.Pytester, *arguments: str) -> str:
    done = subprocess.run(
        ["git", *arguments], cwd=project.path, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_recording_killed_mid_write_leaves_nothing_git_add_picks_up(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makeconftest(KILLED_MID_WRITE)
    project.makepyfile(test_atomic=TESTS)
    killed = project.runpytest_subprocess("--opdecide-record=once")
    assert killed.ret == -signal.SIGKILL
    assert len(server.completions) == 2
    folder = project.path / "cassettes" / "test_atomic"
    left = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert len(left) == 2, left  # the write really was cut short: its temporary file is there
    assert all(name.startswith(".opdecide-tmp-") for name in left)
    assert not (folder / "test_flow.yaml").exists()

    git(project, "init", "-q")
    git(project, "add", "cassettes/")
    assert git(project, "status", "--porcelain", "--untracked-files=all", "cassettes") == ""

    # A later write to the folder removes what the killed one left, once it is old enough.
    (hidden,) = folder.glob(".opdecide-tmp-*")
    old = time.time() - 3600
    for path in (*hidden.iterdir(), hidden):
        os.utime(path, (old, old))
    (project.path / "conftest.py").unlink()
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    assert sorted(p.name for p in folder.iterdir()) == ["test_flow.yaml"]
    git(project, "add", "cassettes/")
    assert git(project, "status", "--porcelain", "cassettes") == (
        "A  cassettes/test_atomic/test_flow.yaml\n"
    )


def test_a_write_in_progress_is_never_visible_to_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary file of a write lives in a folder whose .gitignore ignores it (and
    itself): seen at the moment of the rename, it is invisible to git."""
    seen: list[list[str]] = []
    real_replace = os.replace

    def replace(source: str | Path, target: str | Path) -> None:
        hidden = Path(source).parent
        seen.append(sorted(p.name for p in hidden.iterdir()))
        assert (hidden / ".gitignore").read_text() == "*\n"
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    write_atomic(tmp_path / "c" / "x.yaml", "version: 1\n")
    monkeypatch.undo()
    assert seen == [[".gitignore", "x.yaml"]]
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["x.yaml"]


def test_a_failing_test_leaves_the_old_cassette_alone(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_atomic=TESTS)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    before = contents(project)
    project.makepyfile(test_atomic=TESTS + "    assert False, 'the test failed'\n")
    project.runpytest("--opdecide-record=rewrite").assert_outcomes(failed=1)
    assert contents(project) == before


@pytest.mark.parametrize("crash", [BROKEN_SERIALIZER, BROKEN_WRITE], ids=["serializer", "write"])
def test_a_crash_while_saving_leaves_no_partial_file(
    project: pytest.Pytester, server: OpenAIServer, crash: str
) -> None:
    project.makeconftest(crash)
    project.makepyfile(test_atomic=TESTS)
    result = project.runpytest("--opdecide-record=once")
    result.assert_outcomes(passed=1, errors=1)
    assert "simulated" in result.stdout.str()
    assert contents(project) == {}  # no cassette, no temporary file left behind


def test_a_crash_while_rewriting_keeps_the_old_cassette(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_atomic=TESTS)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    before = contents(project)
    project.makeconftest(BROKEN_WRITE)
    project.runpytest("--opdecide-record=rewrite").assert_outcomes(passed=1, errors=1)
    assert contents(project) == before


def test_a_crash_while_saving_does_not_leave_http_patched(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    """vcrpy leaves its patches in place when saving raises: the next test would then talk
    to a cassette that no longer exists."""
    project.makeconftest(BROKEN_SERIALIZER)
    project.makepyfile(
        test_atomic=TESTS
        + dedent(
            """

            def test_after():
                import httpx
                # vcrpy's patch wraps the method (functools.wraps): no wrapper may be left.
                assert not hasattr(httpx.HTTPTransport.handle_request, "__wrapped__")
            """
        )
    )
    result = project.runpytest("--opdecide-record=once")
    result.assert_outcomes(passed=2, errors=1)


def test_written_files_have_the_usual_mode(project: pytest.Pytester, server: OpenAIServer) -> None:
    project.makepyfile(test_atomic=TESTS)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    path = cassette(project, "test_atomic", "test_flow")
    mode = stat.S_IMODE(path.stat().st_mode)
    assert mode & 0o044 == 0o044, oct(mode)  # readable by others, as git checks it out
    path.chmod(0o640)
    project.runpytest("--opdecide-record=rewrite").assert_outcomes(passed=1)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # a rewrite keeps the file's mode


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda text: text[: len(text) // 2], "truncated"),
        (lambda text: text.replace("version: 1", ""), "truncated"),
        (lambda text: "<<<<<<< HEAD\n" + text, "ScannerError"),
        (lambda text: "- just\n- a list\n", "not a cassette"),
        (lambda text: text.replace("  response:", "  responsx:", 1), "holds 'responsx'"),
        (lambda text: "", "not a cassette"),
    ],
    ids=["half", "no-version", "merge-conflict", "a-list", "missing-key", "empty"],
)
def test_a_corrupt_cassette_names_the_file_and_how_to_record_it(
    project: pytest.Pytester, server: OpenAIServer, damage: object, reason: str
) -> None:
    project.makepyfile(test_atomic=TESTS)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    path = cassette(project, "test_atomic", "test_flow")
    assert callable(damage)
    path.write_text(damage(path.read_text()))
    server.reset()
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    message = error_text(result)
    if reason == "holds 'responsx'":  # the line at fault is named
        (line,) = [
            n for n, text in enumerate(path.read_text().splitlines(), 1) if "responsx" in text
        ]
        assert (
            f"CassetteCorrupt: cassette {path}, line {line}: interaction #0 holds 'responsx', "
            "which this library neither writes nor reads (it knows request, response): remove "
            "it, or correct its name.\nOr re-record it" in message
        )
    else:
        assert f"CassetteCorrupt: cassette {path} is corrupt or truncated (" in message
    assert reason in message
    assert (
        "re-record it with the model server running at base_url (--opdecide-base-url=URL, or "
        "opdecide_base_url in the ini file):\n    pytest '" in message
    )
    assert "    pytest 'test_atomic.py::test_flow' --opdecide-record=rewrite" in message
    assert server.received == []


def test_a_secret_the_last_net_cannot_remove_cleanly_writes_nothing(tmp_path: Path) -> None:
    """A secret equal to a word of the file's own layout ("interactions") would break it:
    the write is refused, naming why, rather than writing a broken or a leaking file."""
    path = tmp_path / "c" / "x.yaml"
    request = {"method": "GET", "uri": "http://h/v1", "headers": {}, "body": None}
    response = {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": b""}}
    scrubber = Scrubber(secrets=Secrets(["interactions"]))
    with pytest.raises(CassetteCorrupt) as raised:
        write_cassette(path, [(request, response)], scrubber=scrubber)
    assert str(raised.value) == (
        f"cassette {path} was not written: a secret could not be removed without breaking the "
        "file (ValueError). Scrub it in a pytest_opdecide_scrub_interaction hook."
    )
    assert not path.parent.exists() or list(path.parent.iterdir()) == []


def _planted_link(folder: Path, victim: Path) -> Path:
    """A link named like a temporary folder of a write, old enough to look stale."""
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / ".opdecide-tmp-planted"
    link.symlink_to(victim, target_is_directory=True)
    old = time.time() - 3600
    os.utime(victim, (old, old))
    os.utime(link, (old, old), follow_symlinks=False)
    return link


def test_recording_beside_a_planted_link_leaves_the_folder_it_points_at_alone(
    project: pytest.Pytester, server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    victim = tmp_path_factory.mktemp("home")
    for index in range(5):
        (victim / f"precious-{index}.txt").write_text("keep me")
    project.makepyfile(test_atomic=TESTS)
    _planted_link(project.path / "cassettes" / "test_atomic", victim)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    assert sorted(p.name for p in victim.iterdir()) == [f"precious-{i}.txt" for i in range(5)]
    assert (project.path / "cassettes" / "test_atomic" / "test_flow.yaml").is_file()


def test_updating_snapshots_beside_a_planted_link_leaves_the_folder_it_points_at_alone(
    project: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    victim = tmp_path_factory.mktemp("home")
    for index in range(5):
        (victim / f"precious-{index}.txt").write_text("keep me")
    project.makepyfile(
        test_menu=dedent(
            """
            def test_menu(menu_snapshot):
                menu_snapshot.assert_match({"alpha": "A", "beta": "B"})
            """
        )
    )
    _planted_link(project.path / "__menus__" / "test_menu", victim)
    project.runpytest("--opdecide-update-snapshots").assert_outcomes(passed=1)
    assert sorted(p.name for p in victim.iterdir()) == [f"precious-{i}.txt" for i in range(5)]


def test_a_cassette_folder_that_links_outside_the_project_is_refused(
    project: pytest.Pytester, server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A link planted where the test's cassette folder goes would have the recording written
    outside the project (and a replay read from there): refused, naming the link."""
    outside = tmp_path_factory.mktemp("outside")
    project.makepyfile(test_atomic=TESTS)
    (project.path / "cassettes").mkdir()
    (project.path / "cassettes" / "test_atomic").symlink_to(outside, target_is_directory=True)
    for mode in ("--opdecide-record=once", "--opdecide-record=none"):
        result = project.runpytest(mode)
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines(
            [
                f"*refusing to use */cassettes/test_atomic/test_flow.yaml: */test_atomic is a link "
                f"to {outside}, outside {project.path}*"
            ]
        )
    assert list(outside.iterdir()) == []
    assert server.completions == []


def test_a_link_that_stays_inside_the_project_is_followed(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    project.makepyfile(test_atomic=TESTS)
    shared = project.path / "shared-cassettes"
    shared.mkdir()
    (project.path / "cassettes").mkdir()
    (project.path / "cassettes" / "test_atomic").symlink_to(shared, target_is_directory=True)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    assert (shared / "test_flow.yaml").is_file()


def test_a_snapshot_folder_that_links_outside_the_project_is_refused(
    project: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    project.makepyfile(
        test_menu=dedent(
            """
            def test_menu(menu_snapshot):
                menu_snapshot.assert_match({"alpha": "A", "beta": "B"})
            """
        )
    )
    (project.path / "__menus__").symlink_to(outside, target_is_directory=True)
    result = project.runpytest("--opdecide-update-snapshots")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*LinkLeavesFolder: refusing to use *__menus__ is a link to*"])
    assert list(outside.iterdir()) == []
