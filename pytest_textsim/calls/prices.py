"""What a model call cost, in USD: a price file of the user's (``textsim_prices``), then
the table of `genai-prices <https://github.com/pydantic/genai-prices>`_ (an optional
dependency, ``pip install 'pytest-textsim[prices]'``; its data ships inside the
package, so pricing works offline).

A call whose model has no price is priced ``None`` -- unknown, never 0 -- with a
note that says how to add one. The price file, TOML or JSON, gives USD per
million tokens::

    [models."my-llama-3"]          # the model name the server reports
    input = 0.20
    output = 0.40
    cached_input = 0.05            # optional: prompt tokens read from the cache
    cache_write = 0.25             # optional: prompt tokens written to the cache

A key may also be ``provider/model`` (``"azure/gpt-4o"``) to price one provider's
model apart.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import TextsimError
from ..jsonl import number_problem
from .model import LLMCall, Usage

#: The keys of a model's entry in a price file, USD per million tokens.
PRICE_KEYS = ("input", "output", "cached_input", "cache_write")
#: The providers genai-prices knows by the names ``LLMCall.provider`` uses.
_GENAI_PROVIDER = MappingProxyType({"openai": "openai", "azure": "azure", "anthropic": "anthropic"})


class PriceFileError(TextsimError, ValueError):
    """A ``textsim_prices`` file that cannot be read; the message names the file."""


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens; cached prompt tokens cost ``cached_input`` (default: input)."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def cost(self, usage: Usage) -> float:
        cached = self.input if self.cached_input is None else self.cached_input
        written = self.input if self.cache_write is None else self.cache_write
        fresh = max(usage.input - usage.cached - usage.cache_write, 0)
        return (
            fresh * self.input
            + usage.cached * cached
            + usage.cache_write * written
            + usage.output * self.output
        ) / 1_000_000


def load_prices(path: Path, source: str) -> dict[str, ModelPrice]:
    """The ``models`` table of a TOML or JSON price file; errors name the file and model."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise PriceFileError(f"{source}: cannot read {path}: {exc}") from None
    try:
        if path.suffix.lower() == ".json":
            document: Any = json.loads(text)
        else:
            if sys.version_info >= (3, 11):
                import tomllib
            else:  # pragma: no cover - Python 3.9/3.10: pytest's own dependency
                import tomli as tomllib
            document = tomllib.loads(text)
    except ValueError as exc:  # JSONDecodeError and TOMLDecodeError are ValueErrors
        problem = number_problem(exc) or f"not valid {_kind(path)}: {exc}"
        raise PriceFileError(f"{path} (from {source}): {problem}") from None
    except RecursionError:
        raise PriceFileError(f"{path} (from {source}): {_kind(path)} nested too deeply") from None
    models = document.get("models") if isinstance(document, dict) else None
    if not isinstance(models, dict):
        raise PriceFileError(
            f"{path} (from {source}): expected a 'models' table, e.g. "
            '[models."my-model"] input = 0.2, output = 0.4 (USD per million tokens)'
        )
    prices = {}
    for name, entry in models.items():
        where = f"{path} (from {source}): model {name!r}"
        if not isinstance(entry, dict):
            raise PriceFileError(f"{where}: expected a table of {', '.join(PRICE_KEYS)}")
        unknown = sorted(set(entry) - set(PRICE_KEYS))
        if unknown:
            raise PriceFileError(
                f"{where}: unknown key(s) {', '.join(unknown)}; use {', '.join(PRICE_KEYS)}"
            )
        values = {}
        for key in PRICE_KEYS:
            value = entry.get(key)
            if value is None and key in ("input", "output"):
                raise PriceFileError(f"{where}: '{key}' is missing (USD per million tokens)")
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value < 0
            ):
                raise PriceFileError(f"{where}: '{key}' must be a number >= 0, got {value!r}")
            values[key] = None if value is None else float(value)
        prices[str(name)] = ModelPrice(**values)  # type: ignore[arg-type]
    return prices


def _kind(path: Path) -> str:
    return "JSON" if path.suffix.lower() == ".json" else "TOML"


class PriceTable:
    """Prices calls: the user's file first, then genai-prices when it is installed."""

    def __init__(self, custom: dict[str, ModelPrice] | None = None, source: str = "") -> None:
        self.custom = dict(custom or {})
        self.source = source  # where the custom prices came from, for notes

    def price(self, call: LLMCall) -> LLMCall:
        """Set ``call.cost_usd`` (or ``price_note`` saying why it is unknown); return it."""
        if call.error or call.status >= 400:
            call.cost_usd, call.price_note = 0.0, None  # a refused call is not billed
            return call
        if call.usage is None:
            call.price_note = "the reply reported no token usage"
            return call
        model = call.model or ""
        own = self.custom.get(f"{call.provider}/{model}") or self.custom.get(model)
        if own is not None:
            call.cost_usd = own.cost(call.usage)
            return call
        call.cost_usd, call.price_note = _genai_price(call, call.usage)
        return call

    def model_price(self, model: str, provider: str) -> tuple[ModelPrice | None, str]:
        """``model``'s price per million tokens, or None and why it is unknown.

        From the price file as written; from genai-prices, the price of a small
        call (a thousand tokens of each kind, scaled): the tier a judge's prompts
        are billed at, where a model's price rises with the prompt's length.
        """
        own = self.custom.get(f"{provider}/{model}") or self.custom.get(model)
        if own is not None:
            return own, ""
        per = 1000

        def price(**tokens: int) -> float | None:
            return self.cost(model, provider, Usage(**tokens))

        found = [price(input=per), price(output=per), price(input=per, cached=per)]
        if None in found:
            call = LLMCall("chat", provider, model, "", 200, {}, usage=Usage(input=per))
            return None, self.price(call).price_note or f"no price for model {model!r}"
        fresh, out, cached = (value * 1_000_000 / per for value in found)  # type: ignore[operator]
        return ModelPrice(fresh, out, cached), ""

    def lazy(self, model: str, provider: str) -> LazyPrice:
        """``model``'s price as :meth:`model_price` gives it, looked up in genai-prices only
        when first asked (importing its table takes a good part of a second)."""
        own = self.custom.get(f"{provider}/{model}") or self.custom.get(model)
        return LazyPrice(model, provider, own)

    def cost(self, model: str, provider: str, usage: Usage) -> float | None:
        """The cost of ``usage`` tokens of ``model``; None when no price is known."""
        call = LLMCall("chat", provider, model, "", 200, {}, usage=usage)
        return self.price(call).cost_usd


@dataclass(frozen=True)
class LazyPrice:
    """A model's price: the price file's (``own``), else genai-prices', read on first use.

    Small and picklable: a judge hub gets it with each request and prices the call
    itself, so processes that make no call never import genai-prices.
    """

    model: str
    provider: str
    own: ModelPrice | None = None

    def get(self) -> tuple[ModelPrice | None, str]:
        """The price, or None and why it is unknown (how to add one)."""
        if self.own is not None:
            return self.own, ""
        return _listed(self.model, self.provider)


@functools.cache
def _listed(model: str, provider: str) -> tuple[ModelPrice | None, str]:
    return PriceTable().model_price(model, provider)


def _genai_price(call: LLMCall, usage: Usage) -> tuple[float | None, str | None]:
    add = (
        f"add it to a textsim_prices file: [models.{json.dumps(call.model or 'MODEL')}] "
        "input = ..., output = ... (USD per million tokens)"
    )
    try:
        import genai_prices
    except ImportError:
        return None, (
            f"no price for model {call.model!r}: install pytest-textsim[prices] "
            f"(genai-prices, Python 3.11+) for providers' prices, or {add}"
        )
    try:
        result = genai_prices.calc_price(
            genai_prices.Usage(
                input_tokens=usage.input,
                output_tokens=usage.output,
                cache_read_tokens=usage.cached,
                cache_write_tokens=usage.cache_write,
            ),
            model_ref=call.model or "",
            provider_id=_GENAI_PROVIDER.get(call.provider, "openai"),
        )
    except (LookupError, ValueError) as exc:
        return None, f"no price for model {call.model!r} ({exc}); {add}"
    return float(result.total_price), None
