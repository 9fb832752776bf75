"""The ``opdecide`` command line."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]


_REPORT_WIDTH = 100
_DETAIL_INDENT = "    "


class UsageError(Exception):
    """Bad command-line input (exit status 2)."""


def load_object(path: str) -> Any:
    """Import ``MODULE:NAME`` (NAME may be dotted) and return the object."""
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"expected MODULE:NAME, got {path!r}")
    sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"cannot import module {module_name!r}: {exc}") from None
    finally:
        sys.path.pop(0)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"module {module_name!r} has no attribute {attr!r}") from None
    return obj


def _menu(args: argparse.Namespace) -> int:
    from pytest_opdecide.decision import render_options

    options = load_object(args.options)
    if callable(options) and not isinstance(options, dict | list):
        options = options()
    try:
        sys.stdout.write(render_options(options))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{args.options} is not a valid options object: {exc}") from None
    return 0


def _pairs(values: Sequence[str], option: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{option} takes KEY=VALUE, got {value!r}")
        pairs[key.strip()] = text
    return pairs


def _check(args: argparse.Namespace) -> int:
    from pytest_opdecide.conformance import run_checks_each

    for target in args.factory:
        factory = load_object(target)
        if not callable(factory):
            raise UsageError(
                f"{target} is a {type(factory).__name__}, not a provider factory: name a "
                "callable that takes a ProviderFactoryConfig and returns a provider"
            )
    if not args.check_timeout > 0:
        raise UsageError(
            f"--check-timeout must be a number of seconds > 0, got {args.check_timeout}"
        )
    config = _pairs(args.config, "--config")
    capabilities = _pairs(args.capability, "--capability")
    pytest_args = ["-k", args.select] if args.select else []
    try:
        reports = run_checks_each(
            args.factory,
            config,
            capabilities=capabilities,
            check_timeout_s=args.check_timeout,
            pytest_args=pytest_args,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        if len(reports) == 1:
            data: Any = reports[0].to_json()
        else:
            data = {"ok": all(r.ok for r in reports), "reports": [r.to_json() for r in reports]}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(_check_table(report) for report in reports))
    return 0 if all(report.ok for report in reports) else 1


def _wrapped(detail: str) -> list[str]:
    """The lines of a check's message, each wrapped at word boundaries (never cut)."""
    lines: list[str] = []
    for paragraph in detail.strip().splitlines():
        lines += textwrap.wrap(
            paragraph,
            width=_REPORT_WIDTH,
            initial_indent=_DETAIL_INDENT,
            subsequent_indent=_DETAIL_INDENT + "  ",
            break_long_words=False,
            break_on_hyphens=False,
        ) or [""]
    return lines


def _check_table(report: Any) -> str:
    """One row per check (name and outcome), its message below it, wrapped; then the
    summary."""
    width = max((len(result.name) for result in report.results), default=0)
    lines = [f"opdecide check {report.target}", ""]
    for result in report.results:
        lines.append(f"{result.name:<{width}}  {result.outcome}")
        if result.detail.strip():
            lines += _wrapped(result.detail)
    lines += ["", report.summary()]
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="opdecide", description="Tools for testing LLM decision code."
    )
    parser.add_argument("--version", action="version", version="%(prog)s 0.1.0")
    commands = parser.add_subparsers(dest="command", required=True)
    menu = commands.add_parser("menu", help="print the rendered menu of an options object")
    menu.add_argument(
        "options",
        metavar="MODULE:OPTIONS",
        help="an options dict/list (or a function returning one)",
    )
    menu.set_defaults(run=_menu)
    check = commands.add_parser(
        "check",
        help="run the decision-provider conformance checks against provider factories",
        description="Run the DecisionProviderTests checks against provider factories and print "
        "one row per check, with its message. A check that crashes, hangs or takes the "
        "interpreter down is an error, and the other checks still run. Exit status: 0 when "
        "every check passes (or is skipped), 1 when one fails or errors, 2 for a usage error.",
    )
    check.add_argument(
        "factory",
        nargs="+",
        metavar="MODULE:FACTORY",
        help="a callable taking a ProviderFactoryConfig and returning a provider; several are "
        "checked one after the other",
    )
    check.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config value for the factory (api_key, base_url, timeout, model...); repeatable",
    )
    check.add_argument(
        "--capability",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a capability or setting of DecisionProviderTests (max_options=26, "
        "supported_question_types=choice,boolean, needs_backend=false, "
        "probability_tolerance=0.012, probability_decimals=3, call_timeout_s=30, "
        "sent_models=fast->gpt-4o-mini...); repeatable",
    )
    check.add_argument(
        "--select",
        metavar="EXPRESSION",
        help="run only the checks matching this pytest -k expression (e.g. 'abort or usage')",
    )
    check.add_argument(
        "--check-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="stop a check that runs longer than this, as an error (default: 300)",
    )
    check.add_argument(
        "--format", choices=("text", "json"), default="text", help="the report format"
    )
    check.set_defaults(run=_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except UsageError as exc:
        print(f"opdecide: error: {exc}", file=sys.stderr)
        return 2
    return status


if __name__ == "__main__":
    sys.exit(main())
