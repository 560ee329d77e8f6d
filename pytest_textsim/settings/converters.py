"""Converters of setting and option values.

Each takes the raw value (a string from flags, the environment or the ini
file, or a Python value from a marker or a call) and returns the parsed value,
or raises ``ValueError`` whose message says what was expected; the caller adds
where the value came from.
"""

from __future__ import annotations

import math
import re
from numbers import Integral, Real
from typing import Any, Callable

from .modes import MODES, RecordMode


def as_str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {value!r}")
    return value.strip()


def as_float(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number, got {value!r}") from None
    if isinstance(value, bool) or math.isnan(number):
        raise ValueError(f"expected a number, got {value!r}")
    return number


def as_positive_float(value: Any) -> float:
    number = as_float(value)
    if number <= 0:
        raise ValueError(f"expected a positive number, got {value!r}")
    return number


def as_usd(value: Any) -> float:
    """An amount of money in USD, finite and above 0 (``5``, ``0.5``; ``$5`` too)."""
    text = value.strip().lstrip("$") if isinstance(value, str) else value
    try:
        amount = as_positive_float(text)
    except ValueError:
        amount = math.nan
    if not math.isfinite(amount):
        raise ValueError(f"expected an amount in USD (a positive number), got {value!r}")
    return amount


def as_share(value: Any) -> float:
    """A relative change, finite and 0 or more: ``0.1`` or ``10%`` (ten per cent)."""
    text = value.strip() if isinstance(value, str) else value
    percent = isinstance(text, str) and text.endswith("%")
    try:
        share = as_float(text[:-1] if percent else text) / (100 if percent else 1)
    except ValueError:
        share = math.nan
    if not math.isfinite(share) or share < 0:
        raise ValueError(f"expected a share such as 0.1 or 10% (0 or more), got {value!r}")
    return share


def as_seconds(value: Any) -> float:
    try:
        seconds = as_positive_float(value)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds):  # "inf" would be no limit at all
        raise ValueError(f"expected seconds (a positive number), got {value!r}")
    return seconds


def as_int(value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a whole number, got {value!r}") from None
    if isinstance(value, float) and value != number:
        raise ValueError(f"expected a whole number, got {value!r}")
    if number < minimum:
        raise ValueError(f"expected a whole number >= {minimum}, got {value!r}")
    return number


def as_positive_int(value: Any) -> int:
    return as_int(value, minimum=1)


def temperature_problem(value: Any) -> str | None:
    """Why ``value`` is no sampling temperature (a number from 0 to 2), or ``None``.

    The one range check of the ``textsim_judge_temperature`` setting and of
    :class:`~pytest_textsim.judge.options.JudgeOptions`.
    """
    number = isinstance(value, Real) and not isinstance(value, bool)
    return None if number and 0 <= value <= 2 else "expected a temperature from 0 to 2"


def as_temperature(value: Any) -> float:
    number = as_float(value)
    problem = temperature_problem(number)
    if problem:
        raise ValueError(f"{problem}, got {value!r}")
    return number


def as_unit_interval(value: Any) -> float:
    """A share or rate: a number from 0 to 1."""
    number = as_float(value)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"expected a number from 0 to 1, got {value!r}")
    return number


def as_level(value: Any) -> float:
    """A significance level: a number strictly between 0 and 1 (0.05)."""
    number = as_float(value)
    if not 0.0 < number < 1.0:
        raise ValueError(f"expected a significance level between 0 and 1 (0.05), got {value!r}")
    return number


#: The words that read as false (case-insensitive, stripped); ``as_bool`` reads
#: ``TRUE_WORDS`` as true and refuses anything else.
FALSE_WORDS = ("0", "false", "no", "off", "")
TRUE_WORDS = ("1", "true", "yes", "on")


def as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def one_of(*choices: str) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        text = str(value).strip()
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}")
        return text

    return convert


def as_provider_name(value: Any) -> str:
    """The name of a judge provider (``openai``, or one a package registers): lower-case
    letters, digits, ``_``, ``.`` and ``-``. Whether a provider has that name is the
    provider registry's to say, once the plugins and conftest files have registered theirs."""
    text = str(value).strip()
    if not re.match(r"[a-z0-9][a-z0-9_.-]*\Z", text):
        raise ValueError(
            "expected a judge provider's name (openai, azure, anthropic, or one a package "
            f"registers: lower-case letters, digits, '_', '.', '-'), got {value!r}"
        )
    return text


def as_http_url(value: Any) -> str:
    text = as_str(value)
    if not text.lower().startswith(("http://", "https://")):
        # only the scheme: a mirror URL may carry credentials
        scheme = text.partition(":")[0] if ":" in text else text[:10]
        raise ValueError(f"expected an http:// or https:// URL, got one starting {scheme!r}")
    return text


def as_env_name(value: Any) -> str:
    """The name of an environment variable; never echoes a value that looks like a key."""
    text = as_str(value)
    if text.lower().startswith(("sk-", "sk_")) or (len(text) >= 32 and " " not in text):
        raise ValueError(
            "this looks like an API key, not the name of a variable: put the key in the "
            "environment and name that variable here (e.g. MY_JUDGE_KEY)"
        )
    if not text.replace("_", "a").isalnum() or text[0].isdigit():
        raise ValueError(f"expected an environment variable name like MY_JUDGE_KEY, got {text!r}")
    return text


def as_endpoint_url(value: Any) -> str:
    """An http(s) URL with a host; like :func:`as_http_url`, never echoes more than the scheme."""
    from urllib.parse import urlsplit  # here: this module must stay cheap to import

    text = as_http_url(value)
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if not parts.hostname or port == -1:
        raise ValueError(
            "expected a URL with a host (and a numeric port, if any), e.g. "
            "http://localhost:11434/v1"
        )
    return text


def as_azure_endpoint(value: Any) -> str:
    """The Azure OpenAI resource endpoint: no ``/openai`` part, no query string.

    The openai client appends ``/openai/deployments/<name>/chat/completions``,
    so a pasted deployment URL doubles it and the server's 404 says nothing of
    why. A plain path prefix is allowed: gateways such as Azure API Management
    serve Azure OpenAI under one (``https://gw.azure-api.net/llm``). The
    message names the host only: a path or query string may hold a key.
    """
    from urllib.parse import urlsplit  # here: this module must stay cheap to import

    text = as_endpoint_url(value)
    parts = urlsplit(text)
    segments = [segment.lower() for segment in parts.path.split("/")]
    if "openai" in segments or "deployments" in segments or parts.query or parts.fragment:
        host = parts.netloc.rpartition("@")[2]
        raise ValueError(
            "expected the Azure OpenAI resource endpoint only, "
            f"https://<resource>.openai.azure.com (here {parts.scheme}://{host}), "
            "without /openai/... or a query string: the client adds "
            "/openai/deployments/<deployment>/chat/completions, and the deployment "
            "name and API version are settings of their own"
        )
    return text


#: Added to a range error above 1 for metrics sacreBLEU reports on 0-100.
SACRE_SCALE_NOTE = "scores here are sacreBLEU's divided by 100: its {} 45.0 is 0.45"


def check_threshold(
    value: object,
    source: str,
    *,
    label: str,
    low: float = 0.0,
    high: float = 1.0,
    note: str = "",
) -> float:
    """``value`` as a pass threshold of metric ``label``, or ``ValueError`` starting ``source``.

    The one check behind every threshold given in Python: evaluator classes,
    fixtures, helpers and markers. A threshold is any real number (``int``,
    ``float``, numpy scalars) except ``bool``, finite, and inside
    ``low..high``; a string is refused, since only text settings (ini file,
    environment, command line) are parsed. ``note`` is added when the value is
    above ``high`` (the likely mistake behind it). Whole numbers stay ``int``
    (a judge threshold of 3 is reported as 3, not 3.0).

    >>> check_threshold("0.3", "bleu(threshold=...)", label="BLEU")
    Traceback (most recent call last):
    ...
    ValueError: bleu(threshold=...): a BLEU threshold must be a number, got str '0.3' (write 0.3)
    """
    __tracebackhide__ = True  # the caller's argument is wrong, not this code
    # "an F1 threshold", "a BLEU threshold"
    article = "an" if label.startswith(("F1", "a", "e", "i", "o", "u")) else "a"
    what = f"{article} {label} threshold" if label else "a threshold"
    if isinstance(value, bool) or not isinstance(value, Real):
        hint = ""
        if isinstance(value, str):
            try:
                hint = f" (write {float(value)!r})"
            except ValueError:
                pass
        raise ValueError(
            f"{source}: {what} must be a number, got {type(value).__name__} {value!r}{hint}"
        )
    # numpy scalars print as np.float64(0.3): show the plain number.
    number: float = int(value) if isinstance(value, Integral) else float(value)
    if not math.isfinite(number):
        raise ValueError(f"{source}: {what} must be a finite number, got {number!r}")
    if not low <= number <= high:
        extra = f" ({note})" if note and number > high else ""
        raise ValueError(
            f"{source}: {what} must be from {low:g} to {high:g}, got {number!r}{extra}"
        )
    return number


def as_record_mode(value: Any) -> RecordMode:
    """A judge cache mode: ``once``, ``none``, ``rewrite`` or ``off``."""
    return RecordMode.parse(value)


REPLAY_SCOPES = ("all", "marked")


def as_replay(value: Any) -> tuple[str | None, RecordMode | None]:
    """``once`` / ``all`` / ``all none``: (which tests, mode); either may be None."""
    words = str(value).replace(",", " ").split()
    scope: str | None = None
    mode: RecordMode | None = None
    for word in words:
        if word in REPLAY_SCOPES and scope is None:
            scope = word
        elif word in MODES and mode is None:
            mode = RecordMode(word)
        else:
            raise ValueError(
                f"expected a mode ({', '.join(MODES)}) and/or which tests "
                f"({', '.join(REPLAY_SCOPES)}), got {value!r}"
            )
    if not words:
        raise ValueError(f"expected a mode ({', '.join(MODES)}), got {value!r}")
    return scope, mode


def as_patterns(value: Any) -> list[str]:
    """Regular expressions, one per line; a bad one names itself and why."""
    items = value if isinstance(value, (list, tuple)) else [value]
    patterns = [str(item).strip() for item in items if str(item).strip()]
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"bad regular expression {pattern!r}: {exc}") from None
    return patterns


# Whitespace then "#" or ";": a comment in most ini dialects, but text to pytest,
# whose ini files have comments on lines of their own only.
_INLINE_COMMENT = re.compile(r"\s[#;]")


def inline_comment(value: Any) -> str | None:
    """Why an ini-file value (text, or the lines of a ``linelist``) holds a comment, or None.

    ``"gpt-4o-mini  # cheap model" contains an inline comment (" #"); pytest ini
    files have none: put the comment on its own line``
    """
    for line in value if isinstance(value, (list, tuple)) else [value]:
        if not isinstance(line, str):
            continue
        found = _INLINE_COMMENT.search(line)
        if found:
            mark = found.group().replace("\t", "\\t")
            return (
                f'"{line.strip()}" contains an inline comment ("{mark}"); pytest ini files '
                "have none: put the comment on its own line"
            )
    return None
