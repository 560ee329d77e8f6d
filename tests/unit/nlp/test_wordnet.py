"""The light WordNet lookup answers what NLTK's WordNet reader answers, word for word."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from lean_nltk import LEAN_NLTK

from pytest_textsim.nlp import algorithms
from pytest_textsim.nlp.evaluators import porter_stem
from pytest_textsim.nlp.tokenize import nltk_tokens
from pytest_textsim.nlp.wordnet import WordNet, default_wordnet

WORDNET_DIR = Path(os.environ["NLTK_DATA"]) / "corpora" / "wordnet"
PARITY_DIR = Path(__file__).resolve().parents[4] / "shared" / "parity"
EXTRA = Path(__file__).resolve().parents[2] / "data" / "parity_extra.jsonl"
SUFFIXES = ("s", "es", "ed", "ing", "er", "est", "ies", "ves", "men", "ches", "ly")
FILES = [f"{k}.{p}" for k in ("index", "data") for p in ("noun", "verb", "adj", "adv")] + [
    f"{p}.exc" for p in ("noun", "verb", "adj", "adv")
]


@pytest.fixture(scope="module")
def nltk_wordnet():
    from nltk.corpus import wordnet

    wordnet.ensure_loaded()
    return wordnet


@pytest.fixture(scope="module")
def light() -> WordNet:
    return WordNet(WORDNET_DIR)


def _texts() -> list[str]:
    texts = []
    for path in (PARITY_DIR / "corpus.jsonl", EXTRA):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                texts += [row["response"], row["ground_truth"]]
    return texts


def _words() -> list[str]:
    """Every token of both parity tables, lower-cased, stemmed and inflected, plus
    words from each exception list and odd inputs."""
    words = {w.lower() for text in _texts() for w in nltk_tokens(text)}
    words |= {porter_stem(w) for w in list(words)}
    words |= {w + s for w in sorted(words)[::10] for s in SUFFIXES}
    for pos in ("noun", "verb", "adj", "adv"):
        lines = (WORDNET_DIR / f"{pos}.exc").read_text(encoding="utf-8").splitlines()
        words |= {line.split()[0] for line in lines[::10]}
    words |= {"", " ", "a b", "GEESE", "Better", "don't", "é", "東京", "runs\n", "-", "'s"}
    return sorted(words)


def _nltk_names(wordnet, word: str) -> list[str]:
    return [lemma.name() for synset in wordnet.synsets(word) for lemma in synset.lemmas()]


@pytest.mark.nltk_wordnet
def test_lemma_names_equal_nltk_for_every_corpus_word(nltk_wordnet, light) -> None:
    words = _words()
    assert len(words) > 5000
    differ = [w for w in words if list(light.lemma_names(w)) != _nltk_names(nltk_wordnet, w)]
    assert not differ, f"{len(differ)} words differ, e.g. {differ[:10]}"


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        # exception list (noun.exc): geese -> goose, then every synset of "goose"
        ("geese", ["goose", "fathead", "goof", "goofball", "bozo", "jackass", "goose"]),
        # parts of speech in NLTK's order: the noun "better" before adj.exc's "good"
        ("better", ["better"]),
        ("xyzzyq", []),
    ],
)
def test_known_words(light, word, expected) -> None:
    assert list(light.lemma_names(word))[: len(expected)] == expected
    if not expected:
        assert light.lemma_names(word) == ()


def test_zip_archive_reads_the_same(tmp_path, light) -> None:
    archive = tmp_path / "wordnet.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zf:
        for name in FILES:
            zf.write(WORDNET_DIR / name, f"wordnet/{name}")
    zipped = WordNet(archive)
    for word in ("geese", "running", "happiest", "dogs", "quickly", "colour", "zzz"):
        assert zipped.lemma_names(word) == light.lemma_names(word)


def test_missing_database_names_the_path(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        WordNet(tmp_path)


def test_nltk_meteor_with_light_wordnet_equals_our_meteor(light) -> None:
    """NLTK's own meteor_score accepts the lookup in place of its reader."""
    from nltk.translate.meteor_score import meteor_score

    texts = _texts()[:400]
    for response, ground_truth in zip(texts[::2], texts[1::2]):
        hyp, ref = list(nltk_tokens(response)), list(nltk_tokens(ground_truth))
        ours = algorithms.meteor(hyp, ref, stem=porter_stem, synonyms=light.synonyms)
        assert meteor_score([ref], hyp, wordnet=light) == ours


def test_caches_are_bounded(light) -> None:
    light.synonyms("dogs")
    assert light.synonyms.cache_info().maxsize is not None
    light.cache_clear()
    assert light.synonyms.cache_info().currsize == 0


def test_meteor_does_not_load_nltks_wordnet_reader() -> None:
    """The cold-start fix: scoring METEOR never triggers NLTK's 4-second reader load."""
    code = (
        LEAN_NLTK + "import nltk\n"
        "from pytest_textsim import MeteorScoreEvaluator\n"
        "out = MeteorScoreEvaluator()(response='The geese ran fast', ground_truth='A goose runs')\n"
        "assert out['meteor_score'] > 0, out\n"
        "print(type(nltk.corpus.wordnet).__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "LazyCorpusLoader"


def test_default_wordnet_is_shared() -> None:
    assert default_wordnet() is default_wordnet()
    assert (default_wordnet().path / "index.noun").is_file() or default_wordnet().path.is_file()


def _tiny_wordnet(root: Path, index_noun: str, data_noun: str) -> Path:
    for name in FILES:
        (root / name).write_text("", encoding="utf-8")
    header = "  1 This is a license header line.\n"
    (root / "index.noun").write_text(header + index_noun, encoding="utf-8")
    (root / "data.noun").write_text(header + data_noun, encoding="utf-8")
    return root


def test_tiny_database_lookup_and_markers(tmp_path) -> None:
    head = "  1 This is a license header line.\n"
    offset = len(head.encode())
    data = f"{offset:08d} 05 n 02 cat(a) 0 true_cat 0 000 | a feline\n"
    index = f"cat n 1 0 1 0 {offset:08d}\ncats n 1 0 1 0 {offset:08d}\n"
    wn = WordNet(_tiny_wordnet(tmp_path, index, data))
    assert wn.lemma_names("CAT") == ("cat", "true_cat")
    assert wn.synonyms("cats") == frozenset({"cat", "cats"})
    assert wn.lemma_names("dog") == ()


def test_corrupt_database_names_file_and_offset(tmp_path) -> None:
    from pytest_textsim.nlp.wordnet import WordNetFormatError

    wn = WordNet(_tiny_wordnet(tmp_path, "cat n 1 0 1 0 00000005\n", "garbage line\n"))
    with pytest.raises(WordNetFormatError, match=r"data\.noun: no synset at offset 5"):
        wn.lemma_names("cat")
    assert str(tmp_path) in str(pytest.raises(WordNetFormatError, wn.lemma_names, "cat").value)


class _Lemma:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class _Synset:
    def __init__(self, names: list[str]) -> None:
        self._lemmas = [_Lemma(n) for n in names]

    def lemmas(self) -> list[_Lemma]:
        return self._lemmas


class _TableWordNet:
    """A WordNet stand-in NLTK's meteor_score accepts: random synonym groups, some of
    them larger than a text's vocabulary, so both lookups of the synonym stage run."""

    def __init__(self, vocabulary: list[str], rng: random.Random) -> None:
        self.groups: dict[str, list[list[str]]] = {}
        for word in vocabulary:
            size = rng.choice((0, 1, 3, 40))
            self.groups[word] = [rng.sample(vocabulary, size)] if size else []

    def synsets(self, word: str) -> list[_Synset]:
        return [_Synset(group) for group in self.groups.get(word, [])]

    def synonyms(self, word: str) -> frozenset[str]:
        return frozenset(n for g in self.groups.get(word, []) for n in g) | {word}


@pytest.mark.parametrize("seed", range(4))
def test_the_synonym_stage_equals_nltks_on_synonym_heavy_texts(seed: int) -> None:
    from nltk.translate.meteor_score import meteor_score

    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(60)]
    table = _TableWordNet(vocabulary, rng)
    for _ in range(150):
        hyp = rng.choices(vocabulary, k=rng.randint(1, 30))
        ref = rng.choices(vocabulary, k=rng.randint(1, 30))
        ours = algorithms.meteor(hyp, ref, stem=lambda w: w, synonyms=table.synonyms)

        class _Identity:
            def stem(self, word: str) -> str:
                return word

        assert meteor_score([ref], hyp, stemmer=_Identity(), wordnet=table) == ours
