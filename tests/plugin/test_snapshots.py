"""``menu_snapshot``: stored menus, readable diffs, ``--opdecide-update-snapshots``, unused files.

The run under pytest-xdist is in ``test_xdist.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_opdecide.decision import render_options

from .support import error_text, write_ini

UPDATE = "--opdecide-update-snapshots"

MENU_TEST = """
def test_menu(menu_snapshot):
    menu_snapshot.assert_match({"refund": ("REFUND", "Give the money back."), "close": "CLOSED"})
"""
MENU = render_options({"refund": ("REFUND", "Give the money back."), "close": "CLOSED"})


def snapshot_files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*.txt"))


def test_a_missing_snapshot_fails_with_how_to_write_it(project: pytest.Pytester) -> None:
    project.makepyfile(test_refunds=MENU_TEST)
    result = project.runpytest("--tb=short")
    result.assert_outcomes(failed=1)
    path = project.path / "__menus__" / "test_refunds" / "test_menu.txt"
    assert error_text(result) == (
        f"pytest_opdecide.SnapshotMismatch: no menu snapshot stored at {path}.\n"
        "Run pytest with --opdecide-update-snapshots to write it, then review and commit it."
    )
    assert not path.exists()


def test_update_writes_the_rendered_menu_next_to_the_test(project: pytest.Pytester) -> None:
    project.makepyfile(test_refunds=MENU_TEST)
    project.runpytest(UPDATE).assert_outcomes(passed=1)
    path = project.path / "__menus__" / "test_refunds" / "test_menu.txt"
    assert path.read_text(encoding="utf-8") == MENU
    assert path.read_text(encoding="utf-8") == (
        "refund()\n"
        "    Give the money back.\n"
        '    Call: {"call": "refund"}\n'
        "\n"
        "close()\n"
        '    Call: {"call": "close"}\n'
    )
    project.runpytest().assert_outcomes(passed=1)


def test_a_changed_menu_fails_with_a_unified_diff(project: pytest.Pytester) -> None:
    project.makepyfile(test_refunds=MENU_TEST)
    project.runpytest(UPDATE).assert_outcomes(passed=1)
    project.makepyfile(
        test_refunds=MENU_TEST.replace("Give the money back.", "Refund the customer.").replace(
            '"close": "CLOSED"', '"escalate": "ESCALATED"'
        )
    )
    result = project.runpytest("--tb=short")
    result.assert_outcomes(failed=1)
    path = project.path / "__menus__" / "test_refunds" / "test_menu.txt"
    assert error_text(result) == (
        f"pytest_opdecide.SnapshotMismatch: the menu differs from its snapshot {path}:\n"
        "--- test_menu.txt (stored)\n"
        "+++ rendered now\n"
        "@@ -1,6 +1,6 @@\n"
        " refund()\n"
        "-    Give the money back.\n"
        "+    Refund the customer.\n"
        '     Call: {"call": "refund"}\n'
        " \n"
        "-close()\n"
        '-    Call: {"call": "close"}\n'
        "+escalate()\n"
        '+    Call: {"call": "escalate"}\n'
        "\n"
        "If the change is intended, run pytest with --opdecide-update-snapshots."
    )
    project.runpytest(UPDATE).assert_outcomes(passed=1)
    project.runpytest().assert_outcomes(passed=1)


def test_names_texts_classes_and_parameters_each_get_a_file(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_menus="""
        import pytest


        def test_two_menus(menu_snapshot):
            menu_snapshot.assert_match(["refund", "close"], name="first")
            menu_snapshot.assert_match(["escalate"], name="second turn")


        def test_text(menu_snapshot):
            menu_snapshot.assert_match("Pick one: refund or close.")


        @pytest.mark.parametrize("option", ["a", "b/c"])
        def test_parametrised(menu_snapshot, option):
            menu_snapshot.assert_match([option])


        class TestBilling:
            def test_menu(self, menu_snapshot):
                menu_snapshot.assert_match(["refund"])


        class TestShipping:
            def test_menu(self, menu_snapshot):
                menu_snapshot.assert_match(["reship"])
        """
    )
    project.runpytest(UPDATE).assert_outcomes(passed=6)
    folder = project.path / "__menus__" / "test_menus"
    assert snapshot_files(folder) == [
        "TestBilling.test_menu.txt",
        "TestShipping.test_menu.txt",
        "test_parametrised_a.txt",
        "test_parametrised_b_c.txt",
        "test_text.txt",
        "test_two_menus-first.txt",
        "test_two_menus-second_turn.txt",
    ]
    assert (folder / "test_text.txt").read_text() == "Pick one: refund or close."
    project.runpytest().assert_outcomes(passed=6)


def test_one_snapshot_asserted_twice_asks_for_names(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        def test_twice(menu_snapshot):
            menu_snapshot.assert_match(["a"])
            menu_snapshot.assert_match(["b"])
        """
    )
    result = project.runpytest("--tb=short", UPDATE)
    result.assert_outcomes(failed=1)
    assert error_text(result) == (
        "ValueError: snapshot test_twice.txt is asserted twice in one test; pass name=... to "
        "tell the snapshots apart"
    )


CASE_TWINS = """
import pytest


def test_menu(menu_snapshot):
    menu_snapshot.assert_match(["refund"])


def test_Menu(menu_snapshot):
    menu_snapshot.assert_match(["reship"])


def test_Alone(menu_snapshot):
    menu_snapshot.assert_match(["alone"])


@pytest.mark.parametrize("word", ["Yes", "yes", "YES", "No"])
def test_words(menu_snapshot, word):
    menu_snapshot.assert_match([word.lower() + "_pick"])
"""


def test_names_that_differ_only_in_case_get_files_of_their_own(project: pytest.Pytester) -> None:
    """On macOS and Windows ``test_Menu.txt`` is ``test_menu.txt``: of case twins, the one in
    lower case keeps its name and the others get the hash of their exact names, in every run
    whatever it selects; names without a twin keep theirs."""
    from pytest_opdecide.plugin._case_twins import exact_digest

    project.makepyfile(test_twins=CASE_TWINS)
    project.runpytest(UPDATE).assert_outcomes(passed=7)
    folder = project.path / "__menus__" / "test_twins"
    names = snapshot_files(folder)
    assert names == sorted(
        [
            "test_menu.txt",
            f"test_Menu-{exact_digest('test_Menu')}.txt",
            "test_Alone.txt",
            f"test_words_Yes-{exact_digest('test_words[Yes]')}.txt",
            "test_words_yes.txt",
            f"test_words_YES-{exact_digest('test_words[YES]')}.txt",
            "test_words_No.txt",
        ]
    )
    assert len({name.lower() for name in names}) == len(names)
    assert (folder / f"test_Menu-{exact_digest('test_Menu')}.txt").read_text() == render_options(
        ["reship"]
    )
    for selected in ("test_twins.py::test_Menu", "test_twins.py::test_words[YES]"):
        project.runpytest(selected).assert_outcomes(passed=1)
    project.runpytest("--deselect", "test_twins.py::test_menu").assert_outcomes(passed=6)
    project.runpytest().assert_outcomes(passed=7)
    # None of them is unused.
    assert "unused menu snapshot" not in project.runpytest().stdout.str()


def test_a_snapshot_a_case_twin_used_to_share_says_how_to_move_it(
    project: pytest.Pytester,
) -> None:
    from pytest_opdecide.plugin._case_twins import exact_digest

    project.makepyfile(
        test_twins=CASE_TWINS.split("def test_Alone")[0].replace("def test_menu(", "def _menu(")
    )
    project.runpytest(UPDATE).assert_outcomes(passed=1)
    folder = project.path / "__menus__" / "test_twins"
    assert snapshot_files(folder) == ["test_Menu.txt"]
    project.makepyfile(test_twins=CASE_TWINS)
    result = project.runpytest("--tb=short", "test_twins.py::test_Menu")
    result.assert_outcomes(failed=1)
    old, new = folder / "test_Menu.txt", folder / f"test_Menu-{exact_digest('test_Menu')}.txt"
    assert error_text(result) == (
        f"pytest_opdecide.SnapshotMismatch: no menu snapshot stored at {new}, but there is one "
        f"at\n    {old}\ntest_Menu has a case twin in test_twins.py (a test whose name differs "
        "only in case): on macOS and Windows the two would share that file, so each now has a "
        f"file of its own. If it holds this test's menu, move it:\n    git mv {old} {new}\n"
        "else run pytest with --opdecide-update-snapshots to write it."
    )


def test_names_of_one_test_that_differ_only_in_case_are_refused(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        def test_two(menu_snapshot):
            menu_snapshot.assert_match(["a"], name="Billing")
            menu_snapshot.assert_match(["b"], name="billing")
        """
    )
    result = project.runpytest("--tb=short", UPDATE)
    result.assert_outcomes(failed=1)
    assert error_text(result) == (
        "ValueError: snapshots test_two-Billing.txt and test_two-billing.txt of one test differ "
        "only in case: on macOS and Windows they would be one file. Pass names that differ in "
        "more than case."
    )


def test_the_snapshot_directory_is_a_setting(project: pytest.Pytester) -> None:
    write_ini(project, opdecide_snapshot_dir="menus")
    project.makepyfile(test_refunds=MENU_TEST)
    project.runpytest(UPDATE).assert_outcomes(passed=1)
    assert snapshot_files(project.path) == ["menus/test_refunds/test_menu.txt"]


STALE = """
import pytest


def test_kept(menu_snapshot):
    menu_snapshot.assert_match(["refund"])


def test_conditional(menu_snapshot):
    pass


def test_fails_first(menu_snapshot):
    assert False, "broken before the menu"


@pytest.mark.skip(reason="not today")
def test_skipped(menu_snapshot):
    menu_snapshot.assert_match(["skip"])
"""


def _stale_project(project: pytest.Pytester) -> Path:
    project.makepyfile(test_flow=STALE)
    folder = project.path / "__menus__" / "test_flow"
    folder.mkdir(parents=True)
    for name in [
        "test_kept.txt",
        "test_kept-extra.txt",  # a named snapshot the test no longer asserts
        "test_conditional.txt",  # the test passed without asserting it
        "test_fails_first.txt",  # kept: the test failed before reaching it
        "test_skipped.txt",  # kept: the test was skipped
        "test_removed.txt",  # no such test any more
    ]:
        (folder / name).write_text(render_options(["refund"]))
    return folder


def test_unused_snapshots_are_reported(project: pytest.Pytester) -> None:
    folder = _stale_project(project)
    result = project.runpytest()
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*- opdecide: 3 unused menu snapshot(s) -*",
            f"  {folder / 'test_conditional.txt'}",
            f"  {folder / 'test_kept-extra.txt'}",
            f"  {folder / 'test_removed.txt'}",
            "  (no test of this run used them; --opdecide-update-snapshots removes them)",
        ]
    )
    assert len(snapshot_files(folder)) == 6


def test_update_removes_unused_snapshots_only(project: pytest.Pytester) -> None:
    folder = _stale_project(project)
    result = project.runpytest(UPDATE)
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*- opdecide: removed 3 unused menu snapshot(s) -*"])
    assert snapshot_files(folder) == [
        "test_fails_first.txt",
        "test_kept.txt",
        "test_skipped.txt",
    ]
    result = project.runpytest()
    assert "unused menu snapshot" not in result.stdout.str()


@pytest.mark.parametrize(
    "selection",
    [
        ["test_flow.py::test_conditional"],
        ["-k", "conditional"],
        ["--deselect", "test_flow.py::test_kept"],
        ["-x"],
    ],
    ids=["node-id", "keyword", "deselect", "exitfirst"],
)
def test_update_keeps_the_snapshots_of_tests_that_did_not_run(
    project: pytest.Pytester, selection: list[str]
) -> None:
    folder = _stale_project(project)
    project.runpytest(UPDATE, *selection)
    remaining = snapshot_files(folder)
    assert "test_kept.txt" in remaining  # used, or its test was not selected
    assert "test_fails_first.txt" in remaining
    assert "test_skipped.txt" in remaining
    # A file of a test that is gone is removed only when the whole module was collected.
    assert ("test_removed.txt" in remaining) == (selection == ["test_flow.py::test_conditional"])


def test_a_node_id_selection_removes_nothing_of_the_other_tests(
    project: pytest.Pytester,
) -> None:
    folder = _stale_project(project)
    result = project.runpytest(UPDATE, "test_flow.py::test_kept")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*- opdecide: removed 1 unused menu snapshot(s) -*"])
    assert "test_kept-extra.txt" not in snapshot_files(folder)
    assert len(snapshot_files(folder)) == 5


def test_modules_that_did_not_run_are_left_alone(project: pytest.Pytester) -> None:
    _stale_project(project)
    project.makepyfile(test_other="def test_other():\n    pass\n")
    result = project.runpytest(UPDATE, "test_other.py")
    result.assert_outcomes(passed=1)
    assert "unused menu snapshot" not in result.stdout.str()
    assert len(snapshot_files(project.path / "__menus__" / "test_flow")) == 6
