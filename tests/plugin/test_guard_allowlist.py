"""The allowlist of the guard, ``opdecide_allow_hosts``: host names, addresses, CIDR ranges,
optional ports, honoured whatever the guard's scope.

As in ``test_guard.py``, a connection the guard lets through fails on the suite's network jail
(``NetworkJailError``), one it refuses with ``RealCallBlocked``.
"""

from __future__ import annotations

import re
import socket
from typing import Any

import pytest

from pytest_opdecide.plugin._guard import AllowedHosts, parse_allowed_host

from .support import write_ini
from .test_guard import SUPPORT


@pytest.mark.parametrize(
    ("entry", "normal"),
    [
        ("DB.Internal", "db.internal"),
        ("db.internal.", "db.internal"),
        ("db.internal:5432", "db.internal:5432"),
        ("10.0.0.7", "10.0.0.7"),
        ("10.0.0.0/8", "10.0.0.0/8"),
        ("192.0.2.1:80", "192.0.2.1:80"),
        ("2001:DB8::1", "2001:db8::1"),
        ("[2001:db8::1]", "2001:db8::1"),
        ("[2001:db8::1]:443", "[2001:db8::1]:443"),
        ("2001:db8::/32", "2001:db8::/32"),
    ],
)
def test_an_entry_is_read_in_its_normal_form(entry: str, normal: str) -> None:
    assert parse_allowed_host(entry) == normal


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "10.0.0.1/8",
            "'10.0.0.1/8' is not a network: 10.0.0.1/8 has host bits set (did you mean "
            "10.0.0.0/8?)",
        ),
        (
            "http://db:5432",
            "'http://db:5432' is a URL: give the host (and port) only, such as db.internal:5432",
        ),
        (
            "*.example.com",
            "'*.example.com': wildcards are not supported: list each host, or give its network "
            "as a CIDR range such as 10.0.0.0/8",
        ),
        ("db:0", "'db:0': the port must be a number from 1 to 65535, got '0'"),
        ("db:http", "'db:http': the port must be a number from 1 to 65535, got 'http'"),
        ("[2001:db8::1", "'[2001:db8::1': write an IPv6 address with a port as [2001:db8::1]:443"),
        (
            "db internal",
            "'db internal' is not a host name, an IP address or a CIDR range (such as "
            "db.internal, db.internal:5432, 10.0.0.7, 10.0.0.0/8 or [2001:db8::1]:443)",
        ),
    ],
)
def test_a_bad_entry_is_refused_saying_what_to_write(entry: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_allowed_host(entry)


@pytest.mark.parametrize(
    ("entries", "host", "port", "allowed"),
    [
        (["192.0.2.1"], "192.0.2.1", 80, True),
        (["192.0.2.1"], "192.0.2.2", 80, False),
        (["192.0.2.0/24"], "192.0.2.77", 443, True),
        (["192.0.2.0/24"], "198.51.100.1", 443, False),
        (["192.0.2.1:5432"], "192.0.2.1", 5432, True),
        (["192.0.2.1:5432"], "192.0.2.1", 80, False),
        (["2001:db8::/32"], "2001:db8::7", 443, True),
        (["[2001:db8::1]:443"], "2001:db8::1", 80, False),
        (["192.0.2.0/24"], "::ffff:192.0.2.9", 80, True),  # IPv4-mapped
        (["db.internal"], "DB.internal", 5432, True),
        (["db.internal:5432"], "db.internal", 5433, False),
        (["db.internal"], "other.internal", 5432, False),
    ],
)
def test_what_an_entry_lets_through(
    entries: list[str], host: str, port: int, allowed: bool
) -> None:
    assert AllowedHosts(entries).allows(host, port) is allowed


@pytest.fixture
def looked_up(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A fake resolver: ``db.internal`` is 192.0.2.5, every other name is unknown."""
    names: list[str] = []

    def resolve(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        names.append(host)
        if host == "db.internal":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.5", 0))]
        raise socket.gaierror(socket.EAI_NONAME, "unknown")

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    return names


def test_a_name_allows_the_addresses_it_resolves_to(looked_up: list[str]) -> None:
    hosts = AllowedHosts(["db.internal:5432", "gone.internal"])
    assert hosts.allows("192.0.2.5", 5432)
    assert not hosts.allows("192.0.2.5", 80)
    assert not hosts.allows("192.0.2.6", 5432)
    assert looked_up == ["db.internal", "gone.internal"]  # each name once


def test_a_name_is_looked_up_when_a_range_might_hold_it(looked_up: list[str]) -> None:
    hosts = AllowedHosts(["192.0.2.0/24"])
    assert hosts.allows("db.internal", 5432)
    assert not hosts.allows("cache.internal", 5432)
    assert looked_up == ["db.internal", "cache.internal"]


def test_no_name_is_looked_up_for_an_empty_list(looked_up: list[str]) -> None:
    assert not AllowedHosts().allows("db.internal", 5432)
    assert not AllowedHosts().allows("192.0.2.5", 5432)
    assert looked_up == []


ALLOWLIST = """
from conftest import *

from pytest_opdecide import decision
from pytest_opdecide.runtimes import OpenAICompatibleRuntime


def reach(host, port):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.connect((host, port))


@pytest.mark.opdecide()
def test_plugin_allowed_address():
    reach("192.0.2.1", 5432)


@pytest.mark.opdecide()
def test_plugin_address_in_range():
    reach("198.51.100.20", 443)


@pytest.mark.opdecide()
def test_plugin_other_port():
    reach("192.0.2.1", 80)


@pytest.mark.opdecide()
def test_plugin_other_address():
    reach("203.0.113.9", 443)


@pytest.mark.opdecide()
def test_plugin_ipv6():
    reach("2001:db8::1", 443)


@pytest.mark.opdecide()
def test_plugin_allowed_name():
    httpx.get("https://api.example.com/v1/models", timeout=5)


@pytest.mark.opdecide()
def test_plugin_other_name():
    httpx.get("https://other.example.com/v1/models", timeout=5)


def test_plain_our_runtime_allowed_name():
    with OpenAICompatibleRuntime("https://api.example.com/v1") as runtime:
        decision.make("Pick.", {"a": "A"}, runtime=runtime)


def test_plain_our_runtime_other_name():
    with OpenAICompatibleRuntime("https://other.example.com/v1") as runtime:
        decision.make("Pick.", {"a": "A"}, runtime=runtime)


def test_plain_other_address():
    reach("203.0.113.9", 443)
"""
ENTRIES = "192.0.2.1:5432,198.51.100.0/24,[2001:db8::1]:443,api.example.com"
BLOCKED = {
    "test_plugin_other_port",
    "test_plugin_other_address",
    "test_plugin_other_name",
    "test_plain_our_runtime_other_name",
}
"""The rest is let through: the jail refuses it (or, for a plain test, nothing guards it)."""
NAMES = re.findall(r"^def (test_\w+)", ALLOWLIST, flags=re.MULTILINE)


@pytest.mark.parametrize(
    ("arguments", "ini", "blocked"),
    [
        ([f"--opdecide-allow-hosts={ENTRIES}"], {}, BLOCKED),
        ([], {"opdecide_allow_hosts": ENTRIES}, BLOCKED),
        (
            [f"--opdecide-allow-hosts={ENTRIES}", "--opdecide-guard-all=yes"],
            {},
            BLOCKED | {"test_plain_other_address"},
        ),
        # The command line replaces the ini file's list.
        (
            ["--opdecide-allow-hosts=203.0.113.9:443"],
            {"opdecide_allow_hosts": ENTRIES},
            set(NAMES) - {"test_plugin_other_address", "test_plain_other_address"},
        ),
    ],
    ids=["command-line", "ini", "guard-all", "command-line-beats-ini"],
)
def test_allowed_hosts_get_through_in_every_scope(
    project: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    arguments: list[str],
    ini: dict[str, str],
    blocked: set[str],
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    write_ini(project, **ini)
    project.makeconftest(SUPPORT)
    project.makepyfile(test_allow=ALLOWLIST)
    result = project.runpytest_subprocess("-rf", *arguments)
    result.assert_outcomes(failed=len(NAMES))
    for name in NAMES:
        error = "*RealCallBlocked*" if name in blocked else "*network jail*"
        result.stdout.fnmatch_lines([f"FAILED test_allow.py::{name} - {error}"])


def test_a_bad_entry_stops_the_run(project: pytest.Pytester) -> None:
    project.makepyfile("def test_nothing():\n    pass\n")
    result = project.runpytest_subprocess("--opdecide-allow-hosts=db.internal,10.0.0.1/8")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: bad value for --opdecide-allow-hosts: '10.0.0.1/8' is not a network: "
            "10.0.0.1/8 has host bits set (did you mean 10.0.0.0/8?)"
        ]
    )
    write_ini(project, opdecide_allow_hosts="https://db.internal")
    result = project.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: bad value for opdecide_allow_hosts: 'https://db.internal' is a URL: give the "
            "host (and port) only, such as db.internal:5432"
        ]
    )
