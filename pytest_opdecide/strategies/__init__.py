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

Where they are written: ``_option_sets`` (options), ``_replies`` (valid and invalid replies),
with ``_hypothesis_source`` (the choices of the decision library's value generator, made by
Hypothesis), ``_realistic`` (realistic text, JSON values, contexts) and
``_question_decisions`` (questions, requests and results).

Example:
    >>> from hypothesis import given
    >>> from pytest_opdecide import strategies
    >>> from pytest_opdecide.questions import validate_request
    >>> @given(strategies.decision_requests(max_questions=2))
    ... def test_requests_are_valid(request):
    ...     validate_request(request)
    >>> test_requests_are_valid()
"""

import importlib.util

from pytest_opdecide import MissingExtra

# Checked before anything imports them, so that a missing extra fails here with the command that
# installs it, not with a bare ModuleNotFoundError from deep inside a strategy module.
for _library in ("hypothesis", "faker"):
    if importlib.util.find_spec(_library) is None:
        raise MissingExtra(_library, extra="strategies", feature="pytest_opdecide.strategies")

from pytest_opdecide.strategies._option_sets import option_sets  # noqa: E402
from pytest_opdecide.strategies._question_decisions import (  # noqa: E402
    QUESTION_TYPES,
    boolean_questions,
    choice_questions,
    decision_requests,
    decision_results,
    questions,
    score_questions,
)
from pytest_opdecide.strategies._realistic import (  # noqa: E402
    TEXT_KINDS,
    contexts,
    json_values,
    realistic_text,
)
from pytest_opdecide.strategies._replies import (  # noqa: E402
    ValidReply,
    invalid_replies,
    valid_replies,
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
