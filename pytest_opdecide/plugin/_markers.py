"""The ``opdecide`` markers and where a test's settings come from (the plugin side).

The plugin remembers the command line and ini values once per run
(:func:`remember_sources`); :func:`settings_for` resolves a test's settings from them, its
marker and the ``opdecide_config`` fixture, with the one precedence of :mod:`._settings` (once
per distinct marker when the fixture gives none: the run's sources do not change). Every
plugin-side module that reads a test's marker or settings asks here.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

import pytest

from pytest_opdecide.plugin._settings import SETTINGS, Settings, resolve

__all__ = [
    "DATA_KEYS",
    "LIVE_ENV",
    "LIVE_MARKER",
    "MARKER",
    "command_line",
    "marker_kwargs",
    "marks_of",
    "remember_sources",
    "settings_for",
]

MARKER = "opdecide"
LIVE_MARKER = "opdecide_live"
LIVE_ENV = "OPDECIDE_LIVE_URL"
DATA_KEYS = frozenset({"script", "answers", "cassette", "expected"})
"""Marker keywords that carry test data rather than settings."""

_KNOWN_KEYS = DATA_KEYS | {s.name for s in SETTINGS if s.marker}

_cli_key = pytest.StashKey[dict[str, Any]]()
_resolved_key = pytest.StashKey[dict[Any, Settings]]()
_RESOLVED_MAX = 256
_ini_key = pytest.StashKey[dict[str, Any]]()


def remember_sources(config: pytest.Config, cli: dict[str, Any], ini: dict[str, Any]) -> None:
    """Keep the run's command-line and ini values (those that were given) for every test."""
    config.stash[_cli_key] = {k: v for k, v in cli.items() if v is not None}
    config.stash[_ini_key] = {k: v for k, v in ini.items() if v not in (None, "")}
    config.stash[_resolved_key] = {}


def marks_of(node: Any) -> tuple[list[pytest.Mark], bool]:
    """The node's ``opdecide`` marks, closest first (as ``node.iter_markers(MARKER)`` gives
    them), and whether it has an ``opdecide_live`` mark: one walk up its ``parent`` chain over
    each node's ``own_markers``, without the generators of ``iter_markers`` (this runs for every
    test of the suite, most of which have neither)."""
    ours: list[pytest.Mark] = []
    live = False
    while node is not None:
        for mark in node.own_markers:
            name = mark.name
            if name == MARKER:
                ours.append(mark)
            elif name == LIVE_MARKER:
                live = True
        node = node.parent
    return ours, live


def command_line(config: pytest.Config) -> dict[str, Any]:
    """The settings given on the command line, by name."""
    return config.stash[_cli_key]


def marker_kwargs(
    node: pytest.Item | pytest.Function, marks: list[pytest.Mark] | None = None
) -> dict[str, Any]:
    """The keywords of every ``opdecide`` marker on the test, the closest one winning.

    ``marks``: the test's ``opdecide`` marks, closest first, if already at hand (as
    ``node.iter_markers(MARKER)`` gives them).
    """
    merged: dict[str, Any] = {}
    for mark in reversed(marks if marks is not None else list(node.iter_markers(MARKER))):
        if mark.args:
            raise pytest.UsageError(
                f"{node.nodeid}: @pytest.mark.{MARKER} takes keywords only, got {mark.args!r}"
            )
        merged.update(mark.kwargs)
    if not merged:
        return merged
    known = _KNOWN_KEYS
    unknown = sorted(set(merged) - known)
    if unknown:
        named = "; ".join(f"{name!r}{did_you_mean(name, known)}" for name in unknown)
        raise pytest.UsageError(
            f"{node.nodeid}: @pytest.mark.{MARKER} got "
            f"{'an unknown keyword' if len(unknown) == 1 else 'unknown keywords'} {named}. "
            f"It takes: {', '.join(sorted(known))}"
        )
    return merged


def did_you_mean(wrong: str, known: Iterable[str]) -> str:
    """`` (did you mean 'script'?)`` when ``wrong`` looks like one of ``known``; else empty."""
    close = difflib.get_close_matches(wrong, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def settings_for(
    config: pytest.Config, marker: dict[str, Any], fixture: dict[str, Any]
) -> Settings:
    """Resolve a test's settings from every source (the one precedence)."""
    settings_marker = {k: v for k, v in marker.items() if k not in DATA_KEYS}
    # The command line and ini are the run's: the settings of a test without a fixture's
    # settings depend on its marker's settings alone, resolved once per distinct marker (the
    # settings of most tests: none), not once per test.
    key: Any = None
    resolved = config.stash.get(_resolved_key, None)
    if not fixture and resolved is not None:
        try:
            key = tuple((k, type(v), v) for k, v in sorted(settings_marker.items()))
            found = resolved.get(key)
        except TypeError:  # an unhashable value: resolved every time
            key = found = None
        if found is not None:
            return found
    cli: dict[str, Any] = config.stash[_cli_key]
    ini: dict[str, Any] = config.stash[_ini_key]
    settings = resolve(cli=cli, marker=settings_marker, fixture=fixture, ini=ini)
    if key is not None and resolved is not None and len(resolved) < _RESOLVED_MAX:
        resolved[key] = settings
    return settings
