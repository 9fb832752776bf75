"""Seeded fakes, ``every_option``, ``invalid_replies`` and the strategies cover every type
pydantic validates: generated values pass, wrongly typed ones fail as ``type_mismatch``."""

from __future__ import annotations

import datetime
import decimal
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_runtimes import ScriptedRuntime, SeededRuntime, every_option, invalid_replies
from pytest_opdecide import DecisionError, decision, strategies

from ._typed_options import BOOKING_OPTIONS, Leg, Traveller


def test_every_option_fills_every_type_validly() -> None:
    picks = every_option(BOOKING_OPTIONS)
    assert [p.option for p in picks] == ["book", "hold", "cancel"]
    result = decision.make("Book.", BOOKING_OPTIONS, runtime=ScriptedRuntime(picks[0]))
    assert isinstance(result["day"], datetime.date)
    assert isinstance(result["fare"], decimal.Decimal)
    assert isinstance(result["ref"], uuid.UUID)
    assert isinstance(result["seats"], set)
    assert isinstance(result["codes"], frozenset)
    assert isinstance(result["pair"], tuple)
    assert all(isinstance(d, datetime.date) for d in result["many"])
    assert 1 <= result["count"] <= 9
    assert isinstance(result["leg"], Leg)
    assert isinstance(result["traveller"], Traveller)
    hold = decision.make("Hold.", BOOKING_OPTIONS, runtime=ScriptedRuntime(picks[1]))
    assert isinstance(hold["until"], datetime.date)
    assert isinstance(hold["fare"], decimal.Decimal)


@pytest.mark.parametrize("seed", range(25))
def test_seeded_picks_of_every_type_resolve_on_the_first_attempt(seed: int) -> None:
    runtime = SeededRuntime(seed)
    decision.make("Book.", BOOKING_OPTIONS, runtime=runtime, max_retries=0)
    assert [c.kind for c in runtime.calls] == ["turn"]


def test_invalid_replies_give_a_wrong_type_for_every_field() -> None:
    cases = invalid_replies(BOOKING_OPTIONS)
    assert [str(c) for c in cases if c.kind == "type_mismatch"] == [
        *(
            f"type_mismatch:book.{name}"
            for name in [
                "day",
                "at",
                "boarding",
                "layover",
                "fare",
                "ref",
                "seats",
                "codes",
                "pair",
                "many",
                "where",
                "count",
                "cabin",
                "leg",
                "traveller",
                "either",
                "maybe",
                "legs",
            ]
        ),
        "type_mismatch:hold.until",
        "type_mismatch:hold.fare",
    ]


@pytest.mark.parametrize("case", invalid_replies(BOOKING_OPTIONS), ids=str)
def test_each_invalid_reply_fails_with_its_kind(case: Any) -> None:
    with pytest.raises(DecisionError) as caught:
        decision.make("Book.", BOOKING_OPTIONS, runtime=ScriptedRuntime(case.reply), max_retries=0)
    assert caught.value.kind == case.kind


SETTINGS = settings(
    max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


@given(data=st.data())
@SETTINGS
def test_valid_replies_of_every_type_resolve(data: st.DataObject) -> None:
    reply = data.draw(strategies.valid_replies(BOOKING_OPTIONS))
    result = decision.resolve_decision(reply.text, BOOKING_OPTIONS, max_retries=0)
    if reply.option == "book":
        assert isinstance(result["day"], datetime.date)


@given(data=st.data())
@SETTINGS
def test_invalid_replies_of_every_type_fail_with_their_kind(data: st.DataObject) -> None:
    bad = data.draw(strategies.invalid_replies(BOOKING_OPTIONS))
    with pytest.raises(DecisionError) as caught:
        decision.resolve_decision(bad.reply, BOOKING_OPTIONS, max_retries=0)
    assert caught.value.kind == bad.kind
