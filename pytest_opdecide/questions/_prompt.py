"""How a question is put to a language model: the labelled prompt and its answer labels.

Each question becomes one self-contained prompt: the request's context, the question's
instructions and its labelled outcomes. Choice options are labelled ``A``..``Z``, score levels
``0``..``9`` (their own indices) and boolean outcomes ``yes``/``no``. Structured values are
written as JSON text (indented, key order kept), never as Python ``repr``; text is written as is.
Nothing the caller wrote is re-indented or re-quoted: it reaches the model verbatim.

The prompt is built so that the model's first token is a label. The answer instruction ends the
prompt and names the labels, and a few worked examples of the same type and shape (earlier turns
of the conversation, answered with a bare label: as many options or levels as the question, the
same kind of instructions, context and descriptions; see :class:`Shape`) show the model what a
reply looks like: a small model that would otherwise start with ``The`` or ``Level`` then starts
with ``B`` or ``2``, and one shown examples of two options does not answer ``C``.
"""

from __future__ import annotations

import functools
import json
import string
from dataclasses import dataclass
from typing import Final

from pytest_opdecide.questions._models import (
    BooleanQuestion,
    ChoiceQuestion,
    DecisionContext,
    DecisionQuestion,
    ScoreQuestion,
)

CHOICE_LABELS: Final = tuple(string.ascii_uppercase)
"""Labels of choice options, in option order: at most 26 options."""
SCORE_LABELS: Final = tuple(string.digits)
"""Labels of score levels (their indices): at most 10 levels."""
BOOLEAN_LABELS: Final = ("yes", "no")
"""Labels of the true and false outcomes of a boolean question."""

SYSTEM_PROMPT: Final = (
    "You are a careful evaluator. You read the context and answer the question about it "
    "exactly in the format asked for."
)


def render_value(value: DecisionContext) -> str:
    """Write a context value for a prompt: text as is, JSON as indented JSON text.

    Args:
        value: Text, or a JSON array or object.

    Returns:
        The text to put in the prompt.
    """
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)


def _block(heading: str, value: DecisionContext) -> str:
    return f"{heading}\n{render_value(value)}"


def _item(label: str, text: str) -> str:
    # Multi-line text and JSON go on their own lines, verbatim (never re-indented), so that
    # exactly what the caller wrote reaches the model.
    if "\n" in text:
        return f"{label}\n{text}"
    return f"{label} {text}" if text else label


def _join_words(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" or {words[-1]}"


@dataclass(frozen=True)
class QuestionPrompt:
    """A question rendered for a model.

    Attributes:
        kind: The question's type.
        labels: The tokens the model answers with, one per outcome.
        outcomes: The answer keys, one per label: option names, level indices (``"0"``...) or
            ``("true", "false")``.
        body: Context, instructions and labelled outcomes, without the answer instruction.
        shape: What its worked examples copy of it (see :class:`Shape`; by default a question
            of its type with as many outcomes as labels).
    """

    kind: str
    labels: tuple[str, ...]
    outcomes: tuple[str, ...]
    body: str
    shape: Shape | None = None

    def label_instruction(self) -> str:
        """The request to answer with a single label: the last line of the prompt."""
        if self.kind == "choice":
            # Each letter with its option: a small model then keeps to the letters offered
            # (without, it gave a question of two options 8-14% on the next letter, C).
            letters = _join_words(list(self.labels))
            each = ", ".join(
                f"{label} for {outcome}"
                for label, outcome in zip(self.labels, self.outcomes, strict=True)
            )
            return f"Answer with a single letter ({letters}): {each}. Write nothing else."
        if self.kind == "score":
            top = len(self.labels) - 1
            return (
                f"Answer with a single digit (0 to {top}): the number of the level that fits "
                "best. Write nothing else."
            )
        return "Answer with yes or no. Write nothing else."

    def label_prompt(self) -> str:
        """The full prompt asking for a single label (used with token probabilities)."""
        return f"{self.body}\n\n{self.label_instruction()}"

    def example_turns(self, count: int) -> tuple[tuple[str, str], ...]:
        """Worked examples of this prompt's type, as ``(prompt, reply)`` turns.

        Args:
            count: How many (0 to :data:`MAX_EXAMPLES`).

        Returns:
            Prompts rendered exactly like this one, of the same shape (as many options or
            levels, the same kind of instructions, context and descriptions), each answered
            with a bare label.
        """
        size = 0 if self.kind == "boolean" else len(self.labels)
        return _example_turns(self.shape or Shape(self.kind, size), count)

    def example_distribution(self) -> str:
        """An example of the JSON distribution the verbalized prompt asks for."""
        share = round(1 / len(self.labels), 2)
        values = [share] * (len(self.labels) - 1) + [round(1 - share * (len(self.labels) - 1), 2)]
        return json.dumps(dict(zip(self.labels, values, strict=True)))

    def verbalized_prompt(self) -> str:
        """The full prompt asking for a probability for every label, as a JSON object."""
        keys = ", ".join(json.dumps(label) for label in self.labels)
        return (
            f"{self.body}\n\n"
            "Do not answer directly. Reply with only a JSON object that gives, for each possible "
            f"answer, the probability that it is the right one. Use exactly the keys {keys}; the "
            "values are numbers between 0 and 1 that sum to 1. For example: "
            f"{self.example_distribution()}"
        )


def build_question_prompt(context: DecisionContext, question: DecisionQuestion) -> QuestionPrompt:
    """Render ``question`` about ``context``.

    Args:
        context: The request's context.
        question: A question that passed ``validate_request`` (with at most 26 options or 10
            levels).

    Returns:
        The rendered question.
    """
    sections = [] if context == "" else [_block("Context:", context)]
    if isinstance(question, ChoiceQuestion):
        labels = CHOICE_LABELS[: len(question.options)]
        blocks = []
        for label, (name, description) in zip(labels, question.options.items(), strict=True):
            block = f"{label}. {name}"
            if description is not None:
                block += f"\n{render_value(description)}"
            blocks.append(block)
        described = any(description is not None for description in question.options.values())
        sections.append(_block("Question:", question.instructions))
        sections.append("Options:\n" + ("\n\n" if described else "\n").join(blocks))
        return QuestionPrompt(
            "choice",
            labels,
            tuple(question.options),
            "\n\n".join(sections),
            question_shape(context, question),
        )
    if isinstance(question, ScoreQuestion):
        labels = SCORE_LABELS[: len(question.levels)]
        lines = [
            _item(f"{label}.", render_value(level))
            for label, level in zip(labels, question.levels, strict=True)
        ]
        sections.append(_block("Question:", question.instructions))
        sections.append("Levels, from lowest to highest:\n" + "\n".join(lines))
        return QuestionPrompt(
            "score",
            labels,
            tuple(str(i) for i in range(len(labels))),
            "\n\n".join(sections),
            question_shape(context, question),
        )
    assert isinstance(question, BooleanQuestion)
    sections.append(_block("Question (answer yes or no):", question.instructions))
    criteria = question.criteria
    lines = []
    if criteria is not None and criteria.true is not None:
        lines.append(_item('"yes" means:', render_value(criteria.true)))
    if criteria is not None and criteria.false is not None:
        lines.append(_item('"no" means:', render_value(criteria.false)))
    if lines:
        sections.append("\n".join(lines))
    return QuestionPrompt(
        "boolean",
        BOOLEAN_LABELS,
        ("true", "false"),
        "\n\n".join(sections),
        question_shape(context, question),
    )


def label_spellings(label: str) -> tuple[str, ...]:
    """The spellings a model may start its reply with when it answers ``label``.

    A reply's first token follows the chat template's start of the assistant turn, which ends
    in a newline in most templates (no leading space) and in a space in a few. Word labels are
    also written capitalised.

    Args:
        label: An answer label (``"A"``, ``"0"``, ``"yes"``...).

    Returns:
        The distinct spellings, the bare label first.

    Example:
        >>> label_spellings("A"), label_spellings("yes")
        (('A', ' A'), ('yes', ' yes', 'Yes', ' Yes'))
    """
    variants = [label, f" {label}"]
    if len(label) > 1 and label.isalpha():
        variants += [label.capitalize(), f" {label.capitalize()}"]
    return tuple(dict.fromkeys(variants))


@dataclass(frozen=True)
class WorkedExample:
    """A question with its answer label, shown to the model before the real question.

    Attributes:
        context: The example's context.
        question: The example question.
        answer: The label the model is shown replying with.
    """

    context: DecisionContext
    question: DecisionQuestion
    answer: str


@dataclass(frozen=True)
class Shape:
    """What the worked examples of a question copy of it, so that they look like it.

    A model answers with the labels it has seen used: after examples of three and four options,
    a small model puts a good part of its probability on ``C`` for a question of two. So the
    examples of a question have its number of options (or levels), its kind of instructions,
    context and descriptions.

    Attributes:
        kind: The question's type.
        size: Its number of options or levels (0 for a boolean question).
        described: Whether its options have descriptions (choice), its levels are structured
            (score), or it has criteria (boolean).
        structured_instructions: Whether its instructions are JSON rather than text.
        structured_context: Whether the request's context is JSON rather than text.
    """

    kind: str
    size: int = 0
    described: bool = False
    structured_instructions: bool = False
    structured_context: bool = False


def question_shape(context: DecisionContext, question: DecisionQuestion) -> Shape:
    """The shape of ``question`` about ``context`` (see :class:`Shape`)."""
    structured = not isinstance(question.instructions, str)
    in_json = not isinstance(context, str)
    if isinstance(question, ChoiceQuestion):
        described = any(value is not None for value in question.options.values())
        return Shape("choice", len(question.options), described, structured, in_json)
    if isinstance(question, ScoreQuestion):
        levels_json = any(not isinstance(level, str) for level in question.levels)
        return Shape("score", len(question.levels), levels_json, structured, in_json)
    criteria = question.criteria
    has_criteria = criteria is not None and (
        criteria.true is not None or criteria.false is not None
    )
    return Shape("boolean", 0, has_criteria, structured, in_json)


@dataclass(frozen=True)
class _ChoiceTemplate:
    context: str
    instructions: str
    answer: tuple[str, str]  # (option name, description)
    others: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class _ScoreTemplate:
    context: str
    instructions: str
    ladder: tuple[str, ...]  # ten levels, lowest first
    target: int  # the index in the ladder that fits the context


@dataclass(frozen=True)
class _BooleanTemplate:
    context: str
    instructions: str
    answer: bool
    true: str
    false: str


_CHOICE_TEMPLATES: Final = (
    _ChoiceTemplate(
        "The parcel arrived soaked and the box was torn open.",
        "What is the customer complaining about?",
        ("damaged_delivery", "The goods arrived damaged"),
        (
            ("price", "The price is too high"),
            ("late_delivery", "The parcel came late"),
            ("wrong_item", "Another item was sent"),
            ("rude_staff", "Staff were impolite"),
            ("missing_invoice", "No invoice came with the order"),
        ),
    ),
    _ChoiceTemplate(
        "Invoice 88 lists a 20 EUR fee I never agreed to.",
        "Which team should answer?",
        ("billing", "Invoices, fees and refunds"),
        (
            ("warehouse", "Stock and packing"),
            ("it_support", "Logins and software"),
            ("marketing", "Campaigns and newsletters"),
            ("reception", "Visitors and post"),
            ("canteen", "Meals and coffee"),
        ),
    ),
    _ChoiceTemplate(
        "Tap water leaks from the ceiling of flat 4.",
        "Who should be called?",
        ("plumber", "Pipes, taps and leaks"),
        (
            ("electrician", "Wiring and lights"),
            ("gardener", "Lawns and hedges"),
            ("locksmith", "Locks and keys"),
            ("window_cleaner", "Clean windows"),
            ("chimney_sweep", "Chimneys and flues"),
        ),
    ),
)
# The top answer first and a middle one last: answered lowest, middle, top in that order, the
# examples made SmolLM2-135M count on past the top level ("5" after "4" of five levels), and
# the first question set's scores lost label mass (mean 0.908 this way, 0.877 the other).
_SCORE_TEMPLATES: Final = (
    _ScoreTemplate(
        "The soup is so salty that nobody can eat it.",
        "How salty is the soup?",
        (
            "not salty",
            "barely salty",
            "a little salty",
            "lightly salted",
            "salted",
            "quite salty",
            "salty",
            "very salty",
            "far too salty",
            "inedible",
        ),
        9,
    ),
    _ScoreTemplate(
        "The sky is completely clear.",
        "How cloudy is it?",
        (
            "clear",
            "almost clear",
            "a few clouds",
            "some clouds",
            "partly cloudy",
            "mostly cloudy",
            "cloudy",
            "very cloudy",
            "overcast",
            "dark and overcast",
        ),
        0,
    ),
    _ScoreTemplate(
        "The film was good, with a few slow scenes.",
        "How positive is this review?",
        (
            "hostile",
            "very negative",
            "negative",
            "somewhat negative",
            "mixed",
            "somewhat positive",
            "positive",
            "very positive",
            "enthusiastic",
            "ecstatic",
        ),
        6,
    ),
)
_BOOLEAN_TEMPLATES: Final = (
    _BooleanTemplate(
        "The shop closes at 18:00. It is 19:30.",
        "Is the shop open?",
        False,
        "The shop is open now",
        "The shop is closed now",
    ),
    _BooleanTemplate(
        "The invoice was paid in full on 3 May.",
        "Has the invoice been paid?",
        True,
        "The whole amount has been paid",
        "Some of it is still owed",
    ),
    _BooleanTemplate(
        "The form has every field filled in and is signed.",
        "Is the form incomplete?",
        False,
        "A field is empty or the signature is missing",
        "Everything is filled in and signed",
    ),
)
MAX_EXAMPLES: Final = len(_CHOICE_TEMPLATES)
"""The most worked examples a prompt can be given."""
MAX_EXAMPLE_OPTIONS: Final = 1 + len(_CHOICE_TEMPLATES[0].others)
"""The most options a worked example has (a question with more gets examples with this many)."""


def _context(text: str, shape: Shape) -> DecisionContext:
    return {"text": text} if shape.structured_context else text


def _instructions(text: str, shape: Shape) -> DecisionContext:
    return {"task": text} if shape.structured_instructions else text


def _answer_positions(size: int) -> tuple[int, ...]:
    """Where the right option (or level) of each example sits: spread over the labels and
    ending on the last, so that no single label is the one always shown."""
    return (1 % size, 0, size - 1)


def _choice_example(template: _ChoiceTemplate, position: int, shape: Shape) -> WorkedExample:
    size = min(max(shape.size, 2), MAX_EXAMPLE_OPTIONS)
    position = min(position, size - 1)
    options = list(template.others[: size - 1])
    options.insert(position, template.answer)
    question = ChoiceQuestion(
        instructions=_instructions(template.instructions, shape),
        options={name: (text if shape.described else None) for name, text in options},
    )
    return WorkedExample(_context(template.context, shape), question, CHOICE_LABELS[position])


def _score_example(template: _ScoreTemplate, shape: Shape) -> WorkedExample:
    size = min(max(shape.size, 2), len(SCORE_LABELS))
    top = len(template.ladder) - 1
    picked = [round(index * top / (size - 1)) for index in range(size)]
    answer = min(range(size), key=lambda level: abs(picked[level] - template.target))
    levels: list[DecisionContext] = [
        {"label": template.ladder[index]} if shape.described else template.ladder[index]
        for index in picked
    ]
    question = ScoreQuestion(
        instructions=_instructions(template.instructions, shape), levels=levels
    )
    return WorkedExample(_context(template.context, shape), question, SCORE_LABELS[answer])


def _boolean_example(template: _BooleanTemplate, shape: Shape) -> WorkedExample:
    fields: dict[str, object] = {"instructions": _instructions(template.instructions, shape)}
    if shape.described:
        fields["criteria"] = {"true": template.true, "false": template.false}
    question = BooleanQuestion.model_validate(fields)
    answer = BOOLEAN_LABELS[0] if template.answer else BOOLEAN_LABELS[1]
    return WorkedExample(_context(template.context, shape), question, answer)


@functools.cache
def worked_examples(shape: Shape) -> tuple[WorkedExample, ...]:
    """The :data:`MAX_EXAMPLES` worked examples for questions of ``shape``, answered with
    labels spread over the scale (so that the last one seen does not pull every answer towards
    one label).

    Example:
        >>> two = worked_examples(Shape("choice", 2))
        >>> [len(example.question.options) for example in two], [e.answer for e in two]
        ([2, 2, 2], ['B', 'A', 'B'])
    """
    if shape.kind == "choice":
        positions = _answer_positions(min(max(shape.size, 2), MAX_EXAMPLE_OPTIONS))
        return tuple(
            _choice_example(template, position, shape)
            for template, position in zip(_CHOICE_TEMPLATES, positions, strict=True)
        )
    if shape.kind == "score":
        return tuple(_score_example(template, shape) for template in _SCORE_TEMPLATES)
    return tuple(_boolean_example(template, shape) for template in _BOOLEAN_TEMPLATES)


EXAMPLES: Final[dict[str, tuple[WorkedExample, ...]]] = {
    "choice": worked_examples(Shape("choice", 3)),
    "score": worked_examples(Shape("score", 5)),
    "boolean": worked_examples(Shape("boolean")),
}
"""Worked examples per question type, for a question of three options, five levels, or no
criteria (a question of another shape gets its own: :func:`worked_examples`)."""


@functools.cache
def _example_turns(shape: Shape, count: int) -> tuple[tuple[str, str], ...]:
    return tuple(
        (build_question_prompt(example.context, example.question).label_prompt(), example.answer)
        for example in worked_examples(shape)[:count]
    )
