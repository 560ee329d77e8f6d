"""One root error: every exception class of the package derives from TextsimError.

The walk imports every module of the package and looks at each class it
defines, private ones included (an internal error that escapes is still ours).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import pytest_textsim
from pytest_textsim.errors import TextsimError, TextsimWarning

# Raised through a user's ``except Exception`` on purpose (a replay miss must
# fail the test, not be swallowed by the app's error handling), so it cannot
# derive from TextsimError, which is an Exception.
# A Ctrl-C while a judge batch runs stays a KeyboardInterrupt (it carries the batch
# to resume), so that code which stops on Ctrl-C stops on it too.
NOT_EXCEPTIONS = {
    "pytest_textsim.replay.recorder.ReplayMiss",
    "pytest_textsim.judge.batch.BatchInterrupted",
}


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception and warning class defined in the package, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    prefix = pytest_textsim.__name__ + "."
    modules = [pytest_textsim] + [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(pytest_textsim.__path__, prefix)
    ]
    for module in modules:
        for _, cls in inspect.getmembers(module, inspect.isclass):
            # A class may name the package as its module (as users import it).
            ours = cls.__module__ == pytest_textsim.__name__ or cls.__module__.startswith(prefix)
            if issubclass(cls, BaseException) and ours:
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


def test_every_error_of_the_package_derives_from_textsim_error() -> None:
    classes = exception_classes()
    # The walk sees errors of every layer, not only the bottom module's.
    assert {
        "pytest_textsim.errors.ConfigError",
        "pytest_textsim.judge.errors.JudgeError",
        "pytest_textsim.gating.expressions.GateError",
        "pytest_textsim.plugin.cases.CasesError",
        "pytest_textsim.ScoreFunctionError",
        *NOT_EXCEPTIONS,
    } <= set(classes)
    errors = {n: c for n, c in classes.items() if not issubclass(c, Warning)}
    stray = sorted(
        n for n, c in errors.items() if n not in NOT_EXCEPTIONS and not issubclass(c, TextsimError)
    )
    assert not stray, "errors not derived from TextsimError:\n" + "\n".join(stray)
    assert not [n for n in NOT_EXCEPTIONS if issubclass(classes[n], Exception)]
    warnings = {n: c for n, c in classes.items() if issubclass(c, Warning)}
    assert warnings, "the walk found no warning class"
    assert not [n for n, c in warnings.items() if not issubclass(c, TextsimWarning)]


@pytest.mark.parametrize(
    ("name", "builtin"),
    [
        ("pytest_textsim.errors.ConfigError", ValueError),
        ("pytest_textsim.errors.MetricUnavailable", RuntimeError),
        ("pytest_textsim.jsonl.JsonlError", ValueError),
        ("pytest_textsim.gating.expressions.GateError", ValueError),
        ("pytest_textsim.gating.baseline.BaselineError", ValueError),
        ("pytest_textsim.replay.cassette.CassetteError", ValueError),
        ("pytest_textsim.nlp.nltk_data.NltkDataError", LookupError),
        ("pytest_textsim.judge.model_calls.HubUnavailable", OSError),
        ("pytest_textsim.judge.wiring.JudgeUnavailable", RuntimeError),
        ("pytest_textsim.ScoreFunctionError", RuntimeError),
    ],
)
def test_errors_keep_the_builtin_base_users_catch(name: str, builtin: type[Exception]) -> None:
    assert issubclass(exception_classes()[name], builtin)


def test_one_except_catches_the_package_errors_in_a_users_test(
    pytester: pytest.Pytester, dead_url: str
) -> None:
    pytester.makepyfile(
        f"""
        import pytest
        import pytest_textsim
        from pytest_textsim import SimilarityEvaluator, TextsimError
        from pytest_textsim.judge.client import JudgeOptions

        def test_judge_down():
            judge = SimilarityEvaluator(
                {{"model": "m", "base_url": "{dead_url}", "api_key": "sk-test"}},
                options=JudgeOptions(timeout=2, max_attempts=1),
            )
            with pytest.raises(TextsimError, match="failed after 1 attempt"):
                judge(response="Paris.", ground_truth="Paris.")

        def test_bad_cases_file(tmp_path):
            path = tmp_path / "cases.jsonl"
            path.write_text('{{"response": "a"}}\\nnot json\\n')
            try:
                pytest_textsim.jsonl_cases(str(path))
            except TextsimError as error:
                assert isinstance(error, ValueError) and "cases.jsonl:2" in str(error)
            else:
                raise AssertionError("no error")
        """
    )
    result = pytester.runpytest("-p", "no:xdist")
    result.assert_outcomes(passed=2)
