"""Token ids of the answer labels, for ``logit_bias``: from a tokenizer, a server, or the user.

``logit_bias`` is keyed by token id, and token ids depend on the model's tokenizer. The
provider learns them in one of three ways:

* ``label_token_ids={"A": [32, 330], ...}``: given by the user, used as they are;
* ``tokenizer=callable``: a function from text to token ids (``tiktoken``'s
  ``encoding.encode``, a Hugging Face tokenizer's ``encode``...);
* ``tokenizer="auto"``: the server's own tokenize endpoint, when it has one
  (llama-cpp-python's ``POST /extras/tokenize``; llama.cpp's and vLLM's ``POST /tokenize``).
  OpenAI's API has none and is not asked.

Only spellings that are exactly one token are biased: the first token of a longer spelling is
a prefix shared with other words. What was learnt is cached per provider and model; a server
without a tokenize endpoint is asked once, and the provider then goes on without a bias.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

import httpx
from pydantic import JsonValue

from pytest_opdecide.questions._prompt import label_spellings
from pytest_opdecide.questions._provider_errors import ProviderError

Tokenizer: TypeAlias = Callable[[str], Sequence[int]]
"""Text -> token ids, without special tokens (no BOS)."""
TokenizerOption: TypeAlias = Literal["auto"] | Tokenizer | None
"""The ``tokenizer`` argument of the provider: ``"auto"``, a tokenizer, or ``None`` (never)."""
PostJson: TypeAlias = Callable[[str, dict[str, Any]], Awaitable[httpx.Response]]
"""Sends a JSON body to a URL the way the provider sends every request (its client, headers
and timeout), raising ``ProviderError`` when the request fails."""

_NO_TOKENIZER_HOSTS: Final = frozenset({"api.openai.com"})
"""Servers known to have no tokenize endpoint: never asked."""


@dataclass(frozen=True)
class LabelTokens:
    """What is known of the tokens of some labels, for one model.

    Attributes:
        source: Where the ids come from: ``label_token_ids``, ``tokenizer``, a server endpoint
            (``server /extras/tokenize``), or why none are known (``off``,
            ``unavailable: ...``).
        ids: Label -> the token ids to bias (its single-token spellings, or the user's ids).
        spellings: Single-token spellings -> token id, when a tokenizer told them.
        multi_token_labels: Labels none of whose spellings is a single token.
    """

    source: str
    ids: dict[str, tuple[int, ...]] = field(default_factory=dict)
    spellings: dict[str, int] = field(default_factory=dict)
    multi_token_labels: tuple[str, ...] = ()

    def bias(self, labels: Iterable[str], value: float) -> dict[str, float]:
        """A ``logit_bias`` body field raising every known token of ``labels`` by ``value``."""
        return {str(token_id): value for label in labels for token_id in self.ids.get(label, ())}

    def metadata(self, labels: Sequence[str]) -> dict[str, JsonValue]:
        """What a question's metadata says about its label tokens."""
        meta: dict[str, JsonValue] = {"source": self.source}
        if self.spellings:
            wanted = {spelling for label in labels for spelling in label_spellings(label)}
            meta["ids"] = {s: i for s, i in self.spellings.items() if s in wanted}
        elif self.ids:
            meta["ids"] = {label: list(self.ids[label]) for label in labels if label in self.ids}
        multi: list[JsonValue] = [label for label in self.multi_token_labels if label in labels]
        if multi:
            meta["multi_token_labels"] = multi
        return meta


def _root(base_url: str) -> str:
    """The server root that tokenize endpoints hang off: the API root without ``/v1``."""
    return base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url


def _token_ids(data: object) -> list[int] | None:
    """The token ids of a tokenize reply (``{"tokens": [ids]}``), or ``None``."""
    if not isinstance(data, Mapping):
        return None
    tokens = data.get("tokens")
    if not isinstance(tokens, list):
        return None
    if not all(type(token) is int and token >= 0 for token in tokens):
        return None
    return list(tokens)


def check_tokenizer(tokenizer: object) -> TokenizerOption:
    """Refuse a ``tokenizer`` argument that is not ``"auto"``, ``None`` or a function."""
    if tokenizer is None or tokenizer == "auto" or callable(tokenizer):
        return tokenizer
    raise ValueError(
        f"tokenizer must be 'auto', None or a function from text to token ids, not {tokenizer!r}"
    )


def _call_tokenizer(tokenizer: Tokenizer, text: str) -> list[int]:
    try:
        tokens = tokenizer(text)
    except Exception as error:
        raise ProviderError(
            f"the tokenizer raised {type(error).__name__} for {text!r}: {error}",
            "invalid_request",
        ) from error
    checked = None
    if not isinstance(tokens, str | bytes) and isinstance(tokens, Sequence):
        checked = _token_ids({"tokens": list(tokens)})
    if checked is None:
        raise ProviderError(
            f"the tokenizer returned {tokens!r} for {text!r}: it must return a list of "
            "token ids (whole numbers >= 0)",
            "invalid_request",
        )
    return checked


def _single(tokens: list[int]) -> int | None:
    """The id of a spelling that is exactly one token, else ``None``."""
    return tokens[0] if len(tokens) == 1 else None


class LabelTokenCache:
    """Label token ids learnt for one provider, per model.

    Two decisions learning the same ids at once only ask twice: every write is the same.

    Args:
        base_url: The provider's API root (tokenize endpoints hang off the server's root).
    """

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        # (tokenizer, model, spelling) -> the spelling's token id, or None when it is not one
        # token; the tokenizer is "server" or the id() of the user's function.
        self._ids: dict[tuple[object, str, str], int | None] = {}
        self._endpoint: str | None = None
        self._unavailable: str | None = None
        if httpx.URL(base_url).host in _NO_TOKENIZER_HOSTS:
            self._unavailable = "the server has no tokenize endpoint"

    async def learn(
        self,
        post: PostJson,
        model: str,
        labels: Iterable[str],
        *,
        tokenizer: TokenizerOption,
        label_token_ids: Mapping[str, Sequence[int]],
    ) -> LabelTokens:
        """The token ids of ``labels``' spellings, asking the tokenizer for unknown ones.

        Args:
            post: Sends a request to the server.
            model: The model whose tokenizer counts.
            labels: The labels.
            tokenizer: The provider's ``tokenizer`` argument.
            label_token_ids: The provider's ``label_token_ids`` (used as they are when given).

        Raises:
            ProviderError: A user-supplied tokenizer raised, or returned something that is not
                a list of token ids (code ``invalid_request``).
        """
        labels = list(dict.fromkeys(labels))
        if label_token_ids:
            given = {label: tuple(label_token_ids.get(label, ())) for label in labels}
            return LabelTokens("label_token_ids", {k: v for k, v in given.items() if v})
        if tokenizer is None:
            return LabelTokens("off")
        key: object = id(tokenizer) if callable(tokenizer) else "server"
        spellings = [spelling for label in labels for spelling in label_spellings(label)]
        missing = [s for s in spellings if (key, model, s) not in self._ids]
        if missing:
            if callable(tokenizer):
                for spelling in missing:
                    tokens = _call_tokenizer(tokenizer, spelling)
                    self._ids[(key, model, spelling)] = _single(tokens)
            else:
                await self._ask_server(post, model, missing)
                if self._unavailable is not None:
                    return LabelTokens(f"unavailable: {self._unavailable}")
        elif not callable(tokenizer) and self._unavailable is not None:
            return LabelTokens(f"unavailable: {self._unavailable}")
        known = {s: i for s in spellings if (i := self._ids.get((key, model, s))) is not None}
        ids = {
            label: ids
            for label in labels
            if (ids := tuple(known[s] for s in label_spellings(label) if s in known))
        }
        multi = tuple(label for label in labels if label not in ids)
        source = "tokenizer" if callable(tokenizer) else f"server {self._endpoint}"
        return LabelTokens(source, ids, known, multi)

    async def _ask_server(self, post: PostJson, model: str, spellings: list[str]) -> None:
        if self._unavailable is not None:
            return
        if self._endpoint is None:
            first = await self._probe(post, model, spellings[0])
            if first is None:
                return
            self._ids[("server", model, spellings[0])] = _single(first)
            spellings = spellings[1:]
        replies = await asyncio.gather(*(self._post(post, model, s) for s in spellings))
        for spelling, tokens in zip(spellings, replies, strict=True):
            if isinstance(tokens, list):  # else: unknown for now, asked again next time
                self._ids[("server", model, spelling)] = _single(tokens)

    async def _probe(self, post: PostJson, model: str, text: str) -> list[int] | None:
        problems = []
        for endpoint in ("/extras/tokenize", "/tokenize"):
            self._endpoint = endpoint
            outcome = await self._post(post, model, text)
            if isinstance(outcome, list):
                return outcome
            problems.append(f"{endpoint}: {outcome}")
        self._endpoint = None
        self._unavailable = "; ".join(problems)
        return None

    async def _post(self, post: PostJson, model: str, text: str) -> list[int] | str:
        """The token ids of ``text`` from the current endpoint, or what went wrong."""
        assert self._endpoint is not None
        # One body that llama-cpp-python (input), llama.cpp (content) and vLLM (prompt) read;
        # each ignores the fields it does not know.
        body: dict[str, Any] = {
            "model": model,
            "input": text,
            "content": text,
            "prompt": text,
            "add_special": False,
            "add_special_tokens": False,
        }
        try:
            response = await post(f"{_root(self.base_url)}{self._endpoint}", body)
        except ProviderError as error:
            return f"{error.code}"
        if response.status_code >= 400:
            return f"HTTP {response.status_code}"
        try:
            tokens = _token_ids(response.json())
        except ValueError:
            tokens = None
        return "not a list of token ids" if tokens is None else tokens
