"""The price table: dated and provider-prefixed model names find their family."""

from __future__ import annotations

import pytest

from transcript_formats import Transcript, Usage
from transcript_formats.pricing import PRICES, computed_cost_usd, price_for
from transcript_formats.schema import Thread, Turn


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-opus-4.5", "claude-opus-4-5"),
        ("anthropic/claude-haiku-4-5", "claude-haiku-4-5"),
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet"),
        ("gpt-5-codex", "gpt-5"),
        ("gpt-5.1-codex-mini", "gpt-5.1-codex-mini"),
        ("openai/gpt-4.1-mini", "gpt-4.1-mini"),
        ("gemini-2.5-flash-lite", "gemini-2.5-flash-lite"),
        ("gemini-2.5-pro", "gemini-2.5-pro"),
    ],
)
def test_model_names_find_their_price_family(model, family):
    assert price_for(model) is PRICES[family]


def test_unknown_models_have_no_price():
    assert price_for("Claude 4.5 Sonnet via Cursor") is None
    assert price_for(None) is None


def test_cost_sums_calls_of_known_models_and_names_the_unknown_ones():
    turns = [
        Turn(index=0, model="claude-sonnet-4-5", usage=Usage(1_000_000, 0, 0, 0)),
        Turn(index=1, model="gpt-5", usage=Usage(0, 1_000_000, 2_000_000, 0)),
        Turn(index=2, model="mystery-1", usage=Usage(5, 5, 0, 0)),
    ]
    transcript = Transcript(format="test", threads=[Thread(id="main", turns=turns)])
    cost, unpriced = computed_cost_usd(transcript)
    assert cost == pytest.approx(3.0 + 10.0 + 2 * 0.125)
    assert unpriced == ["mystery-1"]
