"""Hypothesis strategies for decisions: options, replies, questions, requests and results.

Next-step decisions:

* :func:`option_sets`: options in dict or list form, with function, value and schema options
  (schemas nested at random);
* :func:`valid_replies`: replies that pick an option with arguments its field types accept;
* :func:`invalid_replies`: replies that must end in a ``DecisionError``, each with its kind.

Question decisions:

* :func:`contexts`, :func:`json_values` and :func:`realistic_text`: what decisions are about,
  as text or JSON, with faker-backed realistic text (a Faker seeded by hypothesis, so examples
  shrink and replay);
* :func:`choice_questions`, :func:`score_questions`, :func:`boolean_questions`,
  :func:`questions` and :func:`decision_requests`;
* :func:`decision_results`: valid results for a given request (each passes
  :func:`~pytest_opdecide.questions.validate_result`).

Example:
    >>> from hypothesis import given
    >>> from pytest_opdecide import strategies
    >>> from pytest_opdecide.questions import validate_request
    >>> @given(strategies.decision_requests(max_questions=2))
    ... def test_requests_are_valid(request):
    ...     validate_request(request)
    >>> test_requests_are_valid()
"""

from __future__ import annotations

import functools
import json
import math
import random
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from faker import Faker
from hypothesis import strategies as st

from fake_runtimes import CONTEXT_KINDS, InvalidReply, fake_context
from fake_runtimes import invalid_replies as _seeded_invalid_replies
from pytest_opdecide.options import (
    META_KEYS,
    ChoiceSpec,
    DictSpec,
    FieldSpec,
    ListSpec,
    ModelSpec,
    NoneSpec,
    ObjectSpec,
    Option,
    Param,
    PydanticSpec,
    ScalarSpec,
    SequenceSpec,
    TypeSpec,
    UnionSpec,
    normalize_options,
)
from pytest_opdecide.questions import (
    DEFAULT_TOLERANCE,
    BooleanAnswer,
    BooleanCriteria,
    BooleanQuestion,
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionAnswer,
    DecisionContext,
    DecisionJson,
    DecisionQuestion,
    DecisionRequest,
    DecisionResult,
    ProviderUsage,
    ScoreAnswer,
    ScoreQuestion,
    validate_result,
)

__all__ = [
    "QUESTION_TYPES",
    "TEXT_KINDS",
    "ValidReply",
    "boolean_questions",
    "choice_questions",
    "contexts",
    "decision_requests",
    "decision_results",
    "invalid_replies",
    "json_values",
    "option_sets",
    "questions",
    "realistic_text",
    "score_questions",
    "valid_replies",
]

QUESTION_TYPES = ("choice", "score", "boolean")
"""The question types, in the order of the specification."""

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
def _json_containers() -> st.SearchStrategy[DecisionContext]:
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
            _json_containers(),
        ]
    return st.one_of(choices)


# --- questions and requests ------------------------------------------------------------------

_INSTRUCTIONS = (
    "Which team should handle this ticket?",
    "What does the customer want most?",
    "Which reply template fits best?",
    "How urgent is this ticket?",
    "How satisfied does the customer sound?",
    "Does the customer ask for a refund?",
    "Is this message spam?",
    "Does the reply answer every question the customer asked?",
)
_OPTION_WORDS = (
    "billing", "shipping", "technical", "account", "returns", "warranty", "fraud", "sales",
    "escalate", "close", "refund", "wait", "ask_for_details", "Yes", "No", "unsure",
)  # fmt: skip
_QUESTION_IDS = (
    "route", "urgency", "refund", "intent", "sentiment", "spam", "language", "priority",
    "answered", "tone",
)  # fmt: skip


@functools.cache
def _instructions() -> st.SearchStrategy[DecisionContext]:
    return st.one_of(
        st.sampled_from(_INSTRUCTIONS),
        realistic_text("question"),
        st.fixed_dictionaries(
            {"task": st.sampled_from(_INSTRUCTIONS)},
            optional={
                "consider": st.lists(realistic_text("word"), min_size=1, max_size=3),
                "strict": st.booleans(),
            },
        ),
        st.lists(
            st.one_of(realistic_text("sentence"), json_values(max_leaves=3)), min_size=1, max_size=3
        ),
    )


def _folded(name: str) -> str:
    return name.strip().casefold()


@functools.cache
def _option_name() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(_OPTION_WORDS),
        realistic_text("word"),
        st.text(min_size=1, max_size=24).filter(lambda name: bool(name.strip())),
    )


@functools.cache
def _description() -> st.SearchStrategy[DecisionContext | None]:
    return st.one_of(
        st.none(), realistic_text("sentence"), _json_containers(), st.text(max_size=40)
    )


def choice_questions(
    *, min_options: int = 2, max_options: int = 6
) -> st.SearchStrategy[ChoiceQuestion]:
    """Choice questions with distinct option names (text, JSON or ``None`` descriptions).

    Args:
        min_options: The fewest options (at least 2: fewer is an invalid request).
        max_options: The most options.
    """
    _check_range("options", min_options, max_options, floor=2)
    return _choice_questions(min_options, max_options)


@functools.cache
def _choice_questions(min_options: int, max_options: int) -> st.SearchStrategy[ChoiceQuestion]:
    @st.composite
    def build(draw: st.DrawFn) -> ChoiceQuestion:
        names = draw(
            st.lists(_option_name(), min_size=min_options, max_size=max_options, unique_by=_folded)
        )
        return ChoiceQuestion(
            instructions=draw(_instructions()),
            options={name: draw(_description()) for name in names},
        )

    return build()


def score_questions(
    *, min_levels: int = 2, max_levels: int = 5
) -> st.SearchStrategy[ScoreQuestion]:
    """Score questions whose levels are text or JSON.

    Args:
        min_levels: The fewest levels (at least 2).
        max_levels: The most levels.
    """
    _check_range("levels", min_levels, max_levels, floor=2)
    return _score_questions(min_levels, max_levels)


@functools.cache
def _score_questions(min_levels: int, max_levels: int) -> st.SearchStrategy[ScoreQuestion]:
    level: st.SearchStrategy[DecisionContext] = st.one_of(
        realistic_text("sentence"), _json_containers(), st.text(max_size=30)
    )
    return st.builds(
        lambda instructions, levels: ScoreQuestion(instructions=instructions, levels=levels),
        _instructions(),
        st.lists(level, min_size=min_levels, max_size=max_levels),
    )


@functools.cache
def boolean_questions() -> st.SearchStrategy[BooleanQuestion]:
    """Boolean questions, with or without criteria for either outcome."""
    side: st.SearchStrategy[DecisionContext | None] = st.one_of(
        st.none(), realistic_text("sentence"), _json_containers()
    )
    criteria = st.one_of(
        st.none(), st.builds(lambda t, f: BooleanCriteria(true=t, false=f), side, side)
    )
    return st.builds(
        lambda instructions, crit: BooleanQuestion(instructions=instructions, criteria=crit),
        _instructions(),
        criteria,
    )


def questions(
    types: Sequence[str] = QUESTION_TYPES, *, max_options: int = 6, max_levels: int = 5
) -> st.SearchStrategy[DecisionQuestion]:
    """Questions of the given types.

    Args:
        types: Some of ``choice``, ``score`` and ``boolean``.
        max_options: The most options of a choice question.
        max_levels: The most levels of a score question.

    Raises:
        ValueError: No type, or an unknown one.
    """
    kinds = _check_types(types)
    made: list[st.SearchStrategy[DecisionQuestion]] = []
    if "choice" in kinds:
        made.append(choice_questions(max_options=max_options))
    if "score" in kinds:
        made.append(score_questions(max_levels=max_levels))
    if "boolean" in kinds:
        made.append(boolean_questions())
    return st.one_of(made)


def decision_requests(
    question_types: Sequence[str] = QUESTION_TYPES,
    *,
    min_questions: int = 1,
    max_questions: int = 3,
    max_options: int = 6,
    max_levels: int = 5,
    model: str | st.SearchStrategy[str] = "conformance-model",
    context: st.SearchStrategy[DecisionContext] | None = None,
) -> st.SearchStrategy[DecisionRequest]:
    """Valid decision requests: named questions of the given types about one context.

    Args:
        question_types: The question types to draw from.
        min_questions: The fewest questions (at least 1).
        max_questions: The most questions.
        max_options: The most options per choice question.
        max_levels: The most levels per score question.
        model: The request's model, or a strategy for it.
        context: A strategy for the context; :func:`contexts` by default.
    """
    _check_range("questions", min_questions, max_questions, floor=1)
    ids = st.one_of(
        st.sampled_from(_QUESTION_IDS), st.text(min_size=1, max_size=20).filter(str.strip)
    )
    models = model if isinstance(model, st.SearchStrategy) else st.just(model)
    return st.builds(
        lambda model_, context_, questions_: DecisionRequest(
            model=model_, context=context_, questions=questions_
        ),
        models,
        context if context is not None else contexts(),
        st.dictionaries(
            ids,
            questions(question_types, max_options=max_options, max_levels=max_levels),
            min_size=min_questions,
            max_size=max_questions,
        ),
    )


def _check_range(what: str, low: int, high: int, *, floor: int) -> None:
    if low < floor:
        raise ValueError(f"at least {floor} {what} are needed for a valid request, got {low}")
    if high < low:
        raise ValueError(f"the most {what} ({high}) is fewer than the fewest ({low})")


def _check_types(types: Sequence[str]) -> tuple[str, ...]:
    kinds = tuple(types)
    unknown = [kind for kind in kinds if kind not in QUESTION_TYPES]
    if unknown or not kinds:
        raise ValueError(f"question types are some of {list(QUESTION_TYPES)}, got {list(kinds)}")
    return kinds


# --- results -----------------------------------------------------------------------------------


@functools.cache
def _distribution(count: int, tolerance: float) -> st.SearchStrategy[list[float]]:
    """``count`` probabilities summing to 1: exact, or rounded when the sum stays in range."""

    @st.composite
    def build(draw: st.DrawFn) -> list[float]:
        weights = draw(st.lists(st.integers(0, 1000), min_size=count, max_size=count))
        if not any(weights):
            weights[draw(st.integers(0, count - 1))] = 1
        total = sum(weights)
        exact = [weight / total for weight in weights]
        digits = draw(st.sampled_from([None, 3, 4, 6]))
        if digits is not None:
            rounded = [round(p, digits) for p in exact]
            # Rounded values are reported as they are: kept only when their sum is in range.
            if abs(math.fsum(rounded) - 1.0) <= tolerance:
                exact = rounded
        return exact

    return build()


@functools.cache
def _confidence() -> st.SearchStrategy[float | None]:
    return st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0))


_PROBABILITY = st.floats(min_value=0.0, max_value=1.0)


def _answer(draw: st.DrawFn, question: DecisionQuestion, tolerance: float) -> DecisionAnswer:
    if isinstance(question, ChoiceQuestion):
        names = list(question.options)
        values = draw(_distribution(len(names), tolerance))
        probabilities = dict(zip(names, values, strict=True))
        choice = names[values.index(max(values))]
        return ChoiceAnswer(
            choice=choice, probabilities=probabilities, confidence=draw(_confidence())
        )
    if isinstance(question, ScoreQuestion):
        values = draw(_distribution(len(question.levels), tolerance))
        return ScoreAnswer(
            score=min(float(len(values) - 1), math.fsum(i * p for i, p in enumerate(values))),
            probabilities={str(i): p for i, p in enumerate(values)},
            legend={str(i): level for i, level in enumerate(question.levels)},
            confidence=draw(_confidence()),
        )
    return BooleanAnswer(probability=draw(_PROBABILITY))


@functools.cache
def _usage() -> st.SearchStrategy[ProviderUsage]:
    @st.composite
    def build(draw: st.DrawFn) -> ProviderUsage:
        prompt = draw(st.integers(0, 1_000_000))
        completion = draw(st.integers(0, 10_000))
        return ProviderUsage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            cached_tokens=draw(st.one_of(st.none(), st.integers(0, prompt))),
            provider=draw(st.one_of(st.none(), st.sampled_from(["openai-compatible", "fake"]))),
        )

    return build()


_MODELS = st.one_of(
    st.sampled_from(["gpt-4o-mini-2024-07-18", "smollm2-135m-instruct"]),
    st.text(min_size=1, max_size=30).filter(str.strip),
)


@functools.cache
def _metadata() -> st.SearchStrategy[dict[str, Any] | None]:
    return st.one_of(st.none(), st.dictionaries(st.text(max_size=10), json_values(max_leaves=4)))


def decision_results(
    request: DecisionRequest, *, tolerance: float = DEFAULT_TOLERANCE
) -> st.SearchStrategy[DecisionResult]:
    """Valid results for ``request``: one answer per question, complete distributions (exact or
    rounded within ``tolerance``), consistent scores, float booleans, integer usage.

    Every result is checked with :func:`~pytest_opdecide.questions.validate_result` before it
    is drawn.
    """

    @st.composite
    def results(draw: st.DrawFn) -> DecisionResult:
        answers = {
            question_id: _answer(draw, question, tolerance)
            for question_id, question in request.questions.items()
        }
        result = DecisionResult(
            model=draw(_MODELS),
            answers=answers,
            usage=draw(_usage()),
            metadata=draw(_metadata()),
        )
        return validate_result(request, result, tolerance=tolerance)

    return results()


# --- options -------------------------------------------------------------------------------------
# Example option functions: module-level (so that their names and annotations resolve), typed
# with what the decision library supports.


def lookup_order(order_id: str) -> dict[str, str]:
    """Look up an order.

    Args:
        order_id: The order's id, e.g. A-1042.
    """
    return {"order_id": order_id, "status": "shipped"}


def refund(amount: float, reason: str = "") -> dict[str, Any]:
    """Refund the customer.

    Args:
        amount: The amount in dollars.
        reason: Why, for the audit log.
    """
    return {"refunded": amount, "reason": reason}


def escalate(team: Literal["billing", "technical", "legal"], note: str | None = None) -> str:
    """Hand the ticket to a team."""
    return f"escalated to {team}"


def set_priority(level: Annotated[int, Param("1 = low, 3 = high", options=[1, 2, 3])]) -> int:
    """Set the ticket's priority."""
    return level


def tag_ticket(tags: list[str], public: bool = False) -> list[str]:
    """Add tags to the ticket."""
    return tags


def schedule_callback(minutes: int, channels: dict[str, bool] | None = None) -> str:
    """Call the customer back later."""
    return f"callback in {minutes} minutes"


def close_ticket() -> str:
    """Close the ticket: nothing more to do."""
    return "closed"


_FUNCTIONS: tuple[Callable[..., Any], ...] = (
    lookup_order,
    refund,
    escalate,
    set_priority,
    tag_ticket,
    schedule_callback,
    close_ticket,
)
_FUNCTION_NAMES = frozenset(f.__name__ for f in _FUNCTIONS)
_VALUE_NAMES = (
    "done", "wait", "ask_for_details", "reply", "spam", "billing", "shipping", "route_to_human",
    "summarise", "translate", "plan", "retry", "give_up", "answer",
)  # fmt: skip
_FIELD_NAMES = (
    "amount", "reason", "team", "note", "tags", "priority", "order_id", "when", "steps",
    "customer", "address", "quantity", "urgent", "language",
)  # fmt: skip
assert not META_KEYS & set(_FIELD_NAMES)  # a dict of only meta keys is read as a meta-spec


@functools.cache
def _schema_leaves() -> st.SearchStrategy[Any]:
    words = st.lists(realistic_text("word"), min_size=1, max_size=4, unique=True)
    return st.one_of(
        st.sampled_from([str, int, float, bool, list, dict]),
        realistic_text("sentence"),
        st.builds(
            lambda t, d: {"type": t, "description": d},
            st.sampled_from([str, int, float, bool]),
            realistic_text("sentence"),
        ),
        words.map(lambda options: {"type": str, "options": options}),
        st.lists(st.integers(0, 10), min_size=1, max_size=4, unique=True).map(
            lambda options: {"type": int, "options": options}
        ),
    )


def _schema_fields(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(_FIELD_NAMES), children, min_size=1, max_size=3)


@functools.cache
def _schema_notation() -> st.SearchStrategy[Any]:
    return st.recursive(
        _schema_leaves(),
        lambda children: st.one_of(
            children.map(lambda child: [child]),
            _schema_fields(children),
            st.builds(
                lambda fields, description: {"fields": fields, "description": description},
                _schema_fields(children),
                realistic_text("sentence"),
            ),
            children.map(lambda child: {"items": child}),
        ),
        max_leaves=6,
    )


@functools.cache
def _schemas() -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(_FIELD_NAMES), _schema_notation(), max_size=4)


@st.composite
def _option_set(
    draw: st.DrawFn, forms: tuple[str, ...], kinds: tuple[str, ...], min_size: int, max_size: int
) -> dict[str, Any] | list[Any]:
    form = draw(st.sampled_from(forms))
    drawn = draw(st.lists(st.sampled_from(kinds), min_size=min_size, max_size=max_size))
    functions = draw(
        st.lists(
            st.sampled_from(_FUNCTIONS),
            min_size=drawn.count("function"),
            max_size=drawn.count("function"),
            unique_by=(lambda f: f.__name__) if form == "list" else None,
        )
        if drawn.count("function") <= len(_FUNCTIONS) or form == "dict"
        else st.just(list(_FUNCTIONS))
    )
    names = iter(
        draw(
            st.lists(
                st.one_of(
                    st.sampled_from(_VALUE_NAMES),
                    st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True).filter(
                        lambda name: name not in _FUNCTION_NAMES
                    ),
                ),
                min_size=len(drawn),
                max_size=len(drawn),
                unique=True,
            )
        )
    )
    pending = iter(functions)
    entries: list[Any] = []
    as_dict: dict[str, Any] = {}
    for kind in drawn:
        described = draw(st.booleans())
        description = draw(realistic_text("sentence"))
        if kind == "function":
            fn = next(pending, None)
            if fn is None:  # more function options than functions in list form
                kind = "value"
            else:
                entries.append((fn, description) if described else fn)
                as_dict[next(names)] = (fn, description) if described else fn
                continue
        name = next(names)
        if kind == "value":
            value = draw(json_values(max_leaves=4))
            entries.append((name, description) if described else name)
            as_dict[name] = (value, description) if described else value
        else:
            schema = draw(_schemas())
            entries.append((name, description, schema))
            as_dict[name] = (description, schema)
    return as_dict if form == "dict" else entries


def option_sets(
    *,
    form: Literal["dict", "list"] | None = None,
    kinds: Sequence[str] = ("function", "value", "schema"),
    min_size: int = 1,
    max_size: int = 5,
) -> st.SearchStrategy[dict[str, Any] | list[Any]]:
    """Options of a next-step decision, in dict form (``{name: handler}``) or list form.

    Function options are drawn from a set of typed example functions (``lookup_order``,
    ``refund``, ``escalate``...); value options carry JSON values; schema options carry schema
    notation nested at random (``[template]``, ``{field: ...}``, meta-specs with ``options``,
    ``fields`` and ``items``).

    Args:
        form: ``"dict"``, ``"list"``, or ``None`` for either.
        kinds: Some of ``function``, ``value`` and ``schema``.
        min_size: The fewest options (at least 1).
        max_size: The most options.
    """
    forms = ("dict", "list") if form is None else (form,)
    chosen = tuple(kinds)
    if not chosen or any(kind not in ("function", "value", "schema") for kind in chosen):
        raise ValueError(f"kinds are some of function, value and schema, got {list(chosen)}")
    _check_range("options", min_size, max_size, floor=1)
    return _option_set(forms, chosen, min_size, max_size)


# --- replies -------------------------------------------------------------------------------------


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


def _values_for(spec: TypeSpec, depth: int = 0) -> st.SearchStrategy[Any]:
    """JSON values ``spec`` accepts."""
    if isinstance(spec, ChoiceSpec):
        return st.sampled_from(list(spec.choices or (None,)))
    if isinstance(spec, ScalarSpec):
        kind = spec.pytype
        if kind is str:
            return st.one_of(realistic_text("word"), st.text(max_size=30))
        if kind is bool:
            return st.booleans()
        if kind is int:
            return st.integers(min_value=-(10**6), max_value=10**6)
        if kind is float:
            return st.one_of(
                st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9),
                st.integers(min_value=-1000, max_value=1000),
            )
        if kind is list:
            return st.lists(json_values(max_leaves=4), max_size=3)
        return st.dictionaries(st.text(max_size=8), json_values(max_leaves=4), max_size=3)
    if isinstance(spec, NoneSpec):
        return st.none()
    if depth > 6:
        return st.nothing()
    if isinstance(spec, ListSpec):
        return st.lists(_values_for(spec.item, depth + 1), max_size=3)
    if isinstance(spec, SequenceSpec):
        items = [_values_for(item, depth + 1) for item in spec.items]
        if not spec.variadic:
            return st.tuples(*items).map(list)
        unique = spec.kind != "tuple"  # a set's items are distinct (as JSON)
        return st.lists(items[0], max_size=3, unique_by=_as_json if unique else None)
    if isinstance(spec, PydanticSpec):
        # Drawn from the type's JSON schema by a generator seeded by hypothesis: reproducible,
        # shrinking towards seed 0, and checked by pydantic (a value it refuses is not drawn).
        leaf = spec
        return (
            st.integers(min_value=0, max_value=2**32 - 1)
            .map(lambda seed: leaf.example(random.Random(seed)))
            .filter(leaf.accepts)
        )
    if isinstance(spec, DictSpec):
        return st.dictionaries(st.text(max_size=8), _values_for(spec.value, depth + 1), max_size=3)
    if isinstance(spec, ObjectSpec):
        return _fields_values(spec.fields, depth + 1)
    if isinstance(spec, ModelSpec):
        model_spec = spec
        return _fields_values(spec.shape.fields, depth + 1).filter(model_spec.accepts)
    if isinstance(spec, UnionSpec):
        return st.one_of([_values_for(member, depth + 1) for member in spec.members])
    return json_values(max_leaves=4)


def _as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _fields_values(fields: Sequence[FieldSpec], depth: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {f.name: _values_for(f.type, depth) for f in fields if f.required},
        optional={f.name: _values_for(f.type, depth) for f in fields if not f.required},
    )


_PROSE = realistic_text("sentence").map(lambda text: text.replace("{", "(").replace("}", ")"))


@st.composite
def _reply_for(draw: st.DrawFn, option: Option) -> ValidReply:
    args = draw(_fields_values(option.fields, 0)) if option.kind != "value" else {}
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
        st.one_of(_option_name(), st.text(min_size=1, max_size=20))
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
