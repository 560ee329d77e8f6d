"""How much a regex pattern repeats, counted from its text: never lower than the engine reads it."""

from __future__ import annotations

import pytest

from pytest_textsim.nlp.patterns import repetition


@pytest.mark.parametrize(
    ("pattern", "count"),
    [
        ("order #\\d+", 0),
        ("a{5}", 5),
        ("a{2,7}b{3,}c{,4}", 14),
        ("(?:ab){1000}", 1000),
        ("(?:a{100}){100}", 10_000),
        ("(?:\\d{1,3}\\.){3}\\d{1,3}", 12),
        ("((a{10}){10}){10}", 1000),
        ("(?:a{10}|b{20}){3}+", 90),
        ("a{" + "9" * 5000 + "}", 10**12),  # not converted (past Python's 4300 digits)
        ("\\{100000}", 0),  # an escaped brace is itself
        ("[a{100000}]", 0),  # in a class, a brace is itself
        ("[]{100000}]", 0),  # a ] first in a class is itself (version 0)
        ("[[:alpha:](]a{10}", 10),  # a POSIX class does not end the class
        ("(?#a{100000})", 0),  # a comment group
        ("(?:a{100}) {100}", 10_000),  # a space before a quantifier: counted high
        # Verbose mode: spaces and # comments sit between an item and its quantifier.
        ("(?x)(?:a{100}) # comment (\n {100}", 10_000),
        ("(?x:(?:a{100})#)\n{100})", 10_000),
        # Version 1: [] is an empty class, and a class after it is real.
        ("(?V1)[](a{100}){100}]", 10_000),
    ],
)  # fmt: skip
def test_repetition_multiplies_nested_counts_and_reads_the_pattern_as_the_engine_does(
    pattern: str, count: int
) -> None:
    assert repetition(pattern) == count

