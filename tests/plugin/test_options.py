"""Command-line flags and ini keys: ``--help``, and bad values reported as usage errors.

That every flag and ini key reaches the tests is checked by ``test_precedence.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pytest_opdecide.plugin._settings import SETTINGS

from .support import FLAG, help_groups, write_ini

GROUP = "opdecide: test LLM decision code offline"


@pytest.fixture(scope="module")
def help_lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """``pytest --help`` of a project, once for the module (it does not depend on the test)."""
    folder = tmp_path_factory.mktemp("help")
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "100"},
    )
    return completed.stdout.splitlines()


def test_help_has_one_opdecide_group_with_every_flag(help_lines: list[str]) -> None:
    groups = help_groups(help_lines)
    assert GROUP in groups
    flags_in_group = FLAG.findall("\n".join(groups[GROUP]))
    assert flags_in_group == [setting.flag for setting in SETTINGS if setting.cli]
    elsewhere = [
        flag
        for title, lines in groups.items()
        if title != GROUP
        for flag in FLAG.findall("\n".join(lines))
    ]
    assert elsewhere == []
    text = " ".join(" ".join(groups[GROUP]).split())
    for setting in SETTINGS:
        if setting.cli:
            assert setting.help in text


def test_help_lists_every_ini_key(help_lines: list[str]) -> None:
    text = "\n".join(help_lines)
    ini_keys = [line.split()[0] for line in help_lines if line.startswith("  opdecide_")]
    assert ini_keys == [setting.ini_name for setting in SETTINGS if setting.ini]
    assert "opdecide_seed (string):" in text


def test_every_flag_has_an_explicit_dest_in_the_namespace(project: pytest.Pytester) -> None:
    config = project.parseconfig()
    for setting in SETTINGS:
        if setting.cli:
            assert setting.dest.startswith("opdecide_")
            assert config.getoption(setting.dest) is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--opdecide-seed=many"], "bad value for --opdecide-seed: expected a whole number"),
        (["--opdecide-strict=maybe"], "bad value for --opdecide-strict: expected one of"),
        (["--opdecide-guard=2"], "bad value for --opdecide-guard: expected one of"),
        (["--opdecide-record=sometimes"], "bad value for --opdecide-record: expected one of"),
        (["--opdecide-allow-unused=perhaps"], "bad value for --opdecide-allow-unused"),
    ],
    ids=["seed", "strict", "guard", "record", "allow-unused"],
)
def test_a_bad_flag_value_is_a_usage_error(
    project: pytest.Pytester, arguments: list[str], message: str
) -> None:
    project.makepyfile("def test_nothing():\n    pass\n")
    result = project.runpytest(*arguments)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert any(message in line for line in result.errlines), result.errlines


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("opdecide_seed", "many", "bad value for opdecide_seed: expected a whole number"),
        ("opdecide_strict", "maybe", "bad value for opdecide_strict: expected one of"),
        ("opdecide_record", "sometimes", "bad value for opdecide_record: expected one of none"),
        ("opdecide_guard", "sure", "bad value for opdecide_guard: expected one of"),
    ],
    ids=["seed", "strict", "record", "guard"],
)
def test_a_bad_ini_value_is_a_usage_error(
    project: pytest.Pytester, key: str, value: str, message: str
) -> None:
    write_ini(project, **{key: value})
    project.makepyfile("def test_nothing():\n    pass\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert any(message in line for line in result.errlines), result.errlines


def test_the_exact_usage_error(project: pytest.Pytester) -> None:
    project.makepyfile("def test_nothing():\n    pass\n")
    result = project.runpytest("--opdecide-record=sometimes")
    assert result.errlines == [
        "ERROR: bad value for --opdecide-record: expected one of none, once, new_episodes, all, "
        "rewrite, got 'sometimes'",
        "",
    ]


def test_an_unknown_ini_key_is_reported_by_strict_config(project: pytest.Pytester) -> None:
    write_ini(project, opdecide_sead="1")
    project.makepyfile("def test_nothing():\n    pass\n")
    result = project.runpytest()
    assert result.ret != 0
    assert any("opdecide_sead" in line for line in result.errlines + result.outlines)


def test_command_line_only_settings_have_no_ini_key(project: pytest.Pytester) -> None:
    write_ini(project, opdecide_live="yes")
    project.makepyfile("def test_nothing():\n    pass\n")
    result = project.runpytest()
    assert result.ret != 0
    assert any("opdecide_live" in line for line in result.errlines + result.outlines)


def test_the_boolean_switches_take_no_value(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        def test_switches(opdecide_settings):
            assert opdecide_settings.live is True
            assert opdecide_settings.update_snapshots is True
        """
    )
    project.runpytest("--opdecide-live", "--opdecide-update-snapshots").assert_outcomes(passed=1)


def test_each_flag_says_its_shape_in_its_setting() -> None:
    """A flag's shape is a field of its setting: a switch takes no value, a yes/no setting says
    so in ``--help``; nothing is guessed from the setting's parse function."""
    from pytest_opdecide.plugin._settings import SETTINGS, parse_bool

    for setting in SETTINGS:
        if setting.switch:
            assert setting.cli, setting.name
            assert setting.parse is parse_bool, setting.name
        elif setting.cli and setting.parse is parse_bool:
            assert setting.shown_value == "yes|no", setting.name
        elif setting.cli:
            assert setting.shown_value == setting.name.upper(), setting.name
    assert {s.name for s in SETTINGS if s.switch} == {"live", "update_snapshots"}
