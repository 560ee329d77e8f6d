"""Missing NLTK data: the fix names every package the metrics read that is missing.

A machine without NLTK data gets one download command for all of them, in the
failing test and from ``textsim score``, not one error (and one download) per
package as each metric first needs it. Subprocesses, so nothing found earlier in
this process counts.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import xdist_forks

FIX = "  - download them: python -m nltk.downloader punkt_tab perluniprops wordnet"


@pytest.fixture
def no_nltk_data(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """An empty NLTK_DATA, a HOME without ~/nltk_data, no system WordNet, downloads off."""
    empty, home = pytester.mkdir("empty"), pytester.mkdir("home")
    monkeypatch.setenv("NLTK_DATA", str(empty))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TEXTSIM_NLTK_DOWNLOAD", "never")
    monkeypatch.setenv("WNSEARCHDIR", str(empty))
    monkeypatch.delenv("WNHOME", raising=False)
    return pytester


def test_a_bleu_test_is_told_to_fetch_every_missing_package(no_nltk_data: pytest.Pytester) -> None:
    no_nltk_data.makepyfile(
        test_data="""
        def test_bleu(bleu):
            bleu("The cat sat on the mat.", "The cat sat on the mat.")
        """
    )
    result = xdist_forks.runpytest_subprocess(
        no_nltk_data, "-p", "no:cacheprovider", "-p", "no:xdist"
    )
    result.assert_outcomes(failed=1)  # passing means NLTK data was found system-wide
    result.stdout.fnmatch_lines(
        [
            "bleu: NLTK data punkt_tab (tokenizers/punkt_tab) is missing; *",
            "  Also missing, for other metrics: perluniprops (misc/perluniprops) for "
            "tokenizing non-ASCII text (NISTTokenizer); wordnet (corpora/wordnet) for "
            "synonym matching in METEOR.",
            "Fix it one of these ways:",
            FIX,
        ]
    )


def test_textsim_score_says_the_same(no_nltk_data: pytest.Pytester) -> None:
    rows = no_nltk_data.path / "rows.jsonl"
    rows.write_text('{"response": "The cat sat.", "ground_truth": "The cat sat."}\n')
    result = subprocess.run(
        [str(Path(sys.executable).with_name("textsim")), "score", str(rows), "-m", "bleu"],
        cwd=no_nltk_data.path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"textsim: error: {FIX}" in result.stderr.splitlines()
