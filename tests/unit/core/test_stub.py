"""The typed stub (``pytest_textsim/__init__.pyi``) against the package and a user's tests.

The helpers are made at run time; type checkers see them only through the stub
``tools/codegen.py`` writes. Here: the stub declares exactly what the package
exports, with the signatures the helpers have at run time; its output types
hold the keys the evaluators really return; ``mypy --strict`` accepts a user's
test file using fixtures and helpers and rejects a wrong keyword; and the
generated code stays small.
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import pytest_textsim
from pytest_textsim.plugin.helpers import package_metrics
from pytest_textsim.plugin.signatures import EACH, helper_name, type_name
from tools import codegen

PACKAGE = Path(pytest_textsim.__file__).parent
ROOT = PACKAGE.parent
#: Generated lines the repository may hold, every generated file together: the stub
#: takes about 15 to 19 lines a metric (its result type, fixture protocol and helpers,
#: and its evaluator's import).
GENERATED_LIMIT = 926


def stub_tree() -> ast.Module:
    return ast.parse(codegen.STUB.read_text(encoding="utf-8"))


def test_the_stub_declares_every_public_name_and_nothing_else() -> None:
    declared = set()
    for node in stub_tree().body:
        if isinstance(node, ast.ImportFrom):
            declared |= {alias.asname for alias in node.names if alias.asname}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            declared.add(node.name)
        elif isinstance(node, ast.Assign):
            declared |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    public = {name for name in declared if not name.startswith("_")} | {"__version__"}
    assert public == set(pytest_textsim.__all__)
    for name in public:  # each is there at run time too
        assert getattr(pytest_textsim, name) is not None


def _helpers_in_stub() -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Each helper the stub declares, by name: its ``def``, or, for a helper declared
    as its fixture's call (``assert_bleu = _helper(BleuFixture.__call__)``), that
    method's ``def`` without ``self``."""
    tree = stub_tree()
    methods = {
        (cls.name, node.name): node
        for cls in tree.body
        if isinstance(cls, ast.ClassDef)
        for node in cls.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name != "_helper":
            found[node.name] = node
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "_helper"
        ):
            call = node.value
            (target,) = node.targets
            (attribute,) = call.args
            assert isinstance(target, ast.Name) and isinstance(attribute, ast.Attribute)
            assert isinstance(attribute.value, ast.Name)
            method = methods[attribute.value.id, attribute.attr]
            unbound = ast.arguments(**{**vars(method.args), "args": method.args.args[1:]})
            found[target.id] = type(method)(**{**vars(method), "args": unbound})
    return found


def test_the_stub_has_the_helpers_signatures() -> None:
    functions = _helpers_in_stub()
    assert len(functions) == 3 * len(package_metrics())
    for name, node in functions.items():
        helper = getattr(pytest_textsim, name)
        assert isinstance(node, ast.AsyncFunctionDef) == inspect.iscoroutinefunction(helper)
        stub = [(a.arg, "positional") for a in node.args.args]
        stub += [(a.arg, "keyword") for a in node.args.kwonlyargs]
        kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
                 inspect.Parameter.KEYWORD_ONLY: "keyword"}  # fmt: skip
        params = inspect.signature(helper).parameters.values()
        assert stub == [(p.name, kinds[p.kind]) for p in params], name


def test_the_fixtures_batch_forms_take_the_batch_helpers_parameters_but_score() -> None:
    from pytest_textsim.plugin.arguments import call_arguments

    classes = {node.name: node for node in stub_tree().body if isinstance(node, ast.ClassDef)}
    for metric in package_metrics():
        helper = getattr(pytest_textsim, helper_name(metric, EACH))
        wanted = [name for name in inspect.signature(helper).parameters if name != "score"]
        methods = {
            node.name: node
            for node in classes[type_name(metric, "Fixture")].body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        for name, awaited in (("each", False), ("aeach", True)):
            node = methods[name]
            assert isinstance(node, ast.AsyncFunctionDef) == awaited, (metric.name, name)
            declared = [a.arg for a in [*node.args.args[1:], *node.args.kwonlyargs]]
            assert declared == wanted, (metric.name, name)
        # What the stub declares, the fixture's batch takes at run time; score= it refuses.
        texts = {n: None for n in wanted if n not in ("cases", "ids", "fields", "threshold")}
        call_arguments(metric, f"{metric.fixture}.each", (), texts)
        with pytest.raises(TypeError, match="unexpected keyword argument 'score'"):
            call_arguments(metric, f"{metric.fixture}.each", (), {**texts, "score": None})


def test_a_helper_refuses_what_its_signature_lacks() -> None:
    with pytest.raises(TypeError, match=r"assert_bleu\(\) got unexpected keyword argument 'score'"):
        pytest_textsim.assert_bleu("a b", "a b", score="bleu")
    with pytest.raises(TypeError, match=r"'weigths' \(did you mean 'weights'\?\)"):
        pytest_textsim.assert_each_bleu(["a b"], ["a b"], weigths=(1.0,))
    assert pytest_textsim.assert_rouge("a b", "a b", score="recall")["rouge_recall"] == 1.0


def test_helpers_are_made_once_and_pickle_by_name() -> None:
    import pickle

    from pytest_textsim.plugin import helpers

    helper = pytest_textsim.assert_each_meteor
    assert helpers.assert_each_meteor is helper
    assert pickle.loads(pickle.dumps(helper)) is helper
    assert "assert_each_meteor" in dir(helpers)
    with pytest.raises(AttributeError, match="assert_nothing"):
        helpers.assert_nothing  # noqa: B018


def _holds(value: Any, kind: str) -> bool:
    """Whether ``value`` is of the stub's type ``kind`` (the few the outputs use)."""
    if kind.startswith("NotRequired["):
        kind = kind[len("NotRequired[") : -1]
    if kind.startswith("Literal["):
        return value in ast.literal_eval(f"({kind[len('Literal[') : -1]},)")
    if kind.startswith("list["):
        return isinstance(value, list) and all(_holds(v, kind[5:-1]) for v in value)
    return {"float": isinstance(value, (int, float)) and not isinstance(value, bool),
            "int": isinstance(value, int) and not isinstance(value, bool),
            "str": isinstance(value, str)}[kind]  # fmt: skip


def _check_output(metric_name: str, output: dict[str, Any]) -> None:
    metric = next(m for m in package_metrics() if m.name == metric_name)
    fields = {key: (kind, required) for key, kind, required in codegen.result_fields(metric)}
    assert set(output) <= set(fields), f"{metric_name}: undeclared {set(output) - set(fields)}"
    missing = [key for key, (_, required) in fields.items() if required and key not in output]
    assert not missing, f"{metric_name}: declared always there, missing: {missing}"
    for key, value in output.items():
        assert _holds(value, fields[key][0]), f"{metric_name}: {key}={value!r} is not {fields[key]}"


TEXTS = {"response": "Paris is the capital of France.", "ground_truth": "Paris is in France."}
LEADING = {"strings": ["Paris"], "pattern": "Par", "schema": {"type": "object"}}


@pytest.mark.parametrize(
    "metric", [m for m in package_metrics() if not m.calls_model], ids=lambda m: m.name
)
def test_the_output_types_hold_what_the_evaluators_return(metric: Any) -> None:
    texts = {name: TEXTS[name] for name in metric.inputs}
    options = {name: LEADING[name] for name in metric.leading_options}
    if metric.name == "rouge":
        options["rouge_type"] = "rougeL"
    evaluator = metric.evaluator_class()
    _check_output(metric.name, evaluator(**options)(**texts))
    if metric.reference_lists:
        refs = {**texts, "ground_truth": ["Paris.", "France."]}
        _check_output(metric.name, evaluator(**options)(**refs))
    if metric.name in ("json_valid", "json_schema"):
        _check_output(metric.name, evaluator(**options)(response='{"a": 1}'))


def test_the_judge_output_types_hold_what_the_judges_return(fake_openai: Any) -> None:
    from pytest_textsim import (
        JudgeOptions,
        QAEvaluator,
        RefusalEvaluator,
        RubricEvaluator,
        SemanticSimilarityEvaluator,
        SimilarityEvaluator,
    )
    from pytest_textsim.testing.fake_openai import Reply

    config = {"model": "judge", "base_url": fake_openai.base_url, "api_key": "sk-test"}
    options = JudgeOptions(max_attempts=1)
    refusal = RefusalEvaluator(config, options=options)
    _check_output("refusal", refusal(response="I can't help with that."))
    fake_openai.script(Reply.score(0, "Answers."))  # refusal is judged on 0-1
    _check_output("refusal", refusal(response="I can't answer that, but it is Paris."))
    fake_openai.script(*[Reply.score(4, "Close.")] * 20)
    texts = {**TEXTS, "context": "Paris is in France.", "query": "Where is Paris?"}
    _check_output("similarity", SimilarityEvaluator(config, options=options, samples=2)(
        response=texts["response"], ground_truth=["Paris.", "France."]))  # fmt: skip
    _check_output("qa", QAEvaluator(config, options=options)(**texts))
    rubric = RubricEvaluator(config, criteria="Names the capital.", options=options)
    _check_output("rubric", rubric(response=texts["response"]))
    embed = SemanticSimilarityEvaluator(config, options=options)
    _check_output("semantic_similarity", embed(**TEXTS))


def generated_lines(text: str) -> int:
    """The lines of ``text`` that a generator wrote: all of them when its first lines
    say it is generated ("generated ... do not edit"), else those between a block's
    "generated ... begin" and "end" marker lines (comments)."""
    lines = text.splitlines()
    head = " ".join(lines[:5]).lower()
    if "generated" in head and "do not edit" in head:
        return len(lines)
    count, inside = 0, False
    for line in lines:
        low = line.lower()
        marker = low.lstrip().startswith("#")  # not code that mentions the markers
        if marker and "generated" in low and "begin" in low:
            inside = True
        elif inside and marker and "generated" in low and "end" in low:
            inside = False
        count += inside
    return count


def test_generated_lines_are_counted_by_their_markers() -> None:
    assert generated_lines("# Generated by x; do not edit.\na\nb\n") == 3
    assert generated_lines("a\n# -- generated by x: begin --\nb\nc\n# -- generated: end --\nd") == 3
    assert generated_lines("a\nb\n") == 0
    # Markers are comment lines: code naming them (as this file's does) starts no block.
    assert generated_lines('a\nif "generated" in low and "begin" in low:\nb\n') == 0


def test_the_repository_holds_at_most_926_generated_lines() -> None:
    counts = {}
    for folder in ("pytest_textsim", "tools", "tests", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".pyi") and "__pycache__" not in path.parts:
                lines = generated_lines(path.read_text(encoding="utf-8"))
                if lines:
                    counts[path.relative_to(ROOT).as_posix()] = lines
    assert "pytest_textsim/__init__.pyi" in counts, "the stub lost its generated marker"
    total = sum(counts.values())
    assert total <= GENERATED_LIMIT, f"{total} generated lines, over {GENERATED_LIMIT}: {counts}"


USER_TESTS = '''
from pytest_textsim import (
    BleuFixture, BleuResult, RougeFixture, SimilarityFixture, assert_bleu, assert_each_similar,
    assert_rouge_async,
)


def test_fixtures(bleu: BleuFixture, rouge: RougeFixture, similarity: SimilarityFixture) -> None:
    out: BleuResult = bleu("Paris.", "Paris is in France.", threshold=0.3, smoothing=4)
    score: float = out["bleu_score"]
    precision: float = rouge("a", ["b", "c"], rouge_type="rouge1")["rouge_precision"]
    reason: str = similarity("a", "b", query="q")["similarity_reason"]
    first = similarity.each(["a"], ["b"], ids=["x"])[0]
    assert first is None or first["similarity"] >= 3
    assert score >= 0 and precision >= 0 and reason


async def test_helpers() -> None:
    assert assert_bleu("a", "b", weights=(1.0,))["bleu_result"] == "pass"
    recall: float = (await assert_rouge_async("a", "b", score="recall"))["rouge_recall"]
    outputs = assert_each_similar(["a"], ["b"], ids=["x"], samples=3)
    assert recall >= 0 and outputs


async def test_batches(bleu: BleuFixture, rouge: RougeFixture) -> None:
    # A batch takes the single call's texts as one entry per case (several references
    # for a case where the single call takes a list) and its keywords.
    many: list[BleuResult | None] = bleu.each(
        ["a", "b"], ["a", ["b", "c"]], ids=["x", "y"], threshold=0.2, smoothing=4
    )
    rows = await rouge.aeach(cases=[{"response": "a", "ground_truth": "b"}], rouge_type="rouge1")
    f1 = rows[0]
    assert many and (f1 is None or f1["rouge_f1_score"] >= 0)
'''

WRONG_TESTS = '''
from pytest_textsim import BleuFixture, RougeFixture, assert_bleu


def test_wrong(bleu: BleuFixture) -> None:
    assert_bleu("a", "b", smooth=4)
    bleu("a", "b", weigths=(1.0,))
    verdict: int = bleu("a", "b")["bleu_result"]
    bleu.each(["a"], [["b", "c"]], smooth=4)


async def test_wrong_batch(rouge: RougeFixture) -> None:
    await rouge.aeach(cases=[{"response": "a", "ground_truth": "b"}], rouge_typ="rouge1")
    rouge.each(["a"], ["b"], score="recall")
'''


def test_mypy_strict_checks_a_users_fixtures_and_helpers(tmp_path: Path) -> None:
    from mypy import api

    (tmp_path / "test_user.py").write_text(textwrap.dedent(USER_TESTS), encoding="utf-8")
    (tmp_path / "test_wrong.py").write_text(textwrap.dedent(WRONG_TESTS), encoding="utf-8")
    # The stub alone: the modules it re-exports from are not followed (they are the
    # package's own mypy run's), which keeps this to the standard library's stubs.
    (tmp_path / "mypy.ini").write_text(
        f"[mypy]\nstrict = True\nmypy_path = {ROOT}\ncache_dir = {tmp_path / 'cache'}\n"
        "[mypy-pytest_textsim.*]\nfollow_imports = skip\n"
        "[mypy-pytest_textsim]\nfollow_imports = normal\n",
        encoding="utf-8",
    )
    out, err, _ = api.run([
        "--config-file", str(tmp_path / "mypy.ini"),
        str(tmp_path / "test_user.py"), str(tmp_path / "test_wrong.py"),
    ])  # fmt: skip
    errors = [
        re.sub(r"^.*?(test_\w+\.py)", r"\1", line)
        for line in out.splitlines()
        if ": error:" in line
    ]
    assert errors == [
        # assert_bleu is declared as BleuFixture's call: mypy names no function.
        'test_wrong.py:6: error: Unexpected keyword argument "smooth"; '
        'did you mean "smoothing"?  [call-arg]',
        'test_wrong.py:7: error: Unexpected keyword argument "weigths" for "__call__" of '
        '"BleuFixture"; did you mean "weights"?  [call-arg]',
        'test_wrong.py:8: error: Incompatible types in assignment (expression has type '
        '"Literal[\'pass\', \'fail\']", variable has type "int")  [assignment]',
        'test_wrong.py:9: error: Unexpected keyword argument "smooth" for "each" of '
        '"BleuFixture"; did you mean "smoothing"?  [call-arg]',
        'test_wrong.py:13: error: Unexpected keyword argument "rouge_typ" for "aeach" of '
        '"RougeFixture"; did you mean "rouge_type"?  [call-arg]',
        # A fixture records every score: score= is the helpers' (assert_each_rouge's).
        'test_wrong.py:14: error: Unexpected keyword argument "score" for "each" of '
        '"RougeFixture"  [call-arg]',
    ], out + err


def test_fixture_and_result_names_follow_the_fixture() -> None:
    bleu = next(m for m in package_metrics() if m.name == "bleu")
    assert (type_name(bleu, "Fixture"), type_name(bleu, "Result")) == ("BleuFixture", "BleuResult")
    from pytest_textsim.plugin.fixtures import MetricFixture

    # At run time a fixture's type is the class of what the fixture gives, its output a dict.
    assert pytest_textsim.BleuFixture is MetricFixture
    assert pytest_textsim.BleuResult is dict


def test_a_registered_metrics_helpers_have_signatures_and_plain_dict_outputs() -> None:
    from pytest_textsim.plugin.usermetrics import register_metric
    from pytest_textsim.settings.table import new_run

    def brevity(response: str, ground_truth: str) -> float:
        return 1.0

    run = new_run()  # a run of its own: the metric ends with it
    run.activate()
    register_metric("stub_probe", brevity)
    try:
        awaited = pytest_textsim.assert_stub_probe_async
        each = pytest_textsim.assert_each_stub_probe
        assert inspect.iscoroutinefunction(awaited)
        assert awaited.__name__ == "assert_stub_probe_async"
        texts = ["response", "ground_truth", "threshold"]
        assert list(inspect.signature(awaited).parameters) == texts
        assert list(inspect.signature(each).parameters)[:2] == texts[:2]
        # No TypedDict in the stub for it: its outputs are plain dicts.
        assert inspect.signature(awaited).return_annotation == "dict[str, Any]"
        assert inspect.signature(each).return_annotation == "list[dict[str, Any] | None]"
    finally:
        run.deactivate()


def test_a_submodule_imported_first_does_not_go_through_the_catalog() -> None:
    # "from . import catalog" asks the package for the attribute before importing
    # the submodule: the lazy exports must not import the plugin for it (a Dask
    # worker's first import is a module like engine.chunks).
    code = "import pytest_textsim.engine.chunks, sys; print('pytest_textsim.plugin' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"
