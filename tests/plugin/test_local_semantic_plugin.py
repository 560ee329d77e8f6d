"""assert_semantic in a pytest run with no server configured: the local model's
vectors, the default threshold for them, and the vector cache on the second run."""

from __future__ import annotations

import socket

import pytest

SUITE = '''
import pytest
from pytest_textsim import assert_semantic

PAIRS = [
    ("Paris is the capital of France.", "The capital of France is Paris.", True),
    ("The meeting was moved to Friday.", "They moved the meeting to Friday.", True),
    ("Paris is the capital of France.", "Spiders have eight legs.", False),
    ("Your refund was sent today.", "The weather is sunny in Lisbon.", False),
]


@pytest.mark.parametrize(("response", "truth", "similar"), PAIRS)
def test_pair(response, truth, similar):
    assert_semantic(response, truth)
'''


def test_assert_semantic_with_no_server_passes_and_fails_the_right_cases(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    def refuse(self: socket.socket, address: object) -> None:
        raise AssertionError(f"a network connection was attempted: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    for name in ("OPENAI_API_KEY", "TEXTSIM_EMBEDDING_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_semantic=SUITE)
    first = pytester.runpytest("-p", "no:cacheprovider")
    first.assert_outcomes(passed=2, failed=2)
    # The similar pairs pass, the unrelated ones fail, at the local model's threshold.
    first.stdout.fnmatch_lines_random([
        "*Paris is the capital*Paris.-True]*semantic_similarity*0.500*pass*passed",
        "*The meeting was moved*-True]*semantic_similarity*0.500*pass*passed",
        "*Spiders have eight legs.-False]*semantic_similarity*0.500*FAIL*failed",
        "*Lisbon.-False]*semantic_similarity*0.500*FAIL*failed",
        "*semantic_similarity * < threshold 0.500 (default; set "
        "textsim_threshold_semantic_similarity or threshold=)",
        "embeddings: 4 requests for 7 texts, 0 cache hits*",  # one a test
        # The model is named beside the metric: its scores are kept apart from a remote one's.
        "semantic_similarity (local: wordllama l2 256d) * 4 * 50% (2/4)",
    ])  # fmt: skip
    second = pytester.runpytest("-p", "no:cacheprovider")
    second.assert_outcomes(passed=2, failed=2)
    second.stdout.fnmatch_lines(["embeddings: 0 requests for 0 texts, 7 cache hits*"])
