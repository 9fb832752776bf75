"""Where a cassette is written: ``<cassette dir>/<test module's path>/<test name>.yaml``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from _openai_server import OpenAIServer

from pytest_opdecide.plugin._cassette_fixtures import _short, cassette_path
from pytest_opdecide.plugin._settings import resolve

from ._support import cassette, dedent, interactions, write_ini

PICK = dedent(
    """
    import pytest
    from pytest_opdecide import decision

    OPTIONS = {"alpha": "A", "beta": "B"}
    """
)


def test_module_and_test_name(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_orders=PICK
        + dedent(
            """
            @pytest.mark.opdecide(cassette=True)
            def test_pick(runtime):
                assert decision.make("Pick one.", OPTIONS) == "A"

            class TestRefunds:
                @pytest.mark.opdecide(cassette=True)
                def test_pick(self, runtime):
                    assert decision.make("Pick one.", OPTIONS) == "A"
            """
        )
    )
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=2)
    written = sorted(p.relative_to(project.path) for p in project.path.rglob("*.yaml"))
    assert written == [
        Path("cassettes/test_orders/TestRefunds.test_pick.yaml"),
        Path("cassettes/test_orders/test_pick.yaml"),
    ]


def test_parametrised_ids_are_short_and_stable(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_params=PICK
        + dedent(
            """
            LONG = "a customer who writes a very long message " * 5

            @pytest.mark.opdecide(cassette=True)
            @pytest.mark.parametrize("prompt", ["short", LONG, "with/slash and spaces"])
            def test_pick(runtime, prompt):
                assert decision.make(prompt, OPTIONS) == "A"
            """
        )
    )
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=3)
    folder = project.path / "cassettes" / "test_params"
    first = sorted(p.name for p in folder.iterdir())
    assert len(first) == 3
    assert all(len(name) <= 90 for name in first), first
    assert all(name.startswith("test_pick-") and name.endswith(".yaml") for name in first)
    assert all("/" not in name and " " not in name for name in first)
    # A second run (replay) finds the same files: the names do not depend on the run.
    project.runpytest().assert_outcomes(passed=3)
    assert sorted(p.name for p in folder.iterdir()) == first


def test_short_names() -> None:
    assert _short("test_pick") == "test_pick"
    assert _short("test_pick") == _short("test_pick")
    long_id = "test_pick[" + "x" * 300 + "]"
    assert _short(long_id) == _short(long_id)
    assert len(_short(long_id)) <= 90
    # Two ids that clean up to the same text still get different names.
    assert _short("test_pick[a b]") != _short("test_pick[a/b]")
    assert _short("test_pick[a b]").startswith("test_pick-a_b-")


@pytest.mark.parametrize(
    ("where", "folder"),
    [
        ("ini", "recorded"),
        ("flag", "from_flag"),
        ("marker", "from_marker"),
        ("fixture", "from_fixture"),
    ],
)
def test_directory_is_configurable(
    project: pytest.Pytester, server: OpenAIServer, where: str, folder: str
) -> None:
    marker = "cassette=True" + (", cassette_dir='from_marker'" if where == "marker" else "")
    project.makepyfile(
        test_dirs=PICK
        + dedent(
            f"""
            @pytest.mark.opdecide({marker})
            def test_pick(runtime):
                assert decision.make("Pick one.", OPTIONS) == "A"
            """
        )
    )
    if where == "fixture":
        project.makeconftest(
            dedent(
                """
                import pytest

                @pytest.fixture
                def opdecide_config():
                    return {"cassette_dir": "from_fixture"}
                """
            )
        )
    if where == "ini":
        write_ini(project, opdecide_base_url=server.url, opdecide_cassette_dir="recorded")
    args = ["--opdecide-record=once"]
    if where == "flag":
        args.append("--opdecide-cassette-dir=from_flag")
    project.runpytest(*args).assert_outcomes(passed=1)
    assert cassette(project, "test_dirs", "test_pick", folder).is_file()
    assert not (project.path / "cassettes").exists()


def _node(path: Path, name: str) -> SimpleNamespace:
    return SimpleNamespace(path=path, name=name, listchain=list)


def test_absolute_directory(tmp_path: Path) -> None:
    settings = resolve(cli={}, marker={}, fixture={"cassette_dir": str(tmp_path / "c")}, ini={})
    node = _node(Path("/repo/tests/test_x.py"), "test_y")
    assert cassette_path(Path("/repo"), node, settings) == (
        tmp_path / "c" / "tests" / "test_x" / "test_y.yaml"
    )


def test_a_module_outside_the_rootdir_gets_a_folder_of_its_own() -> None:
    settings = resolve(cli={}, marker={}, fixture={}, ini={})
    first = cassette_path(Path("/repo"), _node(Path("/elsewhere/a/test_x.py"), "test_y"), settings)
    second = cassette_path(Path("/repo"), _node(Path("/elsewhere/b/test_x.py"), "test_y"), settings)
    assert first.parts[:4] == ("/", "repo", "cassettes", "_outside")
    assert first.name == second.name == "test_y.yaml"
    assert first.parent.name == second.parent.name == "test_x"
    assert first != second


NESTED = PICK + dedent(
    """
    @pytest.mark.opdecide(cassette=True)
    def test_pick(runtime):
        assert decision.make("Pick one, said {module}.", OPTIONS) == "A"

    class TestOuter:
        class TestInner:
            @pytest.mark.opdecide(cassette=True)
            def test_pick(self, runtime):
                assert decision.make("Pick one, said {module} inside.", OPTIONS) == "A"
    """
)


def test_two_modules_of_one_name_have_folders_of_their_own(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    """The folder is the module's path under the rootdir: ``orders/test_flow.py`` and
    ``refunds/test_flow.py`` never share a cassette."""
    for folder in ("orders", "refunds"):
        (project.path / folder).mkdir()
        (project.path / folder / "test_flow.py").write_text(
            NESTED.replace("{module}", folder), encoding="utf-8"
        )
    project.runpytest("--import-mode=importlib", "--opdecide-record=once").assert_outcomes(passed=4)
    written = sorted(p.relative_to(project.path) for p in project.path.rglob("*.yaml"))
    assert written == [
        Path("cassettes/orders/test_flow/TestOuter.TestInner.test_pick.yaml"),
        Path("cassettes/orders/test_flow/test_pick.yaml"),
        Path("cassettes/refunds/test_flow/TestOuter.TestInner.test_pick.yaml"),
        Path("cassettes/refunds/test_flow/test_pick.yaml"),
    ]
    for path in written:
        prompt = interactions(project.path / path)[0]["request"]["body"]["json"]["messages"][0]
        assert f"said {path.parts[1]}" in prompt["content"]
    server.stop()
    project.runpytest("--import-mode=importlib").assert_outcomes(passed=4)  # each replays its own


def test_a_cassette_where_earlier_versions_put_it_is_named_with_the_move(
    project: pytest.Pytester, server: OpenAIServer
) -> None:
    (project.path / "tests").mkdir()
    (project.path / "tests" / "test_flow.py").write_text(
        PICK
        + dedent(
            """
            @pytest.mark.opdecide(cassette=True)
            def test_pick(runtime):
                assert decision.make("Pick one.", OPTIONS) == "A"
            """
        ),
        encoding="utf-8",
    )
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    new = project.path / "cassettes" / "tests" / "test_flow" / "test_pick.yaml"
    old = project.path / "cassettes" / "test_flow" / "test_pick.yaml"
    old.parent.mkdir()
    new.rename(old)
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    expected = [
        f"no cassette at {new} for tests/test_flow.py::test_pick, but there is one where "
        "earlier versions of pytest-opdecide put it:",
        f"    {old}",
        "Cassettes are now named after the test module's path, so that same-named modules "
        "never share one. Move it:",
        f"    git mv {old} {new}",
    ]
    start = result.outlines.index(expected[0])
    assert result.outlines[start : start + 4] == expected
    new.parent.mkdir(parents=True, exist_ok=True)
    old.rename(new)
    server.stop()
    project.runpytest().assert_outcomes(passed=1)


CASE_TWINS = PICK + dedent(
    """
    @pytest.mark.opdecide(cassette=True)
    def test_a(runtime):
        assert decision.make("Pick one.", OPTIONS) == "A"

    @pytest.mark.opdecide(cassette=True)
    def test_A(runtime):
        assert decision.make("Pick one, twin.", OPTIONS) == "A"

    @pytest.mark.opdecide(cassette=True)
    def test_Route(runtime):
        assert decision.make("Pick one, alone.", OPTIONS) == "A"

    class TestRefunds:
        @pytest.mark.opdecide(cassette=True)
        def test_pick(self, runtime):
            assert decision.make("Pick one, refunds.", OPTIONS) == "A"

    class Testrefunds:
        @pytest.mark.opdecide(cassette=True)
        def test_pick(self, runtime):
            assert decision.make("Pick one, other refunds.", OPTIONS) == "A"
    """
)


def test_names_that_differ_only_in_case_get_files_of_their_own(project: pytest.Pytester) -> None:
    """``test_A`` and ``test_a`` would share one file on macOS and Windows: the one spelt in
    lower case keeps its name, the other gets the hash of its exact name; names without a
    case twin (``test_Route``) keep theirs."""
    from pytest_opdecide.plugin._case_twins import exact_digest

    project.makepyfile(test_twins=CASE_TWINS)
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=5)
    folder = project.path / "cassettes" / "test_twins"
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(
        [
            "test_a.yaml",
            f"test_A-{exact_digest('test_A')}.yaml",
            "test_Route.yaml",
            f"TestRefunds.test_pick-{exact_digest('TestRefunds.test_pick')}.yaml",
            f"Testrefunds.test_pick-{exact_digest('Testrefunds.test_pick')}.yaml",
        ]
    )
    assert len({name.lower() for name in names}) == len(names)
    # The same names whatever the run selects: one test alone finds its file.
    project.runpytest("test_twins.py::test_A").assert_outcomes(passed=1)
    project.runpytest("--deselect", "test_twins.py::test_a").assert_outcomes(passed=4)
    project.runpytest("test_twins.py::Testrefunds::test_pick").assert_outcomes(passed=1)
    project.runpytest().assert_outcomes(passed=5)


def test_a_cassette_where_a_case_twin_used_to_share_it_is_named(project: pytest.Pytester) -> None:
    """A cassette recorded before its test had a case twin keeps working for the twin in lower
    case; the other is told where the old file is and how to move it."""
    project.makepyfile(
        test_twins=PICK
        + CASE_TWINS.split("@pytest.mark", 2)[0]
        + dedent(
            """
        @pytest.mark.opdecide(cassette=True)
        def test_A(runtime):
            assert decision.make("Pick one, twin.", OPTIONS) == "A"
        """
        )
    )
    project.runpytest("--opdecide-record=once").assert_outcomes(passed=1)
    folder = project.path / "cassettes" / "test_twins"
    assert sorted(p.name for p in folder.iterdir()) == ["test_A.yaml"]
    project.makepyfile(test_twins=CASE_TWINS)
    result = project.runpytest("test_twins.py::test_A")
    result.assert_outcomes(errors=1)
    from pytest_opdecide.plugin._case_twins import exact_digest

    new = folder / f"test_A-{exact_digest('test_A')}.yaml"
    assert (
        f"no cassette at {new} for test_twins.py::test_A, but there is one at\n"
        f"    {folder / 'test_A.yaml'}\n"
        "test_A has a case twin in its module (a test whose name differs only in case): on "
        "macOS and Windows the two would share that file, so each now has a file of its own. "
        "If it holds this test's interactions, move it:\n"
        f"    git mv {folder / 'test_A.yaml'} {new}"
    ) in result.stdout.str()
