"""The options of sacreBLEU's metrics, checked before sacreBLEU sees them.

sacreBLEU asserts on a bad option (``assert self.smooth_method in ...``) or
fails deep inside a tokenizer; these checks name the option, what it takes and
the value given. The sentence evaluators (:mod:`.sacre`) and the corpus scores
take the same options and share these checks.

This module imports nothing heavy: the catalog's converters read its lists.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from ..evaluator import check_flag as _flag
from ..settings.converters import as_bool, as_float, as_int

#: sacreBLEU's BLEU tokenizers that run on sacreBLEU alone. Its ``ja-mecab`` and
#: ``ko-mecab`` need MeCab and its dictionaries, ``spm``, ``flores101``,
#: ``flores200`` and ``spBLEU-1K`` a SentencePiece model downloaded on first use.
BLEU_TOKENIZERS = ("13a", "none", "intl", "char", "zh")
#: sacreBLEU's ``BLEU.SMOOTH_DEFAULTS``: the smoothing methods and their default values.
SMOOTH_METHODS: Mapping[str, float | None] = MappingProxyType(
    {"exp": None, "floor": 0.1, "add-k": 1, "none": None}
)


def _choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _whole(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return value


def bleu_options(
    *,
    tokenize: str = "13a",
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    lowercase: bool = False,
    effective_order: bool = False,
    max_ngram_order: int = 4,
) -> dict[str, Any]:
    """sacreBLEU ``BLEU(...)``'s keyword arguments, checked (``effective_order``
    defaults to ``BLEU``'s ``False``; ``sentence_bleu`` passes ``True``)."""
    _choice("tokenize", tokenize, BLEU_TOKENIZERS)
    _choice("smooth_method", smooth_method, tuple(SMOOTH_METHODS))
    if smooth_value is not None:
        if isinstance(smooth_value, bool) or not isinstance(smooth_value, (int, float)) or not (
            math.isfinite(smooth_value) and smooth_value >= 0
        ):
            raise ValueError(f"smooth_value must be a number >= 0, got {smooth_value!r}")
        if SMOOTH_METHODS[smooth_method] is None:
            raise ValueError(
                f"smooth_value={smooth_value!r} is used by smooth_method 'floor' or 'add-k' "
                f"only; smooth_method is {smooth_method!r}"
            )
    return {
        "tokenize": tokenize,
        "smooth_method": smooth_method,
        "smooth_value": smooth_value,
        "lowercase": _flag("lowercase", lowercase),
        "effective_order": _flag("effective_order", effective_order),
        "max_ngram_order": _whole("max_ngram_order", max_ngram_order, 1),
    }


def chrf_options(
    *,
    char_order: int = 6,
    word_order: int = 0,
    beta: int = 2,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
) -> dict[str, Any]:
    """sacreBLEU ``CHRF(...)``'s keyword arguments, checked. ``eps_smoothing`` is
    left out when ``False`` (its default), so the parameters recorded with a
    default chrF score stay what they were before the option existed."""
    for name, value in (("char_order", char_order), ("word_order", word_order), ("beta", beta)):
        _whole(name, value, 0)
    if char_order == 0 and word_order == 0:
        raise ValueError(
            "char_order and word_order are both 0: chrF would count no n-grams and score "
            "every pair 0.0, identical ones too; give char_order >= 1 (default 6)"
        )
    options: dict[str, Any] = {
        "char_order": char_order,
        "word_order": word_order,
        "beta": beta,
        "lowercase": _flag("lowercase", lowercase),
        "whitespace": _flag("whitespace", whitespace),
    }
    if _flag("eps_smoothing", eps_smoothing):
        options["eps_smoothing"] = True
    return options


def ter_options(
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> dict[str, Any]:
    """sacreBLEU ``TER(...)``'s keyword arguments, checked."""
    return {
        "normalized": _flag("normalized", normalized),
        "no_punct": _flag("no_punct", no_punct),
        "asian_support": _flag("asian_support", asian_support),
        "case_sensitive": _flag("case_sensitive", case_sensitive),
    }


_CORPUS: Mapping[str, Callable[..., dict[str, Any]]] = MappingProxyType({
    "corpus_bleu": bleu_options, "corpus_chrf": chrf_options, "corpus_ter": ter_options,
})  # fmt: skip


def corpus_options(name: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The checked options of corpus metric ``name`` (``corpus_bleu`` takes
    :func:`bleu_options`', ``corpus_chrf`` :func:`chrf_options`', ``corpus_ter``
    :func:`ter_options`'); ``ValueError`` names an option the metric lacks."""
    check = _CORPUS[name]
    given = dict(options or {})
    known: dict[str, Any] = getattr(check, "__kwdefaults__", None) or {}
    unknown = [key for key in given if key not in known]
    if unknown:
        raise ValueError(
            f"{name} has no option {unknown[0]!r} (valid: {', '.join(known)})"
        )
    return check(**given)


def corpus_option_names(name: str) -> tuple[str, ...]:
    """The options corpus metric ``name`` takes (``corpus_bleu``: ``tokenize``, ...)."""
    return tuple(getattr(_CORPUS[name], "__kwdefaults__", None) or {})


def parse_corpus_options(name: str, pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Options of corpus metric ``name`` given as text (a gate's ``[tokenize=intl]``),
    converted to their types and checked; ``ValueError`` says which and why."""
    defaults: dict[str, Any] = getattr(_CORPUS[name], "__kwdefaults__", None) or {}
    given: dict[str, Any] = {}
    for key, text in pairs:
        if key not in defaults:
            raise ValueError(f"{name} has no option {key!r} (valid: {', '.join(defaults)})")
        default = defaults[key]
        try:
            if isinstance(default, bool):
                given[key] = as_bool(text)
            elif isinstance(default, int):
                given[key] = as_int(text)
            elif default is None:  # smooth_value: a number
                given[key] = as_float(text)
            else:
                given[key] = text
        except ValueError as exc:
            raise ValueError(f"option {key!r}: {exc}") from None
    return corpus_options(name, given)


def corpus_spec(name: str, pairs: Iterable[tuple[str, str]]) -> str:
    """``name`` with its options as a gate writes them: ``corpus_bleu[tokenize=intl]``
    (keys sorted), or ``name`` alone without options. Corpus scores, their
    statistics and baselines are kept under it, one configuration apart from another."""
    given = sorted(pairs)
    return f"{name}[{','.join(f'{k}={v}' for k, v in given)}]" if given else name


def split_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """The corpus metric and its checked options of a :func:`corpus_spec`."""
    name, bracket, rest = spec.partition("[")
    if not bracket:
        return name, {}
    pairs = [tuple(part.split("=", 1)) for part in rest.rstrip("]").split(",") if part]
    return name, parse_corpus_options(name, pairs)  # type: ignore[arg-type]
