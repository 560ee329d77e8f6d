"""The base every evaluator shares: keyword-only texts, checked, then scored.

:class:`Evaluator` is the one ``__call__`` of the algorithmic metrics
(:mod:`pytest_textsim.nlp`), the deterministic checks and the judge's
evaluators (:mod:`pytest_textsim.judge`): a subclass names the texts it takes
and scores them. The rest is the plumbing around it that the batch paths and
the plugin share: input and threshold validation and the wording of a bad call.
It sits in the core, below the engines and the judge, so both stand on it.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import math
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any, ClassVar, NoReturn

from .conversation.messages import conversation_problem, parse_conversation
from .formatting import with_hint
from .jsonl import surrogate_problem
from .runtime.steps import Steps, driven, returned

# The one threshold check, shared with the plugin's fixtures, helpers and markers.
from .settings.converters import SACRE_SCALE_NOTE as SACRE_SCALE_NOTE
from .settings.converters import check_threshold as check_threshold
from .traces.trajectory import trajectory_problem

# The default of a required keyword that was not given (None may be a value).
_MISSING: Any = object()

#: The reason recorded with the score of an empty (or whitespace) response.
EMPTY_RESPONSE = "the response is empty"


#: The texts of the whole case being scored (``response``, ``ground_truth``,
#: ``context``, ``query``, as given), where a caller scores a case with whichever
#: metrics it names: a case dict of ``.each``, ``assert_scores``, a row of
#: ``textsim score``. Metrics of one case may read it to ask a judgment they share
#: in one form (:mod:`pytest_textsim.judge.rag`); a score never depends on it.
CASE_TEXTS: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "textsim_case_texts", default=None
)
#: The texts a case may share, in their order.
CASE_TEXT_NAMES = ("response", "ground_truth", "context", "query")


def case_texts(row: Mapping[str, Any]) -> dict[str, Any]:
    """The texts of ``row`` a case shares (see :data:`CASE_TEXTS`)."""
    return {name: row[name] for name in CASE_TEXT_NAMES if row.get(name) is not None}


@contextlib.contextmanager
def scoring_case(row: Mapping[str, Any]) -> Iterator[None]:
    """Score the metrics of one case, whose texts are ``row``'s (:data:`CASE_TEXTS`)."""
    token = CASE_TEXTS.set(case_texts(row))
    try:
        yield
    finally:
        CASE_TEXTS.reset(token)


def is_blank(text: object) -> bool:
    """Whether ``text`` is a string that is empty or only whitespace."""
    return isinstance(text, str) and not text.strip()


def call_keywords(evaluator: object) -> tuple[list[str], list[str]]:
    """The required and the optional keywords of ``evaluator``'s ``__call__``."""
    params = inspect.signature(evaluator).parameters.values()  # type: ignore[arg-type]
    keywords = [p for p in params if p.kind is p.KEYWORD_ONLY]
    return (
        [p.name for p in keywords if p.default is p.empty],
        [p.name for p in keywords if p.default is not p.empty],
    )


def called_as(evaluator: object) -> str:
    """How ``evaluator`` is called: ``evaluator(response=..., ground_truth=...)``."""
    required, optional = call_keywords(evaluator)
    shape = f"evaluator({', '.join(f'{name}=...' for name in required)})"
    if optional:
        shape += ", optionally " + ", ".join(f"{name}=..." for name in optional)
    return shape


def bad_call(
    evaluator: object, args: tuple[object, ...], unknown: Mapping[str, object]
) -> TypeError:
    """The error for positional arguments or unknown keywords, in the evaluator's own words.

    Raised only after the call has failed, so none of this work is on the
    path of a good call.
    """
    name = type(evaluator).__name__
    shape = called_as(evaluator)
    if args:
        count = f"{len(args)} positional argument{'s' if len(args) != 1 else ''}"
        return TypeError(f"{name} is called with keywords: {shape}; got {count}")
    required, optional = call_keywords(evaluator)
    named = [with_hint(keyword, required + optional) for keyword in unknown]
    noun = "an unexpected keyword argument" if len(named) == 1 else "unexpected keyword arguments"
    return TypeError(f"{name} got {noun} {', '.join(named)}; it is called with keywords: {shape}")


def call_problems(evaluator: object, kwargs: Mapping[str, object]) -> list[str]:
    """What is wrong with calling ``evaluator(**kwargs)``, without calling it.

    The same checks, in the same words, as the call itself makes: lets a
    batch report every bad row before any row costs a judge call.
    """
    required, optional = call_keywords(evaluator)
    problems = []
    for keyword in kwargs:
        if keyword not in required and keyword not in optional:
            problems.append(
                f"unexpected keyword argument {with_hint(keyword, required + optional)}"
            )
    if kwargs.get("conversation") is not None and "conversation" in optional:
        # A single-answer metric given a conversation takes its texts from the turns.
        problem = conversation_problem("conversation", kwargs["conversation"])
        return problems + ([problem] if problem else [])
    for keyword in required + optional:
        value = kwargs.get(keyword, _MISSING)
        if keyword in optional and (value is _MISSING or value is None):
            continue
        # An evaluator with reference_lists = True takes a list of references too.
        if keyword == "ground_truth" and getattr(evaluator, "reference_lists", False):
            problem = references_problem(keyword, value)
        elif keyword == "context":
            problem = chunks_problem(keyword, value)
        elif keyword == "conversation":
            problem = conversation_problem(keyword, value)
        elif keyword == "trace":
            problem = trajectory_problem(keyword, value)
        else:
            problem = text_problem(keyword, value)
        if problem:
            problems.append(problem)
    return problems


def check_number(name: str, value: object) -> float:
    """Return ``value`` if it is a finite real number (not a bool), else ``ValueError``.

    For numeric options such as METEOR's ``alpha``; thresholds go through
    :func:`check_threshold`, which also checks the metric's range.
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    number = value if isinstance(value, int) else float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return number


def check_flag(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False``, else a ``ValueError`` naming ``name``.

    ``bool("no")`` is ``True``: accepting any value would make ``lowercase="no"``
    lowercase here while a marker's ``"no"`` means no. Markers and helper options
    convert their text (yes/no, true/false) before it reaches the evaluators.
    """
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def check_weights(value: object, name: str = "weights") -> tuple[float, ...]:
    """N-gram weights (BLEU's): a non-empty sequence of finite numbers, as a tuple."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a sequence of numbers such as (0.5, 0.5), got {value!r}")
    weights = tuple(check_number(name, w) for w in value)
    if not weights:
        raise ValueError(f"{name} must name at least one n-gram order, got {value!r}")
    return weights


def plain(text: str) -> str:
    """``text`` as a plain ``str``: the one rule for every text input.

    A ``str`` subclass (numpy's ``str_``, an element of an array of texts; an
    ``enum.StrEnum`` member) is text, and is scored as the same characters in a
    plain ``str``, whatever the subclass's ``__str__`` or other methods do: code
    that tells one reference from a list of them by ``type(x) is str``, and
    libraries that check the type, see the same text.
    """
    return text if type(text) is str else str.__str__(text)


def plain_texts(value: Any) -> Any:
    """``value`` with each text in it plain (:func:`plain`): a string, or a list or
    tuple of strings (references), as a list; anything else unchanged, for the
    caller's own check to name it."""
    if isinstance(value, str):
        return plain(value)
    if isinstance(value, (list, tuple)):
        return [plain(item) if isinstance(item, str) else item for item in value]
    return value


def text_problem(name: str, value: object) -> str:
    """Why ``value`` is not a usable text for the keyword ``name`` ("" when it is)."""
    if isinstance(value, str):
        problem = surrogate_problem(value)
        return f"'{name}' has {problem}" if problem else ""
    if value is _MISSING:
        return f"missing required keyword argument: '{name}'"
    return f"'{name}' must be str, got {type(value).__name__}" + (
        " (decode bytes first)" if isinstance(value, (bytes, bytearray)) else ""
    )


def check_text(evaluator: str, name: str, value: object) -> str:
    """Return ``value`` if it is Unicode text, as a plain ``str`` (:func:`plain`);
    ``TypeError`` for another type, ``ValueError`` (naming the position) for a
    lone surrogate."""
    if isinstance(value, str):
        value = plain(value)
        if value.isascii():
            return value
        problem = surrogate_problem(value)
        if problem:
            raise ValueError(f"{evaluator}(): '{name}' has {problem}")
        return value
    # "Name() missing required keyword argument", as Python words it; "Name(): 'x' must be".
    raise TypeError(f"{evaluator}(){' ' if value is _MISSING else ': '}{text_problem(name, value)}")


def references_problem(name: str, value: object) -> str:
    """Why ``value`` is not one reference or a non-empty list of them ("" when it is)."""
    if not isinstance(value, (list, tuple)):
        return text_problem(name, value)
    if not value:
        return f"'{name}' is an empty list: give at least one reference"
    for index, item in enumerate(value):
        if not isinstance(item, str):
            return f"{name}[{index}]: expected a string, got {item!r}"
        problem = surrogate_problem(item)
        if problem:
            return f"{name}[{index}] has {problem}"
    return ""


def as_references(value: str | Sequence[str]) -> str | tuple[str, ...]:
    """A ground truth already checked (:func:`references_problem`) as a
    :class:`~.tokenize.TextPair` takes it: a plain string (:func:`plain`), or a
    tuple of two or more."""
    if isinstance(value, str):
        return plain(value)
    return plain(value[0]) if len(value) == 1 else tuple(plain(one) for one in value)


def check_references(evaluator: str, name: str, value: object) -> str | tuple[str, ...]:
    """``value`` as one reference (a string) or a tuple of two or more.

    A list or tuple of one reference is that string: nltk, rouge-score and
    sacreBLEU score one reference in a list as they score it alone. An empty
    list, or an element that is not a string, is an error naming the argument
    and the position: ``ground_truth[2]: expected a string, got 3``.
    """
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        return check_text(evaluator, name, value)
    problem = references_problem(name, value)
    if problem:
        bad_type = problem.startswith(f"{name}[") and "expected a string" in problem
        raise (TypeError if bad_type else ValueError)(f"{evaluator}(): {problem}")
    return as_references(value)


def check_max_chars(max_chars: object, default: int) -> int:
    """``max_chars`` of an evaluator (``None``: ``default``), a whole number >= 1."""
    if max_chars is None:
        return default
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise ValueError(f"max_chars must be a whole number >= 1, got {max_chars!r}")
    return max_chars


def check_size(
    evaluator: str, key: str, texts: Mapping[str, str], max_chars: int, cost: str
) -> None:
    """Refuse a text over ``max_chars`` characters, naming it, the limit, why (``cost``)
    and how to raise it: a hostile or runaway response must not stall a run."""
    for name, text in texts.items():
        if len(text) > max_chars:
            raise ValueError(
                f"{evaluator}(): {name} is {len(text):,} characters, over the limit of "
                f"{max_chars:,} ({cost}); raise max_chars to score it anyway: max_chars= on "
                f"the class, fixture, helper or marker, or --option {key}.max_chars=N for "
                "textsim score"
            )


@dataclass(frozen=True)
class Chunk:
    """One retrieved chunk of a ``context``: its text, and the ``id`` and ``source``
    the retriever gave it (``None`` when it gave none)."""

    text: str
    id: str | None = None
    source: str | None = None

    @property
    def label(self) -> str:
        """``id`` and ``source`` as one line (``"doc-7 · kb/returns.md"``), or ``""``."""
        return " · ".join(part for part in (self.id, self.source) if part)

    def as_dict(self) -> dict[str, str]:
        """The chunk as the JSON report keeps it: ``text``, with ``id``/``source`` when given."""
        out = {"text": self.text}
        out.update({k: v for k, v in (("id", self.id), ("source", self.source)) if v})
        return out


def _chunk(name: str, index: int, item: object) -> Chunk | str:
    """``item`` (the ``index``-th of a context list) as a :class:`Chunk`, or why not."""
    where = f"{name}[{index}]"
    if isinstance(item, str):
        text: object = item
        ident: object = None
        source: object = None
    elif isinstance(item, Mapping):
        if "text" not in item:
            keys = ", ".join(repr(k) for k in list(item)[:5]) or "none"
            return f"{where}: a chunk dict needs a 'text' key (its keys: {keys})"
        text, ident, source = item["text"], item.get("id"), item.get("source")
    else:
        return (
            f"{where}: expected a string or a dict with 'text' (and optional 'id', "
            f"'source'), got {type(item).__name__}"
        )
    if not isinstance(text, str):
        return f"{where}: the chunk's text must be a string, got {type(text).__name__}"
    problem = surrogate_problem(text)
    if problem:
        return f"{where} has {problem}"
    if not text.strip():
        return f"{where}: the chunk's text is empty"
    for key, value in (("id", ident), ("source", source)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int))):
            return f"{where}: the chunk's {key!r} must be a string, got {type(value).__name__}"
    return Chunk(
        plain(text),
        None if ident is None else str(ident),
        None if source is None else plain(str(source)),
    )


def chunks_problem(name: str, value: object) -> str:
    """Why ``value`` is not a context (a string, or a non-empty list of chunks:
    strings, or dicts with ``text`` and optional ``id``/``source``); "" when it is."""
    if not isinstance(value, (list, tuple)):
        return text_problem(name, value)
    if not value:
        return f"'{name}' is an empty list: give at least one chunk"
    for index, item in enumerate(value):
        found = _chunk(name, index, item)
        if isinstance(found, str):
            return found
    return ""


def as_chunks(name: str, value: object) -> tuple[Chunk, ...]:
    """A context as its chunks in retrieval order (one string is one chunk).

    ``TypeError`` or ``ValueError`` naming ``name`` and the position of a bad
    chunk: ``context[2]: a chunk dict needs a 'text' key``.
    """
    if isinstance(value, str):
        return (Chunk(plain(value)),)
    problem = chunks_problem(name, value)
    if problem:
        kind = ValueError if "empty" in problem or " has " in problem else TypeError
        raise kind(problem)
    items: Sequence[object] = value  # type: ignore[assignment]  # a list, checked above
    chunks = (_chunk(name, i, item) for i, item in enumerate(items))
    return tuple(one for one in chunks if isinstance(one, Chunk))


def joined_context(chunks: Sequence[Chunk]) -> str:
    """Chunks as the one context text of a metric that reads one (groundedness, a rubric):
    each numbered in retrieval order, ``[1]``, its id and source beside the number, and
    a blank line between chunks::

        [1] doc-7 · kb/returns.md
        Refunds are accepted within 30 days.

        [2]
        Shipping takes 5 days.
    """
    return "\n\n".join(
        f"[{k}]{' ' + c.label if c.label else ''}\n{c.text}" for k, c in enumerate(chunks, 1)
    )


def check_context(evaluator: str, name: str, value: object, *, keep: bool) -> Any:
    """A context argument, checked: a string stays one; a list of chunks is
    :func:`as_chunks` (``keep``) or :func:`joined_context` (a metric that reads one text)."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        text = check_text(evaluator, name, value)
        return (Chunk(text),) if keep else text
    try:
        chunks = as_chunks(name, value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{evaluator}(): {exc}") from None
    return chunks if keep else joined_context(chunks)


def check_conversation(evaluator: str, name: str, value: object) -> Any:
    """A conversation argument, parsed (:func:`~.conversation.messages.parse_conversation`);
    its errors name ``evaluator`` and the message: ``Name(): conversation[2]: ...``."""
    if value is _MISSING:
        raise TypeError(f"{evaluator}() missing required keyword argument: {name!r}")
    try:
        return parse_conversation(value, name)
    except (TypeError, ValueError) as exc:
        raise (TypeError if isinstance(exc, TypeError) else ValueError)(
            f"{evaluator}(): {exc}"
        ) from None


def result(passed: bool) -> str:
    return "pass" if passed else "fail"


_KEYWORDS = inspect.Parameter.KEYWORD_ONLY


class Evaluator:
    """Base of every evaluator: texts passed as keywords, checked, then scored.

    Evaluators take their texts as keywords only, like azure-ai-evaluation's.
    A subclass names them in ``inputs`` (required) and ``optional_inputs``
    (``None`` or left out) and implements :meth:`_score_texts`, which gets
    every one of them, checked: a ``str`` without lone surrogates, or ``None``
    for an optional text not given. A positional argument or an unknown
    keyword is a ``TypeError`` naming the class and the keywords it takes
    (:func:`bad_call`), with a hint for a misspelt one.

    Each subclass gets its own ``__call__`` (the same code) with the public
    signature ``(*, response: str, ground_truth: str)`` that ``help()``,
    ``inspect.signature`` and :func:`~pytest_textsim.score_rows` see. A type
    checker flags a positional argument (``*args: NoReturn``), not a misspelt
    keyword.

    ``await evaluator.acall(...)`` is the awaitable form, with the same checks:
    a judge evaluator awaits its judge (many calls share one event loop), an
    algorithmic one scores at once (its work is CPU-bound).
    """

    inputs: ClassVar[tuple[str, ...]] = ()
    optional_inputs: ClassVar[tuple[str, ...]] = ()
    #: ``ground_truth`` may be a list of references: it reaches :meth:`_score_texts`
    #: as a string or a tuple of two or more (:func:`check_references`).
    reference_lists: ClassVar[bool] = False
    #: ``context`` reaches :meth:`_score_texts` as a tuple of :class:`Chunk` (the RAG
    #: metrics); otherwise a list of chunks is one text (:func:`joined_context`).
    context_chunks: ClassVar[bool] = False
    _accepted: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._accepted = frozenset(cls.inputs + cls.optional_inputs)
        for name in ("__call__", "acall"):
            if name in cls.__dict__:
                continue  # a call of its own (it may still use bad_call and check_text)
            base = getattr(Evaluator, name)
            call = types.FunctionType(
                base.__code__, base.__globals__, name, closure=base.__closure__
            )
            call.__qualname__ = f"{cls.__qualname__}.{name}"
            call.__doc__ = base.__doc__
            call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
                [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
                + [
                    inspect.Parameter(n, _KEYWORDS, annotation=cls._annotation(n))
                    for n in cls.inputs
                ]
                + [
                    inspect.Parameter(n, _KEYWORDS, default=None, annotation=(
                        f"{cls._annotation(n)} | None" if n == "conversation" else "str | None"
                    ))
                    for n in cls.optional_inputs
                ],
                return_annotation="dict[str, Any]",
            )
            setattr(cls, name, call)

    @classmethod
    def _annotation(cls, name: str) -> str:
        if name == "context":
            return "str | Sequence[str | Mapping[str, Any]]"
        if name == "conversation":
            return "Sequence[Mapping[str, Any]] | Mapping[str, Any]"
        if name == "trace":
            return "Trace | Sequence[Mapping[str, Any]]"
        lists = cls.reference_lists and name == "ground_truth"
        return "str | Sequence[str]" if lists else "str"

    def textsim_steps(self, *args: NoReturn, **texts: Any) -> Steps[dict[str, Any]]:
        """Score the texts given as keywords (see the class for which it takes), as
        a step generator (:mod:`pytest_textsim.runtime.steps`): ``evaluator(...)`` drives
        it blocking, ``await evaluator.acall(...)`` awaiting."""
        checked = self._checked(args, texts)
        empty = self._empty_response(checked)
        if empty:
            return empty
        return (yield from self._scoring(checked))

    __call__, acall = driven(textsim_steps, ("__call__", "acall"))

    def _checked(self, args: tuple[Any, ...], texts: dict[str, Any]) -> dict[str, Any]:
        """The texts of a call, checked (see the class)."""
        if args or not self._accepted.issuperset(texts):
            unknown = {k: v for k, v in texts.items() if k not in self._accepted}
            raise bad_call(self, args, unknown)
        name = type(self).__name__
        lists = self.reference_lists
        checked: dict[str, Any] = {}
        for key in self.inputs:
            value = texts.get(key, _MISSING)
            if lists and key == "ground_truth":
                checked[key] = check_references(name, key, value)
            elif key == "context" and value is not _MISSING:
                checked[key] = check_context(name, key, value, keep=self.context_chunks)
            elif key == "conversation":
                checked[key] = check_conversation(name, key, value)
            else:
                checked[key] = check_text(name, key, value)
        for key in self.optional_inputs:
            value = texts.get(key)
            if value is None:
                checked[key] = None
            elif key == "context":
                checked[key] = check_context(name, key, value, keep=self.context_chunks)
            else:
                checked[key] = check_text(name, key, value)
        return checked

    def _empty_response(self, texts: dict[str, Any]) -> dict[str, Any] | None:
        """The output for an empty response without scoring it, or ``None`` to score it.

        An evaluator that asks a model (the judge, embeddings) gives its lowest
        score with the reason :data:`EMPTY_RESPONSE` rather than pay for a call
        about nothing; the algorithmic ones score an empty text as it is.
        """
        return None

    def _score_texts(self, texts: dict[str, Any]) -> dict[str, Any]:
        """The output for ``texts``: each of ``inputs`` a ``str``, each optional one
        a ``str`` or ``None``."""
        raise NotImplementedError

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        """:meth:`_score_texts` as a step generator: an evaluator that waits on a
        network (the judge, embeddings) yields its requests; the others score at
        once (their work is CPU-bound)."""
        return (yield from returned(self._score_texts(texts)))
