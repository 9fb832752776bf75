"""Replies to next-step decisions: valid picks of an option, and replies that must fail.

A valid reply picks an option with arguments its field types accept (drawn by the decision
library's generator of field values, its choices made by Hypothesis: ``_hypothesis_source``), in
any of the ways a model writes a pick (bare JSON, after prose, in a fenced block, with the
``action`` key); an invalid reply carries the ``DecisionError`` kind it must end in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from fake_runtimes import InvalidReply
from fake_runtimes import invalid_replies as _seeded_invalid_replies
from pytest_opdecide.options import Option, draw_arguments, normalize_options
from pytest_opdecide.strategies._hypothesis_source import HypothesisSource
from pytest_opdecide.strategies._question_decisions import option_names
from pytest_opdecide.strategies._realistic import realistic_text

__all__ = ["ValidReply", "invalid_replies", "valid_replies"]


@dataclass(frozen=True)
class ValidReply:
    """A reply that picks an option validly.

    Attributes:
        text: The reply text, as a model would send it.
        option: The picked option's name.
        args: The arguments it sends (before validation converts them).
    """

    text: str
    option: str
    args: dict[str, Any]

    def __str__(self) -> str:
        return self.text


_PROSE = realistic_text("sentence").map(lambda text: text.replace("{", "(").replace("}", ")"))


@st.composite
def _reply_for(draw: st.DrawFn, option: Option) -> ValidReply:
    args = draw_arguments(option.fields, HypothesisSource(draw)) if option.kind != "value" else {}
    payload: dict[str, Any] = {"call": option.name}
    with_args = bool(args) or draw(st.booleans())
    if with_args:
        payload["args"] = args
    body = json.dumps(payload, ensure_ascii=draw(st.booleans()))
    style = draw(st.sampled_from(["bare", "prose", "fenced", "action_key"]))
    if style == "prose":
        text = f"{draw(_PROSE)}\n\n{body}"
    elif style == "fenced":
        text = f"{draw(_PROSE)}\n```json\n{json.dumps(payload, indent=2)}\n```"
    elif style == "action_key":
        payload = {"action": payload.pop("call"), **payload}
        text = json.dumps(payload)
    else:
        text = body
    return ValidReply(text, option.name, args)


def valid_replies(options: Any) -> st.SearchStrategy[ValidReply]:
    """Replies that pick one of ``options`` with arguments its field types accept.

    The reply comes as the bare JSON pick, after prose, in a fenced ``json`` block, or with
    the ``action`` key; optional fields are sent or left out at random.

    Args:
        options: Options in dict or list form.

    Raises:
        TypeError, ValueError: The options are malformed (as ``decision.render_options``).
    """
    menu = normalize_options(options)
    return st.sampled_from(menu.options).flatmap(_reply_for)


def _unknown_call(names: frozenset[str]) -> st.SearchStrategy[InvalidReply]:
    return (
        st.one_of(option_names(), st.text(min_size=1, max_size=20))
        .filter(lambda name: name not in names)
        .map(
            lambda name: InvalidReply(
                "unknown_call", json.dumps({"call": name}), f"{name!r} is not an option"
            )
        )
    )


def invalid_replies(options: Any) -> st.SearchStrategy[InvalidReply]:
    """Replies that must end in ``DecisionError``, each with the error ``kind`` it produces.

    Kinds: ``no_action`` (no JSON pick), ``unknown_call`` (an option not offered),
    ``bad_args`` (arguments not an object), and where the options allow it
    ``missing_required``, ``type_mismatch`` and ``enum_violation``. Built on
    :func:`fake_runtimes.invalid_replies` (seeded by hypothesis) plus generated prose and
    made-up option names.

    Args:
        options: Options in dict or list form.
    """
    menu = normalize_options(options)

    def seeded(seed: int) -> st.SearchStrategy[InvalidReply]:
        return st.sampled_from(_seeded_invalid_replies(options, seed=seed))

    return st.one_of(
        st.integers(min_value=0, max_value=10_000).flatmap(seeded),
        _PROSE.map(lambda text: InvalidReply("no_action", text, "prose without a JSON pick")),
        _unknown_call(frozenset(menu.names)),
    )
