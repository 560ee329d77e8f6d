"""Deterministic checks as scores: edit distance, exact match, contains, regex, JSON.

They need no network and no judge, and they score like every other
evaluator: construct with options and a threshold, call with keywords, get a
dict with ``<name>``, ``<name>_result`` and ``<name>_threshold`` (plus
``<name>_reason`` where a bare 0 would not say what was wrong). Scores are
floats in 0..1 and pass when they are ``>=`` the threshold, so a gate or a
baseline treats them like BLEU or F1.

>>> ExactMatchEvaluator(case_sensitive=False)(response="Paris", ground_truth="paris")
{'exact_match': 1.0, 'exact_match_result': 'pass', 'exact_match_threshold': 1.0}
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

# Not re: regex's matches take a time limit, and patterns may come from data.
import regex

from ..errors import TextsimError
from ..evaluator import _MISSING, Evaluator, check_threshold, result
from ..jsonl import decode_error
from .patterns import MAX_REPETITION, repetition


def _flag(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False``; ``"no"`` would otherwise count as true."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def _unit_threshold(value: object, owner: str, label: str) -> float:
    __tracebackhide__ = True  # the caller's argument is wrong, not this code
    return float(check_threshold(value, f"{owner}(threshold=...)", label=label))


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace as one space, none at either end."""
    return " ".join(text.split())


def _drop_punctuation(text: str) -> str:
    # Unicode punctuation (category P*), not only ASCII: a curly quote or a
    # Chinese full stop is punctuation too.
    return "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))


class _CheckEvaluator(Evaluator):
    """Base: one score under ``_key`` with ``_result``, ``_threshold`` (and maybe ``_reason``)."""

    _key = ""

    def __init__(self, *, threshold: float = 1.0) -> None:
        self._threshold = _unit_threshold(threshold, type(self).__name__, self._key)

    @property
    def threshold(self) -> float:
        """The score at or above which the result is ``"pass"``."""
        return self._threshold

    @property
    def params(self) -> dict[str, Any]:
        """The options that change the score (recorded beside each score)."""
        return {}

    def _output(self, score: float, reason: str | None = None) -> dict[str, Any]:
        key = self._key
        out: dict[str, Any] = {
            key: score,
            f"{key}_result": result(score >= self._threshold),
            f"{key}_threshold": self._threshold,
        }
        if reason is not None:
            out[f"{key}_reason"] = reason
        return out

    def __repr__(self) -> str:
        args = [f"{k}={v!r}" for k, v in self.params.items()]
        return f"{type(self).__name__}({', '.join([*args, f'threshold={self._threshold!r}'])})"


class _PairCheck(_CheckEvaluator):
    """A check of ``response`` against ``ground_truth``."""

    inputs = ("response", "ground_truth")
    #: ``ground_truth`` may be a list of references (the best of them counts).
    reference_lists = True

    def _score_texts(self, texts: dict[str, Any]) -> dict[str, Any]:
        response, truth = texts["response"], texts["ground_truth"]
        if isinstance(truth, str):
            return self._output(self._score(response, truth))
        return self._output(max(self._score(response, ref) for ref in truth))

    def _score(self, response: str, ground_truth: str) -> float:
        raise NotImplementedError


class _ResponseCheck(_CheckEvaluator):
    """A check of ``response`` alone."""

    inputs = ("response",)

    def _score_texts(self, texts: dict[str, Any]) -> dict[str, Any]:
        return self._response(texts["response"])

    def _response(self, response: str) -> dict[str, Any]:
        raise NotImplementedError


class LevenshteinEvaluator(_PairCheck):
    """Character edit similarity ``1 - distance / max(len)`` (rapidfuzz); 1.0 for equal texts.

    >>> LevenshteinEvaluator()(response="kitten", ground_truth="sitting")["levenshtein"]
    0.5714285714285714
    """

    _key = "levenshtein"

    def __init__(
        self,
        *,
        threshold: float = 0.8,
        case_sensitive: bool = True,
        normalize_whitespace: bool = False,
    ) -> None:
        super().__init__(threshold=threshold)
        self._case_sensitive = _flag("case_sensitive", case_sensitive)
        self._normalize_whitespace = _flag("normalize_whitespace", normalize_whitespace)
        from rapidfuzz.distance import Levenshtein

        self._similarity = Levenshtein.normalized_similarity

    @property
    def params(self) -> dict[str, Any]:
        return {
            "case_sensitive": self._case_sensitive,
            "normalize_whitespace": self._normalize_whitespace,
        }

    def _prepare(self, text: str) -> str:
        if self._normalize_whitespace:
            text = collapse_whitespace(text)
        return text if self._case_sensitive else text.casefold()

    def _score(self, response: str, ground_truth: str) -> float:
        return float(self._similarity(self._prepare(response), self._prepare(ground_truth)))


class ExactMatchEvaluator(_PairCheck):
    """1.0 when ``response`` equals ``ground_truth`` after the chosen normalisation, else 0.0.

    ``squad_normalize=True`` compares as F1 does (lower case, no punctuation or
    articles, single spaces), so ``"The Eiffel Tower."`` matches ``"eiffel tower"``.
    """

    _key = "exact_match"

    def __init__(
        self,
        *,
        threshold: float = 1.0,
        case_sensitive: bool = True,
        normalize_whitespace: bool = False,
        ignore_punctuation: bool = False,
        squad_normalize: bool = False,
    ) -> None:
        super().__init__(threshold=threshold)
        self._case_sensitive = _flag("case_sensitive", case_sensitive)
        self._normalize_whitespace = _flag("normalize_whitespace", normalize_whitespace)
        self._ignore_punctuation = _flag("ignore_punctuation", ignore_punctuation)
        self._squad_normalize = _flag("squad_normalize", squad_normalize)

    @property
    def params(self) -> dict[str, Any]:
        return {
            "case_sensitive": self._case_sensitive,
            "normalize_whitespace": self._normalize_whitespace,
            "ignore_punctuation": self._ignore_punctuation,
            "squad_normalize": self._squad_normalize,
        }

    def _prepare(self, text: str) -> str:
        if self._squad_normalize:
            from .tokenize import squad_tokens

            text = " ".join(squad_tokens(text))
        if self._ignore_punctuation:
            text = _drop_punctuation(text)
        if self._normalize_whitespace:
            text = collapse_whitespace(text)
        return text if self._case_sensitive else text.casefold()

    def _score(self, response: str, ground_truth: str) -> float:
        return 1.0 if self._prepare(response) == self._prepare(ground_truth) else 0.0


_MODES = ("all", "any")


def as_string_list(value: object, name: str = "strings") -> tuple[str, ...]:
    """``value`` as a non-empty tuple of non-empty strings, or ``ValueError`` naming ``name``.

    A comma-separated string (``"refund,apolog"``) is split, as ``textsim
    score --option contains.strings=a,b`` and ini values give it.
    """
    if isinstance(value, str):
        items: Sequence[object] = value.split(",") if value else []
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        raise ValueError(f"{name} must be a list of strings, got {type(value).__name__}")
    if not items:
        raise ValueError(f"{name} is empty: give at least one string to look for")
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise ValueError(f"{name}[{index}] must be a string, got {type(item).__name__}")
        if not item:
            # "" is in every text: the check would always pass.
            raise ValueError(f"{name}[{index}] is an empty string, which every response contains")
    return tuple(items)  # type: ignore[arg-type]


class ContainsEvaluator(_ResponseCheck):
    """Which of ``strings`` occur in ``response``.

    ``mode="all"``: the share found (threshold 1.0: all must be there);
    ``mode="any"``: 1.0 when at least one is found. The reason names the
    strings that are missing.

    >>> ContainsEvaluator(strings=["refund", "apolog"], case_sensitive=False)(
    ...     response="We apologise and will refund you.")["contains"]
    1.0
    """

    _key = "contains"

    def __init__(
        self,
        *,
        strings: Sequence[str] = _MISSING,
        mode: str = "all",
        case_sensitive: bool = True,
        threshold: float = 1.0,
    ) -> None:
        super().__init__(threshold=threshold)
        if strings is _MISSING:
            raise TypeError("ContainsEvaluator() missing required keyword argument: 'strings'")
        self._strings = as_string_list(strings)
        if mode not in _MODES:
            raise ValueError(f"mode must be 'all' or 'any', got {mode!r}")
        self._mode = mode
        self._case_sensitive = _flag("case_sensitive", case_sensitive)
        self._needles = (
            self._strings if self._case_sensitive else tuple(s.casefold() for s in self._strings)
        )

    @property
    def params(self) -> dict[str, Any]:
        return {
            "strings": list(self._strings),
            "mode": self._mode,
            "case_sensitive": self._case_sensitive,
        }

    def _response(self, response: str) -> dict[str, Any]:
        haystack = response if self._case_sensitive else response.casefold()
        missing = [s for s, n in zip(self._strings, self._needles) if n not in haystack]
        found = len(self._strings) - len(missing)
        if self._mode == "all":
            score = found / len(self._strings)
        else:
            score = 1.0 if found else 0.0
        if not missing:
            reason = "all found"
        elif found:
            reason = "missing: " + ", ".join(repr(s) for s in missing)
        else:
            reason = "none found: " + ", ".join(repr(s) for s in missing)
        return self._output(float(score), reason)


MATCH_TIMEOUT = 1.0
"""Seconds one ``regex`` match may take before it is a :class:`PatternTimeout`."""


class PatternTimeout(TextsimError, ValueError):
    """A ``regex`` pattern took longer than :data:`MATCH_TIMEOUT` to match a text.

    Nested repetition such as ``(a|aa)+$`` backtracks in time exponential in the
    text's length; patterns can come from data (``textsim score --map
    regex.pattern=COLUMN``), so every match is bounded.
    """


def _shown(pattern: str, limit: int = 80) -> str:
    return repr(pattern if len(pattern) <= limit else pattern[:limit] + "...")


class RegexEvaluator(_ResponseCheck):
    """1.0 when ``pattern`` matches ``response`` (anywhere; the whole text with ``fullmatch=True``).

    >>> RegexEvaluator(pattern=r"order #\\d+")(response="Your order #123 ships today.")["regex"]
    1.0
    """

    _key = "regex"

    def __init__(
        self,
        *,
        pattern: str = _MISSING,
        fullmatch: bool = False,
        case_sensitive: bool = True,
        threshold: float = 1.0,
    ) -> None:
        super().__init__(threshold=threshold)
        if pattern is _MISSING:
            raise TypeError("RegexEvaluator() missing required keyword argument: 'pattern'")
        if not isinstance(pattern, str):
            raise ValueError(f"pattern must be a string, got {type(pattern).__name__}")
        self._fullmatch = _flag("fullmatch", fullmatch)
        self._case_sensitive = _flag("case_sensitive", case_sensitive)
        if repetition(pattern) > MAX_REPETITION:
            raise ValueError(
                f"regex pattern {_shown(pattern)} repeats more than {MAX_REPETITION:,} times "
                "in all (the numbers in its {n}, {n,} and {n,m} repeats, nested ones "
                "multiplied: the limit of one pattern), and compiling it would take time and "
                "memory in proportion; use * or + for a long repetition"
            )
        try:
            compiled = regex.compile(pattern, 0 if self._case_sensitive else regex.IGNORECASE)
        except regex.error as exc:
            raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
        self._pattern = pattern
        self._match = compiled.fullmatch if self._fullmatch else compiled.search

    @property
    def params(self) -> dict[str, Any]:
        return {
            "pattern": self._pattern,
            "fullmatch": self._fullmatch,
            "case_sensitive": self._case_sensitive,
        }

    def _response(self, response: str) -> dict[str, Any]:
        try:
            found = self._match(response, timeout=MATCH_TIMEOUT)
        except TimeoutError:
            raise PatternTimeout(
                f"regex pattern {_shown(self._pattern)} took more than {MATCH_TIMEOUT:g}s "
                f"to match a text of {len(response)} characters (the time limit of one "
                "match): nested repetition such as (a|aa)+ backtracks in time exponential "
                "in the text's length; rewrite the pattern without it"
            ) from None
        return self._output(1.0 if found is not None else 0.0)


def first_fenced_block(text: str) -> str | None:
    """The content of the first fenced code block (```` ``` ```` or ``~~~``), or ``None``.

    CommonMark's rules in short: an opening fence is 3+ backticks or tildes
    indented at most 3 spaces, optionally followed by an info string
    (``json``); the block ends at a line of at least as many of the same
    character, or at the end of the text. Each line is looked at once, so the
    time is linear in the text's length, whatever it holds.
    """
    fence_char, fence_len, start = "", 0, -1
    position, length = 0, len(text)
    while position <= length:
        end = text.find("\n", position)
        if end < 0:
            end = length
        line = text[position:end].rstrip("\r")
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) <= 3:
            if not fence_char and stripped[:3] in ("```", "~~~"):
                char = stripped[0]
                run = len(stripped) - len(stripped.lstrip(char))
                # A backtick fence's info string may not hold backticks.
                if char == "~" or "`" not in stripped[run:]:
                    fence_char, fence_len, start = char, run, end + 1
            elif fence_char and stripped.startswith(fence_char * fence_len):
                if not stripped.lstrip(fence_char).strip():
                    return text[start:position].rstrip("\r\n") if start < position else ""
        position = end + 1
    if fence_char:  # never closed: the block runs to the end
        return text[start:] if start < length else ""
    return None


class _NotJson(TextsimError, ValueError):
    pass


def _refuse_constant(name: str) -> NoReturn:
    # Python's json reads NaN and Infinity; JSON (RFC 8259) has neither.
    raise _NotJson(f"{name} is not JSON")


def parse_json(text: str) -> tuple[Any, str]:
    """``(value, "")`` when ``text`` is JSON, else ``(None, why)`` with line and column."""
    try:
        return json.loads(text, parse_constant=_refuse_constant), ""
    except json.JSONDecodeError as exc:
        return None, f"not JSON: {decode_error(exc, line=True)}"
    except _NotJson as exc:
        return None, f"not JSON: {exc}"
    except RecursionError:
        return None, "not JSON: nested too deeply to parse"


class _JsonCheck(_ResponseCheck):
    def __init__(self, *, extract: bool = False, threshold: float = 1.0) -> None:
        super().__init__(threshold=threshold)
        self._extract = _flag("extract", extract)

    def _load(self, response: str) -> tuple[Any, str]:
        text = response
        if self._extract:
            block = first_fenced_block(response)
            if block is not None:
                text = block
        return parse_json(text)


class JsonValidEvaluator(_JsonCheck):
    """1.0 when ``response`` is JSON (with ``extract=True``, the first fenced block if any).

    >>> JsonValidEvaluator()(response='{"a": 1}')
    {'json_valid': 1.0, 'json_valid_result': 'pass', 'json_valid_threshold': 1.0, \
'json_valid_reason': 'valid JSON'}
    """

    _key = "json_valid"

    @property
    def params(self) -> dict[str, Any]:
        return {"extract": self._extract}

    def _response(self, response: str) -> dict[str, Any]:
        _, problem = self._load(response)
        return self._output(0.0 if problem else 1.0, problem or "valid JSON")


class _NoRemoteRef(TextsimError):
    pass


def _schema_validator(schema: object) -> Any:
    """A validator for ``schema`` that resolves only local ``$ref``\\ s.

    Draft 2020-12 unless ``$schema`` names another draft. An invalid schema is
    a ``ValueError`` naming the problem and where it is in the schema.
    """
    import jsonschema
    from jsonschema.exceptions import SchemaError

    if isinstance(schema, bool):
        pass  # true/false are valid schemas
    elif not isinstance(schema, Mapping):
        raise ValueError(f"schema must be a JSON object (a dict), got {type(schema).__name__}")
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)  # type: ignore[arg-type]
    except SchemaError as exc:
        where = exc.json_path if hasattr(exc, "json_path") else "$"
        raise ValueError(f"invalid JSON Schema at {where}: {exc.message}") from None
    from referencing import Registry

    def refuse(uri: str) -> NoReturn:
        # Fetching a URL named by a schema is a network call from a test run
        # (and a way to leak where it runs): only references inside the schema resolve.
        raise _NoRemoteRef(f"remote $ref {uri!r} is not fetched; put that schema in $defs")

    return cls(schema, registry=Registry(retrieve=refuse))  # type: ignore[call-arg]


class JsonSchemaEvaluator(_JsonCheck):
    """1.0 when ``response`` is JSON that validates against ``schema`` (``jsonschema``).

    The reason names the most relevant error (``jsonschema.exceptions.best_match``)
    and where it is: ``$.items[2].price: 'abc' is not of type 'number'``.

    >>> schema = {"type": "object", "required": ["name"]}
    >>> JsonSchemaEvaluator(schema=schema)(response='{"age": 3}')["json_schema_reason"]
    "$: 'name' is a required property"
    """

    _key = "json_schema"

    def __init__(
        self, *, schema: Any = _MISSING, extract: bool = False, threshold: float = 1.0
    ) -> None:
        super().__init__(extract=extract, threshold=threshold)
        if schema is _MISSING:
            raise TypeError("JsonSchemaEvaluator() missing required keyword argument: 'schema'")
        if isinstance(schema, str):
            schema, problem = parse_json(schema)
            if problem:
                raise ValueError(f"schema: {problem}")
        self._schema = schema
        self._validator = _schema_validator(schema)

    @property
    def params(self) -> dict[str, Any]:
        return {"schema": self._schema, "extract": self._extract}

    def _response(self, response: str) -> dict[str, Any]:
        from jsonschema.exceptions import best_match
        from referencing.exceptions import Unresolvable

        value, problem = self._load(response)
        if problem:
            return self._output(0.0, problem)
        try:
            if self._validator.is_valid(value):  # the quick path: no error objects made
                return self._output(1.0, "valid")
            error = best_match(self._validator.iter_errors(value))
        except (Unresolvable, _NoRemoteRef) as exc:
            cause: BaseException | None = exc
            while cause is not None and not isinstance(cause, _NoRemoteRef):
                cause = cause.__cause__ or cause.__context__
            raise ValueError(f"schema: {cause or exc}") from None
        if error is None:
            return self._output(1.0, "valid")
        return self._output(0.0, f"{error.json_path}: {error.message}")

