"""The references' options end to end: marker, fixtures, helpers, textsim score, score_batch.

Each option reaches the evaluator from every place a user can give it and is
recorded as a parameter, so a baseline never compares two configurations.
Expected scores come from the reference libraries themselves.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from nltk.translate.gleu_score import sentence_gleu

from pytest_textsim import score_batch
from pytest_textsim.cli import main
from pytest_textsim.nlp.tokenize import nltk_tokens

RESPONSE = "The quick brown fox jumps over the dog."
TRUTH = "A quick brown fox jumped over the lazy dog."


def _bleu(response: str, truth: str, weights: tuple[float, ...] = (0.25,) * 4,
          method: int = 4, auto_reweigh: bool = False) -> float:  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(sentence_bleu(
            [list(nltk_tokens(truth))], list(nltk_tokens(response)), weights,
            smoothing_function=getattr(SmoothingFunction(), f"method{method}"),
            auto_reweigh=auto_reweigh,
        ))  # fmt: skip


def _gleu(response: str, truth: str, min_len: int = 1, max_len: int = 4) -> float:
    return float(sentence_gleu(
        [list(nltk_tokens(truth))], list(nltk_tokens(response)), min_len, max_len
    ))  # fmt: skip


def _scores(path: Path) -> dict[tuple[str, str], dict[str, object]]:
    rows = json.loads(path.read_text())["scores"]
    return {(s["test_id"].split("::")[1], s["metric"]): s for s in rows}


@pytest.mark.parametrize("plugin_args", [["-p", "no:xdist"]], ids=["no-xdist"])
def test_bleu_and_gleu_options_in_pytest(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(
        test_opts=f"""
        import pytest
        from pytest_textsim import assert_bleu, assert_gleu

        R, T = {RESPONSE!r}, {TRUTH!r}

        def test_default(bleu, gleu):
            assert bleu(R, T)["bleu_score"] == {_bleu(RESPONSE, TRUTH)!r}
            assert gleu(R, T)["gleu_score"] == {_gleu(RESPONSE, TRUTH)!r}

        @pytest.mark.textsim(weights=(1,), smoothing=0, min_len=2, max_len=3)
        def test_marker(bleu, gleu):
            assert bleu(R, T)["bleu_score"] == {_bleu(RESPONSE, TRUTH, (1,), 0)!r}
            assert gleu(R, T)["gleu_score"] == {_gleu(RESPONSE, TRUTH, 2, 3)!r}

        def test_helper():
            out = assert_bleu("John loves Mary", "John loves Mary", weights=(1,))
            assert out["bleu_score"] == 1.0
            assert_bleu(R, T, smoothing="method7", threshold=0.0)
            assert_gleu(R, T, max_len=1, threshold=0.0)

        def test_fixture_option(bleu):
            out = bleu("cat", "cat", auto_reweigh=True, smoothing=1)
            assert out["bleu_score"] == {_bleu("cat", "cat", method=1, auto_reweigh=True)!r}

        @pytest.mark.textsim(smoothing=9)
        def test_bad_marker(bleu):
            bleu(R, T)
        """
    )
    result = run_plugin("--textsim-json=scores.json")
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(
        ["*test_bad_marker*option 'smoothing': expected an NLTK smoothing method 0-7 "
         "(or method0-method7), got 9*"]
    )  # fmt: skip
    scores = _scores(pytester.path / "scores.json")
    # Defaults record what they always did: older baselines stay comparable.
    assert scores[("test_default", "bleu_score")]["params"] == {}
    assert scores[("test_default", "gleu_score")]["params"] == {}
    assert scores[("test_marker", "bleu_score")]["params"] == {"weights": [1.0], "smoothing": 0}
    assert scores[("test_marker", "gleu_score")]["params"] == {"min_len": 2, "max_len": 3}
    assert scores[("test_fixture_option", "bleu_score")]["params"] == {
        "auto_reweigh": True, "smoothing": 1,
    }  # fmt: skip


def test_bleu_options_in_textsim_score_and_score_batch(tmp_path: Path) -> None:
    rows = [{"response": RESPONSE, "ground_truth": TRUTH}, {"response": "", "ground_truth": "a"}]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    rc = main(["score", str(data), "-m", "bleu_score", "-m", "gleu_score",
               "--option", "bleu.weights=0.5,0.5", "--option", "bleu.smoothing=2",
               "--option", "gleu.min_len=2", "-o", str(out)])  # fmt: skip
    assert rc == 0
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert scored[0]["bleu_score"] == _bleu(RESPONSE, TRUTH, (0.5, 0.5), 2)
    assert scored[0]["gleu_score"] == _gleu(RESPONSE, TRUTH, 2, 4)
    assert scored[1]["bleu_score"] == 0.0

    batch = score_batch(rows, ["bleu_score", "gleu_score"],
                        options={"bleu_score": {"weights": (0.5, 0.5), "smoothing": 2},
                                 "gleu": {"min_len": 2}})  # fmt: skip
    assert [r["bleu_score"] for r in batch] == [s["bleu_score"] for s in scored]
    assert [r["gleu_score"] for r in batch] == [s["gleu_score"] for s in scored]
    with pytest.raises(ValueError, match="option 'auto_reweigh': expected"):
        score_batch(rows, ["bleu_score"], options={"bleu_score": {"auto_reweigh": "maybe"}})


def _rouge(rouge_type: str, response: str, truth: str, **options: bool) -> float:
    from rouge_score.rouge_scorer import RougeScorer

    return float(RougeScorer([rouge_type], **options).score(truth, response)[rouge_type].fmeasure)


SUMMARY = "The cats were running home.\nIt rained. Mr. Smith left."
SUMMARY_TRUTH = "It rained.\nThe cat ran home. Mr. Smith left early."


@pytest.mark.parametrize("plugin_args", [["-p", "no:xdist"]], ids=["no-xdist"])
def test_rouge_options_in_pytest_and_textsim_score(
    pytester: pytest.Pytester, run_plugin, tmp_path: Path
) -> None:
    stemmed = _rouge("rouge1", SUMMARY, SUMMARY_TRUTH, use_stemmer=True)
    lsum = _rouge("rougeLsum", SUMMARY, SUMMARY_TRUTH, use_stemmer=True, split_summaries=True)
    assert stemmed != _rouge("rouge1", SUMMARY, SUMMARY_TRUTH)  # the option changes the score
    pytester.makepyfile(
        test_rouge_opts=f"""
        import pytest
        from pytest_textsim import assert_rouge

        R, T = {SUMMARY!r}, {SUMMARY_TRUTH!r}

        @pytest.mark.textsim(use_stemmer=True)
        def test_marker(rouge):
            assert rouge(R, T, rouge_type="rouge1")["rouge_f1_score"] == {stemmed!r}

        def test_helper():
            out = assert_rouge(R, T, rouge_type="rougeLsum", use_stemmer=True,
                               split_summaries=True, threshold=0.0)
            assert out["rouge_f1_score"] == {lsum!r}
            assert_rouge(R, T, rouge_type="rouge9", threshold=0.0)
        """
    )
    result = run_plugin("--textsim-json=scores.json")
    result.assert_outcomes(passed=2)
    scores = json.loads((pytester.path / "scores.json").read_text())["scores"]
    params = [s["params"] for s in scores]
    assert {"rouge_type": "rouge1", "use_stemmer": True} in params
    assert {"rouge_type": "rougeLsum", "use_stemmer": True, "split_summaries": True} in params
    assert {"rouge_type": "rouge9"} in params

    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"response": SUMMARY, "ground_truth": SUMMARY_TRUTH}) + "\n")
    out = tmp_path / "out.jsonl"
    rc = main(["score", str(data), "-m", "rouge_score:rougeLsum", "--option",
               "rouge.use_stemmer=yes", "--option", "rouge.split_summaries=true",
               "-o", str(out)])  # fmt: skip
    assert rc == 0
    row = json.loads(out.read_text())
    assert [v for k, v in row.items() if k.endswith("f1_score")] == [lsum]


def _sacre(response: str, truths: list[str], **options: object) -> float:
    import sacrebleu

    if options.pop("effective_order", True):
        return float(sacrebleu.sentence_bleu(response, truths, **options).score) / 100.0
    return float(sacrebleu.corpus_bleu([response], [[t] for t in truths], **options).score) / 100.0


def _chrf(response: str, truth: str, **options: object) -> float:
    import sacrebleu

    return float(sacrebleu.sentence_chrf(response, [truth], **options).score) / 100.0


@pytest.mark.parametrize("plugin_args", [["-p", "no:xdist"]], ids=["no-xdist"])
def test_sacrebleu_and_chrf_options_in_pytest(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(
        test_sacre_opts=f"""
        import pytest
        from pytest_textsim import assert_each_sacrebleu, assert_sacrebleu

        R, T = {RESPONSE!r}, {TRUTH!r}

        def test_default(sacrebleu, chrf):
            out = sacrebleu(R, [T, R])
            assert out["sacrebleu_score"] == {_sacre(RESPONSE, [TRUTH, RESPONSE])!r}
            assert chrf(R, T, eps_smoothing=True)["chrf_score"] == {
                _chrf(RESPONSE, TRUTH, eps_smoothing=True)!r}

        @pytest.mark.textsim(tokenize="char", smooth_method="floor", smooth_value=0.5,
                             lowercase=True, effective_order=False, threshold=0.0)
        def test_marker(sacrebleu):
            assert sacrebleu(R, T)["sacrebleu_score"] == {_sacre(
                RESPONSE, [TRUTH], tokenize="char", smooth_method="floor", smooth_value=0.5,
                lowercase=True, effective_order=False)!r}

        def test_helpers():
            out = assert_sacrebleu(R, T, tokenize="intl", threshold=0.0)
            assert out["sacrebleu_score"] == {_sacre(RESPONSE, [TRUTH], tokenize="intl")!r}
            assert_each_sacrebleu([R, R], [T, [T, R]], smooth_method="none", threshold=0.0)

        def test_fails():
            assert_sacrebleu(R, T)

        @pytest.mark.textsim(tokenize="ja-mecab")
        def test_bad_marker(sacrebleu):
            sacrebleu(R, T)
        """
    )
    result = run_plugin("--textsim-json=scores.json")
    result.assert_outcomes(passed=3, failed=1, errors=1)
    result.stdout.fnmatch_lines([
        "*test_bad_marker*option 'tokenize': expected one of 13a, none, intl, char, zh, "
        "got 'ja-mecab'*",
        "*AssertionError: sacreBLEU 0.233 < threshold 0.500 (default; set "
        "textsim_threshold_sacrebleu or threshold=)",
    ])  # fmt: skip
    scores = _scores(pytester.path / "scores.json")
    defaults = {"tokenize": "13a", "smooth_method": "exp", "lowercase": False,
                "effective_order": True, "max_ngram_order": 4}  # fmt: skip
    # A new metric records every option, the defaults too.
    assert scores[("test_default", "sacrebleu_score")]["params"] == defaults
    assert scores[("test_default", "chrf_score")]["params"] == {
        "char_order": 6, "word_order": 0, "beta": 2, "lowercase": False, "whitespace": False,
        "eps_smoothing": True,
    }  # fmt: skip
    assert scores[("test_marker", "sacrebleu_score")]["params"] == {
        **defaults, "tokenize": "char", "smooth_method": "floor", "smooth_value": 0.5,
        "lowercase": True, "effective_order": False,
    }  # fmt: skip


def test_sacrebleu_options_in_textsim_score_and_score_batch(tmp_path: Path) -> None:
    rows = [{"response": RESPONSE, "ground_truth": [TRUTH, "A fox."]},
            {"response": "", "ground_truth": "a"}]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    rc = main(["score", str(data), "-m", "sacrebleu_score", "-m", "chrf",
               "--option", "sacrebleu.tokenize=intl", "--option", "sacrebleu.smooth_method=add-k",
               "--option", "sacrebleu.smooth_value=2", "--option", "chrf.eps_smoothing=yes",
               "-o", str(out)])  # fmt: skip
    assert rc == 0
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    expected = _sacre(RESPONSE, [TRUTH, "A fox."], tokenize="intl", smooth_method="add-k",
                      smooth_value=2)  # fmt: skip
    assert scored[0]["sacrebleu_score"] == expected
    assert scored[1]["sacrebleu_score"] == 0.0
    batch = score_batch(rows, ["sacrebleu_score"], options={"sacrebleu": {
        "tokenize": "intl", "smooth_method": "add-k", "smooth_value": 2}})  # fmt: skip
    assert [r["sacrebleu_score"] for r in batch] == [s["sacrebleu_score"] for s in scored]
    with pytest.raises(ValueError, match="option 'effective_order': expected true or false"):
        score_batch(rows, ["sacrebleu_score"], options={"sacrebleu": {"effective_order": "?"}})


CORPUS_SUITE = """
import pytest
from pytest_textsim import assert_chrf

CASES = [("The cat sat on the mat.", "The cat sat on the mat."),
         ("A DOG RAN HOME", "the dog ran home quickly"),
         ("It rained, then it stopped.", ["It rained and stopped.", "Rain, then none."])]

@pytest.mark.parametrize(("response", "truth"), CASES)
def test_case(response, truth):
    assert_chrf(response, truth, threshold=0.0)
"""


def _corpus(name: str, **options: object) -> float:
    from sacrebleu.metrics import BLEU, TER

    from pytest_textsim.nlp.sacre import reference_streams

    hyps = ["The cat sat on the mat.", "A DOG RAN HOME", "It rained, then it stopped."]
    refs: list[object] = ["The cat sat on the mat.", "the dog ran home quickly",
                          ["It rained and stopped.", "Rain, then none."]]  # fmt: skip
    metric = {"corpus_bleu": BLEU, "corpus_ter": TER}[name](**options)  # type: ignore[arg-type]
    return float(metric.corpus_score(hyps, reference_streams(refs)).score)  # type: ignore[arg-type]


@pytest.mark.parametrize("plugin_args", [["-p", "no:xdist"]], ids=["no-xdist"])
def test_corpus_gates_take_sacrebleus_options(pytester: pytest.Pytester, run_plugin) -> None:
    plain, lowered = _corpus("corpus_bleu"), _corpus("corpus_bleu", lowercase=True, tokenize="intl")
    ter = _corpus("corpus_ter", case_sensitive=True)
    assert plain != lowered
    pytester.makepyfile(test_corpus=CORPUS_SUITE)
    result = run_plugin(
        "--textsim-gate", "sacrebleu.corpus_bleu.score >= 0",
        "--textsim-gate", "sacrebleu.corpus_bleu[lowercase=yes, tokenize=intl].score >= 0",
        "--textsim-gate", "sacrebleu.corpus_ter[test=*test_case*, case_sensitive=true].score <= 99",
        "--textsim-save-baseline=base.json",
    )  # fmt: skip
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([
        f"PASS sacrebleu.corpus_bleu.score >= 0: {plain:.4f} (3 pairs) [[]nrefs:var|case:mixed|*",
        f"PASS sacrebleu.corpus_bleu[[]lowercase=yes, tokenize=intl[]].score >= 0: {lowered:.4f}"
        " (3 pairs) [[]nrefs:var|case:lc|eff:no|tok:intl|*",
        f"PASS sacrebleu.corpus_ter[[]*[]].score <= 99: {ter:.4f} (3 pairs) "
        "[[]nrefs:var|case:mixed|*",
    ])  # fmt: skip
    # Each configuration's sentence statistics are kept apart in the baseline.
    corpus = json.loads((pytester.path / "base.json").read_text())["corpus"]
    assert sorted(corpus) == [
        "corpus_bleu", "corpus_bleu[lowercase=yes,tokenize=intl]", "corpus_ter[case_sensitive=true]"
    ]  # fmt: skip
    assert "|case:lc|" in corpus["corpus_bleu[lowercase=yes,tokenize=intl]"]["signature"]

    result = run_plugin("--textsim-gate", "sacrebleu.corpus_bleu[tokenize=ja-mecab].score >= 0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*invalid gate*tokenize must be one of 13a, none, intl, char, zh,"
                                 " got 'ja-mecab'*"])  # fmt: skip


def test_corpus_gate_options_in_textsim_score(tmp_path: Path, capsys) -> None:
    rows = [
        {"response": "A DOG RAN HOME", "ground_truth": "the dog ran home quickly"},
        {"response": "The cat sat.", "ground_truth": ["The cat sat.", "A cat sat."]},
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rc = main(["score", str(data), "-m", "chrf", "-o", str(tmp_path / "out.jsonl"),
               "--gate", "sacrebleu.corpus_bleu[lowercase=true,smooth_method=floor].score >= 0",
               "--gate", "sacrebleu.corpus_bleu.score >= 0"])  # fmt: skip
    assert rc == 0
    from sacrebleu.metrics import BLEU

    hyps, streams = ["A DOG RAN HOME", "The cat sat."], [
        ["the dog ran home quickly", "The cat sat."], [None, "A cat sat."]]  # fmt: skip
    lowered = BLEU(lowercase=True, smooth_method="floor").corpus_score(hyps, streams).score
    plain = BLEU().corpus_score(hyps, streams).score
    out = capsys.readouterr().out
    gate = "sacrebleu.corpus_bleu[lowercase=true,smooth_method=floor].score >= 0"
    assert f"PASS {gate}: {lowered:.4f}" in out
    assert f"PASS sacrebleu.corpus_bleu.score >= 0: {plain:.4f}" in out


def test_corpus_options_in_a_baseline_comparison() -> None:
    from pytest_textsim.gating import baseline
    from pytest_textsim.gating.compare import compare
    from pytest_textsim.records import ScoreRecord

    def records(drop: bool) -> list[ScoreRecord]:
        out = []
        for i in range(30):
            truth = f"The quick brown fox number {i} jumps over the lazy dog"
            response = f"a fox {i} sleeps" if drop and i % 2 else truth.upper()
            out.append(ScoreRecord("chrf", "chrf_score", 0.5, None, None, nodeid=f"t::{i:02d}",
                                   texts={"response": response, "ground_truth": truth}))
        return out

    spec = "corpus_bleu[lowercase=true]"
    old, new = records(False), records(True)
    comparison = compare(
        baseline.entries_from_records(old), baseline.entries_from_records(new),
        significance=0.05,
        old_corpus=baseline.corpus_statistics(old, [spec]),
        new_corpus=baseline.corpus_statistics(new, [spec]),
    )  # fmt: skip
    corpus = next(t for t in comparison.metric_tests if t.metric.startswith("sacrebleu."))
    # Lowercased, the upper-case responses match: 100 before the drop.
    assert corpus.metric == f"sacrebleu.{spec}.score" and corpus.old == pytest.approx(100.0)
    assert corpus.new < 60 and corpus.verdict(0.05) == "REGRESSION"
