"""``@pytest.mark.opdecide(...)`` and ``@pytest.mark.opdecide_live``."""

from __future__ import annotations

import pytest

from pytest_opdecide.plugin._settings import SETTINGS

MARKER_KEYWORDS = sorted(
    {"script", "answers", "cassette", "expected"}
    | {setting.name for setting in SETTINGS if setting.marker}
)


def test_markers_are_registered_and_described(project: pytest.Pytester) -> None:
    result = project.runpytest("--markers")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.opdecide(script=*, answers=*, cassette=False, expected=*, **settings): "
            "script the `runtime` / `decision_provider` fixtures, run against a cassette, give "
            "the expected answers of live question decisions, or override settings (seed, "
            "strict, guard, record, live, override_runtimes, cassette_dir, base_url, model, "
            "structured_decisions, "
            "allow_unused, volatile, scrub_fields, runs, min_pass_rate)*",
            "@pytest.mark.opdecide_live: needs a real model server; runs only with "
            "--opdecide-live or the OPDECIDE_LIVE_URL environment variable set*",
        ]
    )


def test_marker_settings_reach_the_test(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest


        @pytest.mark.opdecide(seed=42, strict=False, guard=False, model="m", volatile=["a.b"])
        def test_settings(opdecide_settings, runtime):
            assert opdecide_settings.seed == 42
            assert opdecide_settings.strict is False
            assert opdecide_settings.guard is False
            assert opdecide_settings.model == "m"
            assert opdecide_settings.volatile == ("a.b",)
            assert runtime.strict is False
        """
    )
    project.runpytest().assert_outcomes(passed=1)


def test_the_closest_marker_wins_keyword_by_keyword(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.opdecide(seed=1, model="module")


        @pytest.mark.opdecide(seed=2, strict=False)
        class TestRouting:
            def test_class_level(self, opdecide_settings):
                assert opdecide_settings.seed == 2
                assert opdecide_settings.strict is False
                assert opdecide_settings.model == "module"

            @pytest.mark.opdecide(seed=3, script=["hi"])
            def test_function_level(self, opdecide_settings, runtime):
                assert opdecide_settings.seed == 3
                assert opdecide_settings.strict is False
                assert runtime.exec("hello") == "hi"


        def test_module_level(opdecide_settings):
            assert (opdecide_settings.seed, opdecide_settings.strict) == (1, True)
        """
    )
    project.runpytest().assert_outcomes(passed=3)


def test_unknown_keywords_fail_the_test_with_the_known_ones(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest


        @pytest.mark.opdecide(scirpt=["hi"])
        def test_with_fixture(runtime):
            pass


        @pytest.mark.opdecide(gaurd=False)
        def test_without_fixture():
            pass


        def test_unmarked(runtime):
            pass
        """
    )
    result = project.runpytest()
    result.assert_outcomes(passed=1, errors=2)
    known = ", ".join(MARKER_KEYWORDS)
    for test, keyword, meant in [
        ("test_with_fixture", "scirpt", "script"),
        ("test_without_fixture", "gaurd", "guard"),
    ]:
        assert (
            f"test_unknown_keywords_fail_the_test_with_the_known_ones.py::{test}: "
            f"@pytest.mark.opdecide got an unknown keyword {keyword!r} (did you mean {meant!r}?). "
            f"It takes: {known}"
        ) in result.outlines


def test_positional_arguments_are_refused(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest
        from fake_runtimes import pick


        @pytest.mark.opdecide([pick("refund")])
        def test_positional(runtime):
            pass
        """
    )
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    assert (
        "test_positional_arguments_are_refused.py::test_positional: @pytest.mark.opdecide takes "
        "keywords only, got ([Pick(option='refund', args={})],)"
    ) in result.outlines


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ("seed='x'", "bad value for @pytest.mark.opdecide(seed=...): expected a whole number"),
        ("seed=2.5", "bad value for @pytest.mark.opdecide(seed=...): expected a whole number"),
        ("strict='maybe'", "bad value for @pytest.mark.opdecide(strict=...): expected one of"),
        ("record='sometimes'", "bad value for @pytest.mark.opdecide(record=...): expected one"),
        ("volatile=[1]", "bad value for @pytest.mark.opdecide(volatile=...): expected a list"),
    ],
)
def test_bad_marker_values_fail_the_test_naming_the_marker(
    project: pytest.Pytester, keywords: str, message: str
) -> None:
    project.makepyfile(
        f"""
        import pytest


        @pytest.mark.opdecide({keywords})
        def test_with_fixture(opdecide_settings):
            pass


        @pytest.mark.opdecide({keywords})
        def test_without_fixture():
            pass
        """
    )
    result = project.runpytest()
    result.assert_outcomes(errors=2)
    # Both tests report it (on CI, pytest also repeats it untruncated in the summary).
    assert result.stdout.str().count(message) >= 2


def test_marker_keywords_the_marker_cannot_set(project: pytest.Pytester) -> None:
    # Command-line-only and fixture-level settings are not marker keywords.
    project.makepyfile(
        """
        import pytest


        @pytest.mark.opdecide(update_snapshots=True, snapshot_dir="x")
        def test_refused():
            pass
        """
    )
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    assert (
        "test_marker_keywords_the_marker_cannot_set.py::test_refused: @pytest.mark.opdecide got "
        "unknown keywords 'snapshot_dir'; 'update_snapshots'. "
        f"It takes: {', '.join(MARKER_KEYWORDS)}"
    ) in result.outlines


LIVE_TEST = """
import pytest


@pytest.mark.opdecide_live
def test_live():
    pass


def test_offline():
    pass
"""


def test_live_tests_are_skipped_unless_asked_for(project: pytest.Pytester) -> None:
    project.makepyfile(LIVE_TEST)
    result = project.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] *: live test: run with --opdecide-live and "
            "OPDECIDE_LIVE_URL=http://127.0.0.1:PORT/v1"
        ]
    )


def test_live_tests_run_with_the_flag(project: pytest.Pytester) -> None:
    project.makepyfile(LIVE_TEST)
    project.runpytest("--opdecide-live").assert_outcomes(passed=2)


def test_live_tests_run_with_the_environment_variable(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPDECIDE_LIVE_URL", "http://127.0.0.1:8765/v1")
    project.makepyfile(LIVE_TEST)
    project.runpytest().assert_outcomes(passed=2)
