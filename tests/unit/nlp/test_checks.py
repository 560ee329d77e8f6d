"""Deterministic check evaluators: exact values, options, and the errors they raise."""

from __future__ import annotations

import random
import time

import pytest

from pytest_textsim.nlp import checks
from pytest_textsim.nlp.checks import (
    ContainsEvaluator,
    ExactMatchEvaluator,
    JsonSchemaEvaluator,
    JsonValidEvaluator,
    LevenshteinEvaluator,
    PatternTimeout,
    RegexEvaluator,
    first_fenced_block,
)


def _edit_distance(a: str, b: str) -> int:
    """Plain dynamic-programming Levenshtein distance, independent of rapidfuzz."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


@pytest.mark.parametrize(
    ("response", "ground_truth", "options", "expected"),
    [
        ("kitten", "sitting", {}, 1 - 3 / 7),
        ("same", "same", {}, 1.0),
        ("", "", {}, 1.0),
        ("abc", "", {}, 0.0),
        ("Paris", "paris", {}, 0.8),
        ("Paris", "paris", {"case_sensitive": False}, 1.0),
        ("a  b\n c", "a b c", {}, 1 - 2 / 7),
        ("a  b\n c", "a b c", {"normalize_whitespace": True}, 1.0),
        ("Straße", "STRASSE", {"case_sensitive": False}, 1.0),
    ],
)
def test_levenshtein_values(response, ground_truth, options, expected):
    out = LevenshteinEvaluator(**options)(response=response, ground_truth=ground_truth)
    assert out["levenshtein"] == pytest.approx(expected, abs=1e-12)
    assert out["levenshtein_threshold"] == 0.8
    assert out["levenshtein_result"] == ("pass" if expected >= 0.8 else "fail")


def test_levenshtein_matches_a_plain_implementation_on_random_texts():
    rng = random.Random(7)
    ev = LevenshteinEvaluator()
    for _ in range(300):
        a = "".join(rng.choice("abcé ") for _ in range(rng.randrange(0, 15)))
        b = "".join(rng.choice("abcé ") for _ in range(rng.randrange(0, 15)))
        longest = max(len(a), len(b))
        expected = 1.0 if longest == 0 else 1 - _edit_distance(a, b) / longest
        assert ev(response=a, ground_truth=b)["levenshtein"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("response", "ground_truth", "options", "expected"),
    [
        ("Paris", "Paris", {}, 1.0),
        ("Paris", "paris", {}, 0.0),
        ("Paris", "paris", {"case_sensitive": False}, 1.0),
        ("Paris ", "Paris", {}, 0.0),
        (" Paris\n", "Paris", {"normalize_whitespace": True}, 1.0),
        ("Paris!", "Paris", {}, 0.0),
        ("Paris!", "Paris", {"ignore_punctuation": True}, 1.0),
        ("«Paris»。", "Paris", {"ignore_punctuation": True}, 1.0),
        ("The Eiffel Tower.", "eiffel tower", {"squad_normalize": True}, 1.0),
        ("The Eiffel Tower.", "eiffel tower", {}, 0.0),
    ],
)
def test_exact_match_values(response, ground_truth, options, expected):
    out = ExactMatchEvaluator(**options)(response=response, ground_truth=ground_truth)
    assert out == {
        "exact_match": expected,
        "exact_match_result": "pass" if expected else "fail",
        "exact_match_threshold": 1.0,
    }


@pytest.mark.parametrize(
    ("strings", "options", "response", "score", "reason"),
    [
        (["refund", "apolog"], {}, "We apologise and refund.", 1.0, "all found"),
        (["refund", "apolog"], {}, "We Apologise and refund.", 0.5, "missing: 'apolog'"),
        (["refund", "apolog"], {"case_sensitive": False}, "We APOLOGISE.", 0.5,
         "missing: 'refund'"),
        (["refund", "apolog", "sorry"], {}, "nothing", 0.0,
         "none found: 'refund', 'apolog', 'sorry'"),
        (["refund", "apolog"], {"mode": "any"}, "a refund", 1.0, "missing: 'apolog'"),
        (["refund", "apolog"], {"mode": "any"}, "no", 0.0, "none found: 'refund', 'apolog'"),
        ("refund,apolog", {}, "refund", 0.5, "missing: 'apolog'"),
    ],
)  # fmt: skip
def test_contains_values(strings, options, response, score, reason):
    out = ContainsEvaluator(strings=strings, **options)(response=response)
    assert out["contains"] == score
    assert out["contains_reason"] == reason
    assert out["contains_result"] == ("pass" if score >= 1.0 else "fail")


@pytest.mark.parametrize(
    ("strings", "message"),
    [
        ([], "strings is empty"),
        ("", "strings is empty"),
        (["a", ""], r"strings\[1\] is an empty string"),
        (["a", 3], r"strings\[1\] must be a string, got int"),
        (5, "strings must be a list of strings, got int"),
    ],
)
def test_contains_refuses_bad_strings(strings, message):
    with pytest.raises(ValueError, match=message):
        ContainsEvaluator(strings=strings)


def test_contains_needs_strings_and_a_known_mode():
    with pytest.raises(TypeError, match="missing required keyword argument: 'strings'"):
        ContainsEvaluator()
    with pytest.raises(ValueError, match="mode must be 'all' or 'any', got 'some'"):
        ContainsEvaluator(strings=["a"], mode="some")


@pytest.mark.parametrize(
    ("pattern", "options", "response", "expected"),
    [
        (r"order #\d+", {}, "Your order #123 ships.", 1.0),
        (r"order #\d+", {"fullmatch": True}, "Your order #123 ships.", 0.0),
        (r"order #\d+", {"fullmatch": True}, "order #123", 1.0),
        (r"ORDER", {}, "order", 0.0),
        (r"ORDER", {"case_sensitive": False}, "order", 1.0),
    ],
)
def test_regex_values(pattern, options, response, expected):
    assert RegexEvaluator(pattern=pattern, **options)(response=response)["regex"] == expected


def test_regex_invalid_pattern_names_it():
    with pytest.raises(ValueError, match=r"invalid regular expression '\(unclosed': missing \)"):
        RegexEvaluator(pattern="(unclosed")


def test_regex_match_is_cut_off_at_the_time_limit_naming_the_pattern(monkeypatch):
    monkeypatch.setattr(checks, "MATCH_TIMEOUT", 0.05)
    evaluator = RegexEvaluator(pattern="(a|aa)+$")
    started = time.perf_counter()
    with pytest.raises(PatternTimeout) as caught:
        evaluator(response="a" * 30 + "b")  # unbounded: about 2**21 steps per extra "a"
    assert time.perf_counter() - started < 0.5
    assert str(caught.value).startswith(
        "regex pattern '(a|aa)+$' took more than 0.05s to match a text of 31 characters"
    )
    assert isinstance(caught.value, ValueError)
    # The compiled pattern is kept: the same evaluator still scores other texts.
    assert evaluator(response="aaa")["regex"] == 1.0
    pattern = "(a|aa)+" + "x?" * 100 + "$"
    with pytest.raises(PatternTimeout) as caught:
        RegexEvaluator(pattern=pattern, fullmatch=True)(response="a" * 30 + "b")
    assert str(caught.value).startswith(f"regex pattern {pattern[:80] + '...'!r} took")


def test_regex_repeat_counts_past_the_limit_are_refused_before_compiling():
    """a{100000000} (12 characters, from data with --map regex.pattern=COLUMN)
    compiled for over 20 s into 13 GB."""
    for pattern in ("a{10001}", "(?:a{200}){200}", "a{100000000}"):
        started = time.perf_counter()
        with pytest.raises(ValueError) as caught:
            RegexEvaluator(pattern=pattern)
        assert time.perf_counter() - started < 0.5
        assert str(caught.value).startswith(
            f"regex pattern {pattern!r} repeats more than 10,000 times in all (the numbers "
            "in its {n}, {n,} and {n,m} repeats, nested ones multiplied: the limit of one "
            "pattern)"
        )
    evaluator = RegexEvaluator(pattern="(?:ab){1000}", fullmatch=True)
    assert evaluator(response="ab" * 1000)["regex"] == 1.0
    assert evaluator(response="ab" * 999)["regex"] == 0.0
    assert RegexEvaluator(pattern="(?:a{100}){100}")(response="a" * 10_000)["regex"] == 1.0
    assert RegexEvaluator(pattern="a{10000}")(response="a" * 10_000)["regex"] == 1.0


@pytest.mark.parametrize(
    ("response", "options", "score", "reason"),
    [
        ('{"a": [1, 2]}', {}, 1.0, "valid JSON"),
        ("3", {}, 1.0, "valid JSON"),
        ("{'a': 1}", {}, 0.0,
         "not JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        ("NaN", {}, 0.0, "not JSON: NaN is not JSON"),
        ('{"a": "cut', {}, 0.0, "not JSON: Unterminated string starting at line 1 column 7"),
        ('Here:\n```json\n{"a": 1}\n```\n', {}, 0.0,
         "not JSON: Expecting value at line 1 column 1"),
        ('Here:\n```json\n{"a": 1}\n```\n', {"extract": True}, 1.0, "valid JSON"),
        ('{"a": 1}', {"extract": True}, 1.0, "valid JSON"),
        ("```\n{oops}\n```", {"extract": True}, 0.0,
         "not JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
    ],
)  # fmt: skip
def test_json_valid_values(response, options, score, reason):
    out = JsonValidEvaluator(**options)(response=response)
    assert (out["json_valid"], out["json_valid_reason"]) == (score, reason)


_ITEMS = {
    "type": "object",
    "required": ["items"],
    "properties": {
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"price": {"type": "number"}}},
        }
    },
}


@pytest.mark.parametrize(
    ("response", "score", "reason"),
    [
        ('{"items": [{"price": 1}, {"price": 2.5}]}', 1.0, "valid"),
        ('{"items": [{"price": 1}, {"price": 2}, {"price": "abc"}]}', 0.0,
         "$.items[2].price: 'abc' is not of type 'number'"),
        ("{}", 0.0, "$: 'items' is a required property"),
        ("{", 0.0,
         "not JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
    ],
)  # fmt: skip
def test_json_schema_values(response, score, reason):
    out = JsonSchemaEvaluator(schema=_ITEMS)(response=response)
    assert (out["json_schema"], out["json_schema_reason"]) == (score, reason)


def test_json_schema_draft_follows_dollar_schema():
    # Draft 4's exclusiveMaximum is a boolean; in 2020-12 it is a number.
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 3,
              "exclusiveMaximum": True}  # fmt: skip
    assert JsonSchemaEvaluator(schema=draft4)(response="3")["json_schema"] == 0.0
    with pytest.raises(ValueError, match=r"invalid JSON Schema at \$.exclusiveMaximum: True"):
        JsonSchemaEvaluator(schema={"maximum": 3, "exclusiveMaximum": True})


def test_json_schema_local_refs_resolve_and_remote_refs_are_never_fetched():
    local = {"$defs": {"p": {"type": "number"}}, "properties": {"a": {"$ref": "#/$defs/p"}}}
    out = JsonSchemaEvaluator(schema=local)(response='{"a": "x"}')
    assert out["json_schema_reason"] == "$.a: 'x' is not of type 'number'"
    remote = JsonSchemaEvaluator(schema={"$ref": "http://127.0.0.1:9/schema.json"})
    with pytest.raises(ValueError, match=r"remote \$ref 'http://127.0.0.1:9/schema.json' is not"):
        remote(response="1")


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "nope"}, r"invalid JSON Schema at \$.type"),
        ([1], "schema must be a JSON object"),
        ("{not json", "schema: not JSON"),
    ],
)
def test_json_schema_refuses_invalid_schemas(schema, message):
    with pytest.raises(ValueError, match=message):
        JsonSchemaEvaluator(schema=schema)


def test_schema_given_as_json_text():
    ev = JsonSchemaEvaluator(schema='{"type": "integer"}')
    assert ev(response="3")["json_schema"] == 1.0
    assert ev(response="3.5")["json_schema_reason"] == "$: 3.5 is not of type 'integer'"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no fence", None),
        ("a\n```json\n{}\n```\nb\n```\nsecond\n```", "{}"),
        ("~~~\nx\n~~~", "x"),
        ("````\n```\ninner\n````", "```\ninner"),
        ("```\nunclosed\nstill", "unclosed\nstill"),
        ("```\n```", ""),
        ("    ```\nindented code, not a fence\n```", ""),
        ("```\r\n{}\r\n```\r\n", "{}"),
        ("``` js`x\nnot a fence", None),
    ],
)
def test_first_fenced_block(text, expected):
    assert first_fenced_block(text) == expected


def test_fenced_block_search_is_linear_on_adversarial_input():
    # Many opening-looking lines and no close: a backtracking regex is quadratic here.
    # CPU seconds of this process (other processes on a loaded machine add none),
    # the small input's the least of three tries.
    def seconds(n: int, tries: int = 1) -> float:
        text = "```\n" + "``` x`\n" * n
        took = []
        for _ in range(tries):
            started = time.process_time()
            first_fenced_block(text)
            took.append(time.process_time() - started)
        return min(took)

    small, large = seconds(20_000, tries=3), seconds(200_000)
    assert large < small * 40  # 10x the input; quadratic would be ~100x


@pytest.mark.parametrize(
    ("cls", "kwargs", "message"),
    [
        (LevenshteinEvaluator, {"case_sensitive": "no"}, "case_sensitive must be True or False"),
        (ExactMatchEvaluator, {"threshold": 2}, "threshold must be from 0 to 1, got 2"),
        (JsonValidEvaluator, {"threshold": True}, "threshold must be a number, got bool"),
    ],
)
def test_bad_options_are_named(cls, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cls(**kwargs)


def test_calls_are_keyword_only_and_check_texts():
    ev = LevenshteinEvaluator()
    with pytest.raises(TypeError, match="LevenshteinEvaluator is called with keywords"):
        ev("a", "b")
    with pytest.raises(TypeError, match=r"'respons' \(did you mean 'response'\?\)"):
        ev(respons="a", ground_truth="b")
    with pytest.raises(TypeError, match="LevenshteinEvaluator\\(\\): 'response' must be str"):
        ev(response=None, ground_truth="b")
    with pytest.raises(TypeError, match="missing required keyword argument: 'response'"):
        ContainsEvaluator(strings=["a"])()


def test_params_are_recorded_options():
    assert ContainsEvaluator(strings=("a",), mode="any").params == {
        "strings": ["a"], "mode": "any", "case_sensitive": True}  # fmt: skip
    assert RegexEvaluator(pattern="x").params == {
        "pattern": "x", "fullmatch": False, "case_sensitive": True}  # fmt: skip
