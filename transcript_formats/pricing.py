"""Prices of model calls, USD per million tokens, for logs that do not record their cost.

List prices as published by Anthropic, OpenAI and Google (checked 2025-11). Cache writes are
priced at the 5-minute rate (1.25x input) for Claude; OpenAI and Google bill no separate cache
write, so their write price is the input price. Gemini Pro models are priced at the <=200k-token
prompt tier. A model is matched by the longest key that prefixes its normalised name, so
dated snapshots (claude-sonnet-4-5-20250929) find their family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .schema import Transcript, Usage


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost_usd(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / 1_000_000


def _claude(input_usd: float, output_usd: float) -> Price:
    return Price(input_usd, output_usd, input_usd * 0.1, input_usd * 1.25)


def _openai(input_usd: float, output_usd: float, cached_usd: float) -> Price:
    return Price(input_usd, output_usd, cached_usd, input_usd)


PRICES: dict[str, Price] = {
    # Anthropic
    "claude-opus-4-5": _claude(5.0, 25.0),
    "claude-opus-4-6": _claude(5.0, 25.0),
    "claude-opus-4-1": _claude(15.0, 75.0),
    "claude-opus-4": _claude(15.0, 75.0),
    "claude-sonnet-4-5": _claude(3.0, 15.0),
    "claude-sonnet-4": _claude(3.0, 15.0),
    "claude-3-7-sonnet": _claude(3.0, 15.0),
    "claude-3-5-sonnet": _claude(3.0, 15.0),
    "claude-haiku-4-5": _claude(1.0, 5.0),
    "claude-3-5-haiku": _claude(0.8, 4.0),
    "claude-3-haiku": _claude(0.25, 1.25),
    "claude-3-opus": _claude(15.0, 75.0),
    # OpenAI (Codex models share their base model's price)
    "gpt-5.1-codex-mini": _openai(0.25, 2.0, 0.025),
    "gpt-5-codex-mini": _openai(0.25, 2.0, 0.025),
    "gpt-5.2": _openai(1.75, 14.0, 0.175),
    "gpt-5.1": _openai(1.25, 10.0, 0.125),
    "gpt-5-mini": _openai(0.25, 2.0, 0.025),
    "gpt-5-nano": _openai(0.05, 0.4, 0.005),
    "gpt-5-pro": _openai(15.0, 120.0, 15.0),
    "gpt-5": _openai(1.25, 10.0, 0.125),
    "gpt-4.1-mini": _openai(0.4, 1.6, 0.1),
    "gpt-4.1-nano": _openai(0.1, 0.4, 0.025),
    "gpt-4.1": _openai(2.0, 8.0, 0.5),
    "gpt-4o-mini": _openai(0.15, 0.6, 0.075),
    "gpt-4o": _openai(2.5, 10.0, 1.25),
    "o4-mini": _openai(1.1, 4.4, 0.275),
    "o3-mini": _openai(1.1, 4.4, 0.55),
    "o3": _openai(2.0, 8.0, 0.5),
    "codex-mini-latest": _openai(1.5, 6.0, 0.375),
    # Google
    "gemini-3-pro": _openai(2.0, 12.0, 0.2),
    "gemini-2.5-pro": _openai(1.25, 10.0, 0.125),
    "gemini-2.5-flash-lite": _openai(0.1, 0.4, 0.01),
    "gemini-2.5-flash": _openai(0.3, 2.5, 0.03),
    "gemini-2.0-flash-lite": _openai(0.075, 0.3, 0.075),
    "gemini-2.0-flash": _openai(0.1, 0.4, 0.025),
}

_KEYS_LONGEST_FIRST = sorted(PRICES, key=len, reverse=True)
_PROVIDER_PREFIX = re.compile(r"^(?:[a-z0-9_-]+/)+")


def normalise_model(name: str) -> str:
    model = _PROVIDER_PREFIX.sub("", name.strip().lower())
    # Bedrock/Vertex spellings: anthropic.claude-sonnet-4-5-20250929-v1:0, claude-sonnet-4-5@2025
    model = model.removeprefix("anthropic.").removeprefix("us.anthropic.").split("@")[0]
    return model.replace(".", "-") if model.startswith("claude") else model


def price_for(model: str | None) -> Price | None:
    if not isinstance(model, str) or not model:
        return None
    name = normalise_model(model)
    for key in _KEYS_LONGEST_FIRST:
        if name.startswith(key):
            return PRICES[key]
    return None


def computed_cost_usd(transcript: Transcript) -> tuple[float | None, list[str]]:
    """Cost of every priced model call (subagents and abandoned branches included) and the
    models we had no price for."""
    total = 0.0
    priced_any = False
    unpriced: set[str] = set()
    for thread in transcript.all_threads():
        for turn in thread.turns:
            if turn.usage is None or turn.usage.total_tokens == 0:
                continue
            model = turn.model or transcript.model
            model = model if isinstance(model, str) else None
            price = price_for(model)
            if price is None:
                unpriced.add(model or "(unnamed model)")
                continue
            priced_any = True
            total += price.cost_usd(turn.usage)
    return (total if priced_any else None), sorted(unpriced)
