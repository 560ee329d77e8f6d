"""How much a ``regex`` pattern repeats, counted from its text before it is compiled.

The ``regex`` engine compiles a counted repeat (``a{3000000}``, ``(?:a{1000}){1000}``)
into code in proportion to the count: ``a{100000000}``, 12 characters, compiles
for over 20 s into 13 GB. A pattern can come from data (``textsim score --map
regex.pattern=COLUMN``), so :func:`repetition` counts it first, without compiling.

The count is the sum, over the pattern's counted repeats (``{n}``, ``{n,}``,
``{,m}``, ``{n,m}``), of the largest number written in each, multiplied by the
counts of the repeated groups around it: ``(?:ab){1000}`` is 1,000,
``(?:a{100}){100}`` 10,000. ``*``, ``+`` and ``?`` count 1. Where the pattern
could be read two ways (inline ``x`` (verbose) or ``V1`` flags change what is
a comment, a space or the end of a character class), it is counted each way
and the larger count kept, so it is never counted low.
"""

from __future__ import annotations

import re

#: The most a pattern may repeat in all, counted by :func:`repetition`: such a
#: pattern compiles in 2 to 25 ms (``a{10000}``, ``(a{1,2}){10000}``).
MAX_REPETITION = 10_000

_QUANTIFIER = re.compile(r"\{\s*(\d*)\s*(?:(,)\s*(\d*)\s*)?\}")
# An inline flag group, scoped (``(?x:``) or not (``(?x)``); group 1 the flags turned
# on, group 2 those turned off.
_FLAGS = re.compile(r"\(\?((?:[abefiLmprsuwx]|V[01])*)(?:-((?:[abefiLmprsuwx]|V[01])*))?([:)])")
_POSIX_CLASS = re.compile(r"\[:\^?[A-Za-z_]*:\]")
_BIG = 10**12  # any count past the limit: digits are never converted past this


def repetition(pattern: str) -> int:
    """How much ``pattern`` repeats in all (see the module's docstring); past
    :data:`MAX_REPETITION` the exact figure is not worked out."""
    verbose_ways = (False, True) if "x" in pattern and "(?" in pattern else (False,)
    version_ways = (False, True) if "V1" in pattern or _default_v1() else (False,)
    return max(
        _count(pattern, verbose, version1) for verbose in verbose_ways for version1 in version_ways
    )


def _default_v1() -> bool:
    import regex

    return bool(regex.DEFAULT_VERSION == regex.VERSION1)


def _number(digits: str) -> int:
    return int(digits) if len(digits) <= 12 else _BIG


def _count(pattern: str, verbose: bool, version1: bool) -> int:
    """The pattern's repetition read with verbose mode ``verbose`` at the start and
    version 1's character classes (nested sets, ``[]`` empty) if ``version1``."""
    # Per open group, the outermost first: its count so far, and whether verbose inside it.
    totals, verbose_in = [0], [verbose]
    last: int | None = None  # what the item before a quantifier counts (None: nothing)
    at, end = 0, len(pattern)
    while at < end:
        char = pattern[at]
        if verbose_in[-1] and (char.isspace() or char == "#"):
            at = pattern.find("\n", at) if char == "#" else at + 1
            at = end if at < 0 else at
            continue
        if char.isspace():
            at += 1  # a literal space, but a quantifier after it is taken for the item before
            continue
        if char == "{":
            found = _QUANTIFIER.match(pattern, at)
            if found and last is not None:
                low, _, high = found.groups()  # {,} is *: once
                times = max(_number(low or "0"), _number(high or "0"), 1)
                repeated = times * max(last, 1)
                totals[-1] += repeated - last
                last, at = repeated, found.end()
                if totals[-1] > MAX_REPETITION:
                    return totals[-1]
                continue
            last, at = 0, at + 1
        elif char == "\\":
            at = _after_escape(pattern, at)
            last = 0
        elif char == "[":
            at = _after_class(pattern, at, version1)
            last = 0
        elif char == "(":
            if pattern.startswith("(?#", at):
                close = pattern.find(")", at)
                at = end if close < 0 else close + 1
                continue
            flags = _FLAGS.match(pattern, at)
            inside = verbose_in[-1]
            if flags:
                on, off, kind = flags.group(1), flags.group(2) or "", flags.group(3)
                inside = ("x" in on or inside) and "x" not in off
                if kind == ")":  # to the end of the group (version 1; version 0: global)
                    verbose_in[-1] = inside
                    at = flags.end()
                    continue
                at = flags.end()
            else:
                at += 1
            totals.append(0)
            verbose_in.append(inside)
            last = None
        elif char == ")":
            if len(totals) > 1:
                inner = totals.pop()
                verbose_in.pop()
                totals[-1] += inner
                last = inner
            else:
                last = 0  # unbalanced: compiling it fails
            at += 1
        elif char == "|":
            last, at = None, at + 1
        elif char in "*+?":
            at += 1  # counts 1; the item stays what a following quantifier repeats
        else:
            last, at = 0, at + 1
    return sum(totals)  # with the groups left open, which compiling refuses


def _after_escape(pattern: str, at: int) -> int:
    """Past ``\\X`` (and ``\\p{...}``, ``\\N{...}``: a property, a character name)."""
    if pattern[at + 1 : at + 2] in ("p", "P", "N") and pattern[at + 2 : at + 3] == "{":
        close = pattern.find("}", at + 3)
        return len(pattern) if close < 0 else close + 1
    return at + 2


def _after_class(pattern: str, at: int, version1: bool) -> int:
    """Past the character class that starts at ``at``: version 0 takes a ``]`` first
    in it as itself and ``[`` as itself; version 1 nests sets (``[[a-z]--[aeiou]]``)."""
    at += 1
    if pattern.startswith("^", at):
        at += 1
    if not version1 and pattern.startswith("]", at):
        at += 1
    depth, end = 1, len(pattern)
    while at < end:
        char = pattern[at]
        if char == "\\":
            at = _after_escape(pattern, at)
            continue
        posix = _POSIX_CLASS.match(pattern, at)
        if posix:
            at = posix.end()
            continue
        if char == "[" and version1:
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1
    return end
