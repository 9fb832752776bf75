"""Every plugin setting, and the one place their precedence is implemented.

Precedence, the same for every setting: command line > marker > ``opdecide_config`` fixture >
ini file > default. This module is plain Python (no pytest import): the plugin feeds it the
values it read from each source.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_opdecide._cassettes import RECORD_MODES
from pytest_opdecide._words import bool_word
from pytest_opdecide.plugin._guard import parse_allowed_host

__all__ = [
    "DEFAULT_BASE_URL",
    "RECORD_MODES",
    "SETTINGS",
    "STRUCTURED_DECISIONS",
    "Setting",
    "Settings",
    "parse_bool",
    "resolve",
]

DEFAULT_BASE_URL = "http://127.0.0.1:8765/v1"
"""The base URL of the ``runtime`` and ``decision_provider`` of cassette tests when none is
configured: an OpenAI-compatible server on this machine."""


def parse_bool(value: Any) -> bool:
    """Read a boolean from ``1/true/yes/on`` or ``0/false/no/off`` (any case) or a bool."""
    if isinstance(value, bool):
        return value
    word = bool_word(str(value))
    if word is not None:
        return word
    raise ValueError(f"expected one of 1/true/yes/on or 0/false/no/off, got {value!r}")


def _record_mode(value: Any) -> str:
    text = str(value).strip().lower()
    if text not in RECORD_MODES:
        raise ValueError(f"expected one of {', '.join(RECORD_MODES)}, got {value!r}")
    return text


def _int(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    # Not int(value) for anything else: int(2.7) would quietly make the seed 2.
    raise ValueError(f"expected a whole number, got {value!r}")


def _runs(value: Any) -> int:
    runs = _int(value)
    if runs < 1:
        raise ValueError(f"expected a whole number of runs, 1 or more, got {value!r}")
    return runs


def _rate(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"expected a pass rate between 0 and 1, got {value!r}")
    try:
        rate = float(value)
    except ValueError:
        rate = -1.0
    if not 0.0 <= rate <= 1.0:  # also refuses nan
        raise ValueError(f"expected a pass rate between 0 and 1, got {value!r}")
    return rate


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.replace("\n", ",").split(",") if part.strip())
    if isinstance(value, list | tuple):
        if not all(isinstance(v, str) and v for v in value):
            raise ValueError(f"expected a list of non-empty strings, got {value!r}")
        return tuple(value)
    raise ValueError(f"expected a list of names or a comma-separated string, got {value!r}")


def _hosts(value: Any) -> tuple[str, ...]:
    return tuple(parse_allowed_host(entry) for entry in _names(value))


STRUCTURED_DECISIONS = ("auto", "always", "never")


def _structured(value: Any) -> str:
    text = str(value).strip().lower()
    if text not in STRUCTURED_DECISIONS:
        raise ValueError(f"expected one of {', '.join(STRUCTURED_DECISIONS)}, got {value!r}")
    return text


def _text(value: Any) -> str:
    return str(value)


def _optional_text(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


@dataclass(frozen=True)
class Setting:
    """One setting and where it can be given.

    Attributes:
        name: The attribute name, also the marker keyword and the ``opdecide_config`` key.
        parse: Converts a raw value (string from ini or command line, or a Python value).
        default: Used when no source gives a value (a callable is called each time).
        help: One line for ``--help`` and the docs table.
        ini: Whether an ini key ``opdecide_<name>`` exists.
        cli: Whether a flag ``--opdecide-<name>`` exists.
        marker: Whether the marker accepts it.
        fixture: Whether the ``opdecide_config`` fixture may set it.
        switch: The flag takes no value: ``--opdecide-live`` alone turns the setting on.
        metavar: What ``--help`` shows for the flag's value (default: the name in capitals).
    """

    name: str
    parse: Callable[[Any], Any]
    default: Any
    help: str
    ini: bool = True
    cli: bool = True
    marker: bool = True
    fixture: bool = True
    switch: bool = False
    metavar: str = ""

    @property
    def ini_name(self) -> str:
        return f"opdecide_{self.name}"

    @property
    def flag(self) -> str:
        return "--opdecide-" + self.name.replace("_", "-")

    @property
    def dest(self) -> str:
        return f"opdecide_{self.name}"

    @property
    def shown_value(self) -> str:
        """The flag's value as ``--help`` shows it."""
        return self.metavar or self.name.upper()

    def default_value(self) -> Any:
        return self.default() if callable(self.default) else self.default


SETTINGS: tuple[Setting, ...] = (
    Setting("seed", _int, 0, "seed of seeded fakes and fake decision providers"),
    Setting(
        "strict",
        parse_bool,
        True,
        "strict fakes: unused script steps fail the test",
        metavar="yes|no",
    ),
    Setting(
        "guard",
        parse_bool,
        True,
        "in fake and replay mode, fail a test that reaches a host off the loopback (a test that "
        "uses the plugin) or that makes a model call through this project's runtimes and "
        "providers (any other test)",
        metavar="yes|no",
    ),
    Setting(
        "guard_all",
        parse_bool,
        False,
        "guard every test like one that uses the plugin: any connection to a host off the "
        "loopback fails (pytest-socket-like offline runs)",
        marker=False,
        fixture=False,
        metavar="yes|no",
    ),
    Setting(
        "allow_hosts",
        _hosts,
        (),
        "hosts the guard lets through: names, addresses, CIDR ranges, each optionally with a "
        "port (e.g. db.internal:5432,10.0.0.0/8)",
        marker=False,
        fixture=False,
    ),
    Setting(
        "record",
        _record_mode,
        "none",
        "cassette record mode: none (replay only), once, new_episodes, all, rewrite",
    ),
    Setting(
        "live",
        parse_bool,
        False,
        "run cassette tests against the live model, writing nothing",
        ini=False,
        switch=True,
    ),
    Setting(
        "override_runtimes",
        parse_bool,
        True,
        "the test's runtime replaces the runtimes Agents were built with (Agent(runtime=...)); "
        "off: such an Agent keeps using its own",
        metavar="yes|no",
    ),
    Setting("cassette_dir", _text, "cassettes", "directory of cassettes (relative to rootdir)"),
    Setting(
        "base_url",
        _optional_text,
        lambda: os.environ.get("OPDECIDE_LIVE_URL") or DEFAULT_BASE_URL,
        "base URL of the real OpenAI-compatible server (default: $OPDECIDE_LIVE_URL, else "
        f"{DEFAULT_BASE_URL})",
    ),
    Setting("model", _text, "smollm2-135m-instruct", "model name for the real runtime/provider"),
    Setting(
        "structured_decisions",
        _structured,
        "auto",
        "the real runtime asks the server to hold decision replies to the menu's JSON schema: "
        "auto (fall back to the text menu when refused), always, never",
    ),
    Setting(
        "allow_unused",
        parse_bool,
        False,
        "let recorded interactions that were never replayed pass (default: they fail the test)",
        metavar="yes|no",
    ),
    Setting(
        "volatile",
        _names,
        (),
        "dotted JSON body paths ignored when matching requests to cassettes (e.g. user,meta.id)",
    ),
    Setting(
        "scrub_fields",
        _names,
        (),
        "more JSON body fields replaced by a placeholder in cassettes (besides the secret-named "
        "ones, always: api_key, access_token, client_secret, password...)",
    ),
    Setting(
        "update_snapshots",
        parse_bool,
        False,
        "write menu snapshots instead of comparing them; remove unused ones",
        ini=False,
        marker=False,
        fixture=False,
        switch=True,
    ),
    Setting(
        "snapshot_dir",
        _text,
        "__menus__",
        "directory, next to each test module, holding its menu snapshots",
        marker=False,
    ),
    Setting(
        "runs",
        _runs,
        1,
        "run each live test this many times, each with a fresh runtime and provider; runs are "
        "samples only when the runtime samples (temperature above 0, a seed per run: "
        "opdecide_run.seed)",
        fixture=False,
    ),
    Setting(
        "min_pass_rate",
        _rate,
        1.0,
        "share of its live runs a repeated test must pass (default: all of them)",
        fixture=False,
    ),
    Setting(
        "report",
        _optional_text,
        None,
        "write the live runs' report to REPORT.json and REPORT.html",
        marker=False,
        fixture=False,
    ),
)

_BY_NAME = {s.name: s for s in SETTINGS}


@dataclass(frozen=True)
class Settings:
    """The resolved settings of one test (see the precedence in the module docstring)."""

    seed: int
    strict: bool
    guard: bool
    guard_all: bool
    allow_hosts: tuple[str, ...]
    record: str
    live: bool
    override_runtimes: bool
    cassette_dir: str
    base_url: str | None
    model: str
    structured_decisions: str
    allow_unused: bool
    volatile: tuple[str, ...]
    scrub_fields: tuple[str, ...]
    update_snapshots: bool
    snapshot_dir: str
    runs: int
    min_pass_rate: float
    report: str | None


class SettingError(ValueError):
    """A setting has a bad value; the message names the source and how to fix it."""


def resolve(
    *,
    cli: Mapping[str, Any],
    marker: Mapping[str, Any],
    fixture: Mapping[str, Any],
    ini: Mapping[str, Any],
) -> Settings:
    """Resolve every setting: command line > marker > fixture > ini > default.

    Each mapping holds only the values its source actually gave (absent keys fall through).

    Raises:
        SettingError: A value does not parse, or a source names an unknown setting.
    """
    unknown = set(fixture) - {s.name for s in SETTINGS if s.fixture}
    if unknown:
        known = sorted(s.name for s in SETTINGS if s.fixture)
        raise SettingError(
            f"opdecide_config fixture returned unknown settings {sorted(unknown)}; known: {known}"
        )
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        for source, mapping, allowed in (
            ("command line", cli, setting.cli),
            ("marker", marker, setting.marker),
            ("opdecide_config fixture", fixture, setting.fixture),
            ("ini", ini, setting.ini),
        ):
            if allowed and setting.name in mapping and mapping[setting.name] is not None:
                raw = mapping[setting.name]
                try:
                    values[setting.name] = setting.parse(raw)
                except (TypeError, ValueError) as exc:
                    where = {
                        "command line": setting.flag,
                        "marker": f"@pytest.mark.opdecide({setting.name}=...)",
                        "opdecide_config fixture": f"opdecide_config()['{setting.name}']",
                        "ini": setting.ini_name,
                    }[source]
                    raise SettingError(f"bad value for {where}: {exc}") from None
                break
        else:
            values[setting.name] = setting.default_value()
    return Settings(**values)


def setting(name: str) -> Setting:
    """The :class:`Setting` called ``name``."""
    return _BY_NAME[name]
