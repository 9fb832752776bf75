"""How a question is put to a language model: the labelled prompt and its answer labels.

Each question becomes one self-contained prompt: the request's context, the question's
instructions and its labelled outcomes. Choice options are labelled ``A``..``Z``, score levels
``0``..``9`` (their own indices) and boolean outcomes ``yes``/``no``. Structured values are
written as JSON text (indented, key order kept), never as Python ``repr``; text is written as is.
Nothing the caller wrote is re-indented or re-quoted: it reaches the model verbatim.

The prompt is built so that the model's first token is a label. The answer instruction ends the
prompt and names the labels, and a few worked examples of the same type (earlier turns of the
conversation, answered with a bare label) show the model what a reply looks like: a small model
that would otherwise start with ``The`` or ``Level`` then starts with ``B`` or ``2``.
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
    """

    kind: str
    labels: tuple[str, ...]
    outcomes: tuple[str, ...]
    body: str

    def label_instruction(self) -> str:
        """The request to answer with a single label: the last line of the prompt."""
        if self.kind == "choice":
            letters = _join_words(list(self.labels))
            return (
                f"Answer with a single letter ({letters}): the letter of the best option. "
                "Write nothing else."
            )
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
            Prompts rendered exactly like this one, each answered with a bare label.
        """
        return _example_turns(self.kind, count)

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
        return QuestionPrompt("choice", labels, tuple(question.options), "\n\n".join(sections))
    if isinstance(question, ScoreQuestion):
        labels = SCORE_LABELS[: len(question.levels)]
        lines = [
            _item(f"{label}.", render_value(level))
            for label, level in zip(labels, question.levels, strict=True)
        ]
        sections.append(_block("Question:", question.instructions))
        sections.append("Levels, from lowest to highest:\n" + "\n".join(lines))
        return QuestionPrompt(
            "score", labels, tuple(str(i) for i in range(len(labels))), "\n\n".join(sections)
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
    return QuestionPrompt("boolean", BOOLEAN_LABELS, ("true", "false"), "\n\n".join(sections))


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


EXAMPLES: Final[dict[str, tuple[WorkedExample, ...]]] = {
    "choice": (
        WorkedExample(
            "The parcel arrived soaked and the box was torn open.",
            ChoiceQuestion(
                instructions="What is the customer complaining about?",
                options={"price": None, "damaged_delivery": None, "late_delivery": None},
            ),
            "B",
        ),
        WorkedExample(
            "Invoice 88 lists a 20 EUR fee I never agreed to.",
            ChoiceQuestion(
                instructions="Which team should answer?",
                options={"billing": None, "warehouse": None},
            ),
            "A",
        ),
        WorkedExample(
            "Tap water leaks from the ceiling of flat 4.",
            ChoiceQuestion(
                instructions="Who should be called?",
                options={"electrician": None, "gardener": None, "plumber": None},
            ),
            "C",
        ),
    ),
    "score": (
        WorkedExample(
            "The sky is completely clear.",
            ScoreQuestion(
                instructions="How cloudy is it?", levels=["clear", "some clouds", "overcast"]
            ),
            "0",
        ),
        WorkedExample(
            "The film was good, with a few slow scenes.",
            ScoreQuestion(
                instructions="How positive is this review?",
                levels=["negative", "mixed", "positive", "enthusiastic"],
            ),
            "2",
        ),
        WorkedExample(
            "The soup is so salty that nobody can eat it.",
            ScoreQuestion(
                instructions="How salty is the soup?",
                levels=["not salty", "a little salty", "salty", "far too salty", "inedible"],
            ),
            "4",
        ),
    ),
    "boolean": (
        WorkedExample(
            "The shop closes at 18:00. It is 19:30.",
            BooleanQuestion(instructions="Is the shop open?"),
            "no",
        ),
        WorkedExample(
            "The invoice was paid in full on 3 May.",
            BooleanQuestion(instructions="Has the invoice been paid?"),
            "yes",
        ),
        WorkedExample(
            "The form has every field filled in and is signed.",
            BooleanQuestion(instructions="Is the form incomplete?"),
            "no",
        ),
    ),
}
"""Worked examples per question type, answered with labels spread over the scale (so that the
last one seen does not pull every answer towards one label)."""
MAX_EXAMPLES: Final = 3
"""The most worked examples a prompt can be given."""


@functools.cache
def _example_turns(kind: str, count: int) -> tuple[tuple[str, str], ...]:
    return tuple(
        (build_question_prompt(example.context, example.question).label_prompt(), example.answer)
        for example in EXAMPLES[kind][:count]
    )
