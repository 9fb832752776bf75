"""The one precedence, for every setting: command line > marker > fixture > ini > default.

For each pair of sources, one run gives every setting that both sources accept a value in
each of them (a different one), and a test per setting checks that the higher source won.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from pytest_opdecide.plugin._settings import SETTINGS, Setting

from .support import write_ini

SOURCES = ("command line", "marker", "fixture", "ini", "default")
"""Highest first."""

# What each source gives, as the user writes it, and the value the test must then see.
# Booleans have two values only: in a pair, the higher source gives the one that is not the
# default (see _given).
VALUES: dict[str, dict[str, tuple[Any, Any]]] = {
    "seed": {
        "command line": ("--opdecide-seed=11", 11),
        "marker": (12, 12),
        "fixture": (13, 13),
        "ini": ("14", 14),
    },
    "record": {
        "command line": ("--opdecide-record=once", "once"),
        "marker": ("new_episodes", "new_episodes"),
        "fixture": ("all", "all"),
        "ini": ("rewrite", "rewrite"),
    },
    "cassette_dir": {
        "command line": ("--opdecide-cassette-dir=from-cli", "from-cli"),
        "marker": ("from-marker", "from-marker"),
        "fixture": ("from-fixture", "from-fixture"),
        "ini": ("from-ini", "from-ini"),
    },
    "base_url": {
        "command line": ("--opdecide-base-url=http://127.0.0.1:1/v1", "http://127.0.0.1:1/v1"),
        "marker": ("http://127.0.0.1:2/v1", "http://127.0.0.1:2/v1"),
        "fixture": ("http://127.0.0.1:3/v1", "http://127.0.0.1:3/v1"),
        "ini": ("http://127.0.0.1:4/v1", "http://127.0.0.1:4/v1"),
    },
    "model": {
        "command line": ("--opdecide-model=cli-model", "cli-model"),
        "marker": ("marker-model", "marker-model"),
        "fixture": ("fixture-model", "fixture-model"),
        "ini": ("ini-model", "ini-model"),
    },
    "volatile": {
        "command line": ("--opdecide-volatile=meta.id,user", ("meta.id", "user")),
        "marker": (["marker.path"], ("marker.path",)),
        "fixture": (("fixture.path",), ("fixture.path",)),
        "ini": ("ini.a, ini.b", ("ini.a", "ini.b")),
    },
    "scrub_fields": {
        "command line": ("--opdecide-scrub-fields=token", ("token",)),
        "marker": (["marker_secret"], ("marker_secret",)),
        "fixture": (["fixture_secret"], ("fixture_secret",)),
        "ini": ("ini_secret", ("ini_secret",)),
    },
    "allow_hosts": {
        "command line": ("--opdecide-allow-hosts=db.internal:5432", ("db.internal:5432",)),
        "ini": ("10.0.0.0/8, DB.example", ("10.0.0.0/8", "db.example")),
    },
    "snapshot_dir": {
        "command line": ("--opdecide-snapshot-dir=cli_menus", "cli_menus"),
        "fixture": ("fixture_menus", "fixture_menus"),
        "ini": ("ini_menus", "ini_menus"),
    },
    "runs": {
        "command line": ("--opdecide-runs=3", 3),
        "marker": (4, 4),
        "ini": ("5", 5),
    },
    "min_pass_rate": {
        "command line": ("--opdecide-min-pass-rate=0.5", 0.5),
        "marker": (0.6, 0.6),
        "ini": ("0.7", 0.7),
    },
    "report": {
        "command line": ("--opdecide-report=cli-report", "cli-report"),
        "ini": ("ini-report", "ini-report"),
    },
}
BOOLEANS: dict[str, dict[str, tuple[Any, Any]]] = {
    # name: source -> (raw for True, raw for False)
    "strict": {
        "command line": ("--opdecide-strict=yes", "--opdecide-strict=no"),
        "marker": (True, False),
        "fixture": (True, False),
        "ini": ("true", "false"),
    },
    "guard": {
        "command line": ("--opdecide-guard=on", "--opdecide-guard=off"),
        "marker": (True, False),
        "fixture": (True, False),
        "ini": ("1", "0"),
    },
    "guard_all": {
        "command line": ("--opdecide-guard-all=yes", "--opdecide-guard-all=no"),
        "ini": ("yes", "no"),
    },
    "allow_unused": {
        "command line": ("--opdecide-allow-unused=yes", "--opdecide-allow-unused=no"),
        "marker": (True, False),
        "fixture": (True, False),
        "ini": ("on", "off"),
    },
    "override_runtimes": {
        "command line": (
            "--opdecide-override-runtimes=yes",
            "--opdecide-override-runtimes=no",
        ),
        "marker": (True, False),
        "fixture": (True, False),
        "ini": ("on", "off"),
    },
    "live": {
        "command line": ("--opdecide-live", None),
        "marker": (True, False),
        "fixture": (True, False),
    },
    "update_snapshots": {"command line": ("--opdecide-update-snapshots", None)},
}
PAIRED: dict[str, dict[str, tuple[tuple[Any, Any], tuple[Any, Any]]]] = {
    # Fewer values than sources: name -> source -> ((raw, value) given by the higher source
    # of a pair, (raw, value) given by the lower one); neither is the default.
    "structured_decisions": {
        "command line": (
            ("--opdecide-structured-decisions=never", "never"),
            ("--opdecide-structured-decisions=always", "always"),
        ),
        "marker": (("never", "never"), ("always", "always")),
        "fixture": (("NEVER", "never"), ("Always", "always")),
        "ini": (("never", "never"), ("always", "always")),
    },
}


def _accepts(setting: Setting, source: str) -> bool:
    return {
        "command line": setting.cli,
        "marker": setting.marker,
        "fixture": setting.fixture,
        "ini": setting.ini,
        "default": True,
    }[source]


def _given(setting: Setting, source: str, higher: bool) -> tuple[Any, Any]:
    """What ``source`` gives for ``setting`` in a pair, and the value that would follow."""
    if setting.name in BOOLEANS:
        wanted = not setting.default if higher else bool(setting.default)
        true_raw, false_raw = BOOLEANS[setting.name][source]
        return (true_raw if wanted else false_raw), wanted
    if setting.name in PAIRED:
        return PAIRED[setting.name][source][0 if higher else 1]
    return VALUES[setting.name][source]


def test_the_table_covers_every_setting_and_source() -> None:
    for setting in SETTINGS:
        table = BOOLEANS.get(setting.name) or PAIRED.get(setting.name) or VALUES[setting.name]
        assert set(table) == {s for s in SOURCES[:-1] if _accepts(setting, s)}, setting.name


PAIRS = list(itertools.combinations(SOURCES, 2))


@pytest.mark.parametrize(("higher", "lower"), PAIRS, ids=[f"{h} > {lo}" for h, lo in PAIRS])
def test_the_higher_source_wins(project: pytest.Pytester, higher: str, lower: str) -> None:
    arguments: list[str] = []
    ini: dict[str, str] = {}
    fixture: dict[str, Any] = {}
    marker: dict[str, Any] = {}
    expected: dict[str, Any] = {}
    for setting in SETTINGS:
        if not (_accepts(setting, higher) and _accepts(setting, lower)):
            continue
        for source in (higher, lower):
            if source == "default":
                continue
            raw, _ = _given(setting, source, higher=source == higher)
            if source == "command line":
                if raw is not None:
                    arguments.append(raw)
            elif source == "ini":
                ini[setting.ini_name] = raw
            elif source == "fixture":
                fixture[setting.name] = raw
            else:
                marker[setting.name] = raw
        if higher == "default":
            expected[setting.name] = setting.default_value()
        else:
            expected[setting.name] = _given(setting, higher, higher=True)[1]
    assert expected, "no setting accepts both sources"

    write_ini(project, **ini)
    project.makeconftest(
        f"""
        import pytest


        @pytest.fixture
        def opdecide_config():
            return {fixture!r}
        """
    )
    project.makepyfile(
        f"""
        import pytest

        pytestmark = pytest.mark.opdecide(**{marker!r})
        EXPECTED = {expected!r}


        @pytest.mark.parametrize("name", sorted(EXPECTED))
        def test_setting(opdecide_settings, name):
            assert getattr(opdecide_settings, name) == EXPECTED[name]
        """
    )
    result = project.runpytest(*arguments, "-v")
    result.assert_outcomes(passed=len(expected))
