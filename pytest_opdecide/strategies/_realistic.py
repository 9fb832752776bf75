"""Realistic text, JSON values and decision contexts: what decisions are about.

Realistic text comes from Faker, seeded by Hypothesis (a drawn integer seeds one Faker per
locale), so examples shrink towards seed 0 and replay; the kinds of text are
:data:`TEXT_KINDS`. :func:`json_values` draws any JSON; :func:`contexts` draws text, realistic
records (:func:`fake_runtimes.fake_context`) and JSON objects and arrays.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping

from faker import Faker
from hypothesis import strategies as st

from fake_runtimes import CONTEXT_KINDS, fake_context
from pytest_opdecide.questions import DecisionContext, DecisionJson

__all__ = ["TEXT_KINDS", "contexts", "json_containers", "json_values", "realistic_text"]

# --- realistic text ----------------------------------------------------------------------------

_fakers: dict[str, Faker] = {}
_faker_lock = threading.Lock()


def _sentence(fake: Faker) -> str:
    return str(fake.sentence(nb_words=9))


def _question(fake: Faker) -> str:
    return str(fake.sentence(nb_words=8)).rstrip(".") + "?"


def _paragraph(fake: Faker) -> str:
    return str(fake.paragraph(nb_sentences=3))


def _name(fake: Faker) -> str:
    return str(fake.name())


def _word(fake: Faker) -> str:
    return str(fake.word())


def _email(fake: Faker) -> str:
    return str(fake.email())


TEXT_KINDS: Mapping[str, Callable[[Faker], str]] = {
    "email": _email,
    "name": _name,
    "paragraph": _paragraph,
    "question": _question,
    "sentence": _sentence,
    "word": _word,
}
"""The kinds of text :func:`realistic_text` makes."""


def _faker_text(kind: str, locale: str, seed: int) -> str:
    with _faker_lock:
        fake = _fakers.get(locale)
        if fake is None:
            fake = _fakers[locale] = Faker(locale)
        fake.seed_instance(seed)
        return TEXT_KINDS[kind](fake)


def realistic_text(kind: str = "sentence", *, locale: str = "en_US") -> st.SearchStrategy[str]:
    """Realistic text from Faker, seeded by hypothesis (reproducible, shrinks towards seed 0).

    Args:
        kind: One of :data:`TEXT_KINDS`: ``sentence``, ``question``, ``paragraph``, ``name``,
            ``word`` or ``email``.
        locale: A Faker locale.

    Raises:
        ValueError: Unknown ``kind``.
    """
    if kind not in TEXT_KINDS:
        raise ValueError(f"unknown text kind {kind!r}; the kinds are {sorted(TEXT_KINDS)}")
    return _realistic_text(kind, locale)


@functools.cache
def _realistic_text(kind: str, locale: str) -> st.SearchStrategy[str]:
    # Strategies are immutable: one per kind, built once (building them per draw is slow).
    return st.integers(min_value=0, max_value=2**32 - 1).map(
        functools.partial(_faker_text, kind, locale)
    )


# --- JSON and contexts ---------------------------------------------------------------------------

_JSON_SCALARS: st.SearchStrategy[DecisionJson] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(max_size=30),
    realistic_text("word"),
)


@functools.cache
def json_values(*, max_leaves: int = 12) -> st.SearchStrategy[DecisionJson]:
    """Any JSON value: scalars (strings, finite numbers, booleans, null), lists and objects."""
    return st.recursive(
        _JSON_SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(
                st.one_of(st.text(max_size=10), realistic_text("word")), inner, max_size=4
            ),
        ),
        max_leaves=max_leaves,
    )


@functools.cache
def json_containers() -> st.SearchStrategy[DecisionContext]:
    """JSON arrays and objects, never empty."""
    return st.one_of(
        st.lists(json_values(max_leaves=6), min_size=1, max_size=4),
        st.dictionaries(
            st.one_of(realistic_text("word"), st.text(min_size=1, max_size=10)),
            json_values(max_leaves=6),
            min_size=1,
            max_size=4,
        ),
    )


def contexts(*, structured: bool = True, text: bool = True) -> st.SearchStrategy[DecisionContext]:
    """Contexts of decisions: realistic text, realistic records (support tickets, chat
    transcripts, product reviews from :func:`~fake_runtimes.fake_context`) and arbitrary JSON
    objects and arrays.

    Args:
        structured: Include JSON objects and arrays.
        text: Include text.

    Raises:
        ValueError: Both kinds excluded.
    """
    if not structured and not text:
        raise ValueError("contexts() needs structured=True or text=True")
    return _contexts(structured, text)


@functools.cache
def _contexts(structured: bool, text: bool) -> st.SearchStrategy[DecisionContext]:
    choices: list[st.SearchStrategy[DecisionContext]] = []
    if text:
        choices += [realistic_text("paragraph"), realistic_text("sentence"), st.text(max_size=60)]
    if structured:
        choices += [
            st.builds(
                fake_context,
                st.sampled_from(CONTEXT_KINDS),
                st.integers(min_value=0, max_value=100_000),
            ),
            json_containers(),
        ]
    return st.one_of(choices)
