"""The nltk-free scoring path: Punkt, Treebank, NIST and Porter ported from nltk 3.10.4.

Two kinds of test:

- differential: our code against NLTK itself on bounded samples (WordNet glosses
  and examples, the parity texts, generated prose full of abbreviations, initials,
  numbers, ellipses, quotes, brackets and newlines; every n-th WordNet lemma for
  the stemmer). They compare only against nltk 3.10.x, the version ported; on
  another nltk (3.9 on Python 3.9) they skip, and the tables of exact values and
  ``tests/test_parity.py`` still check our 3.10.4 behaviour;
- behaviour: scoring imports no nltk; model files read from a zip equal those
  read from a directory; the data search path is NLTK's.

The full differential run (323,662 texts, 541,230 words) is described in the
README's "NLTK data" section.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest
from lean_nltk import LEAN_NLTK

from pytest_textsim.nlp.porter import porter_stem
from pytest_textsim.nlp.punkt import PunktSentenceTokenizer, load_punkt_params
from pytest_textsim.nlp.tokenize import nltk_tokens

SHARED = Path(__file__).resolve().parents[4] / "shared"
NLTK_DATA = SHARED / "nltk_data"
PUNKT_DIR = NLTK_DATA / "tokenizers" / "punkt_tab"
EXTRA = Path(__file__).resolve().parents[2] / "data" / "parity_extra.jsonl"

NLTK_310 = version("nltk").startswith("3.10.")
needs_nltk_310 = pytest.mark.skipif(
    not NLTK_310, reason=f"ported from nltk 3.10.4; nltk {version('nltk')} behaves differently"
)

PIECES = [
    *"Dr. Mr. Mrs. U.S. e.g. i.e. etc. J. R.R. No. St. vs. Inc. Jan. a.m. p.m. al. fig.".split(),
    *"Fig. op. cit. U.K. Ph.D. 3.14 1,000. $5. 1. 2. iii. A. b. x . .. ... . . .".split(" "),
    *["?", "!", "!!!", '"', "'", "''", "``", "(", ")", "[", "]", "{", "}", "--", "-", ";"],
    *[":", ",", '"Hello."', "(See above.)", "The", "the", "cat", "Sat", "is", "It", "He"],
    *["she", "went", "home.", "Paris.", "can't", "won't", "I'm", "gonna", "cannot"],
    *["O'Neil", "\n", "\n\n", "\t", "  ", "«", "»", "“", "”", "‘", "’"],
]


def generated_texts(count: int, seed: int = 0) -> list[str]:
    """Random prose made of the pieces Punkt and Treebank decide on."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 40)):
            parts.append(rng.choice(PIECES))
            parts.append(rng.choice([" ", " ", " ", "", "\n", " \n "]))
        texts.append("".join(parts))
    return texts


def wordnet_texts(every: int) -> list[str]:
    """Glosses and their examples from every ``every``-th line of WordNet's data files."""
    texts = []
    for path in sorted((NLTK_DATA / "corpora" / "wordnet").glob("data.*")):
        with path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh):
                if number % every or line.startswith("  ") or "|" not in line:
                    continue
                gloss = line.split("|", 1)[1].strip()
                texts.append(gloss)
                texts += [p.strip().strip('"') for p in gloss.split(";") if p.strip()]
    return texts


def parity_texts() -> list[str]:
    texts = []
    for path in (SHARED / "parity" / "corpus.jsonl", EXTRA):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                texts += [row[k] for k in ("response", "ground_truth") if isinstance(row[k], str)]
    return texts


@pytest.fixture(scope="module")
def sample() -> list[str]:
    return wordnet_texts(every=40) + parity_texts() + generated_texts(1500)


@pytest.fixture(autouse=True)
def _nltk_without_regex_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """nltk 3.10 runs each of its regular expressions under a time limit
    (``nltk.redos``), which only ever raises on a pathological pattern: the
    references here are the same without it, and take less system time."""
    try:
        from nltk import redos
    except ImportError:  # nltk before 3.10
        return
    monkeypatch.setattr(redos, "DEFAULT_TIMEOUT", None)


@pytest.fixture(scope="module")
def punkt() -> PunktSentenceTokenizer:
    return PunktSentenceTokenizer(load_punkt_params(PUNKT_DIR / "english"))


# -- exact values (any nltk) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Dr. Smith went home. He slept.", ["Dr. Smith went home.", "He slept."]),
        # "p.m." is a known abbreviation and "Then" no sure sentence starter: no break.
        ("It cost $5.50 at 3 p.m. Then we left.", ["It cost $5.50 at 3 p.m. Then we left."]),
        (
            "It was 5 p.m. He left. Mr. Brown stayed.",
            ["It was 5 p.m.", "He left.", "Mr. Brown stayed."],
        ),
        ("J. R. R. Tolkien wrote it.", ["J. R. R. Tolkien wrote it."]),
        ('He said "Stop." Then left.', ['He said "Stop."', "Then left."]),
        ("(Sent one.) Sent two.", ["(Sent one.)", "Sent two."]),
        ("Wait... what?! No way!!!", ["Wait...", "what?!", "No way!!", "!"]),
        ("No ending here", ["No ending here"]),
        ("", []),
        ("  \n ", []),
    ],
)
def test_punkt_splits(punkt: PunktSentenceTokenizer, text: str, sentences: list[str]) -> None:
    assert punkt.tokenize(text) == sentences


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("Running", "run"),
        ("generously", "gener"),
        ("skies", "sky"),
        ("dying", "die"),
        ("news", "news"),
        ("relational", "relat"),
        ("conditional", "condit"),
        ("is", "is"),
        ("ÉTÉS", "été"),
    ],
)
def test_porter_stems(word: str, stem: str) -> None:
    assert porter_stem(word) == stem


def test_xml_unescape_equals_saxutils() -> None:
    from xml.sax.saxutils import unescape

    from pytest_textsim.nlp.tokenize import _MOSES_ENTITIES, xml_unescape

    rng = random.Random(1)
    pieces = ["&", "amp;", "lt;", "gt;", "apos;", "quot;", "#124;", "#91;", "#93;", "a", ";"]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert xml_unescape(text) == unescape(text, entities=_MOSES_ENTITIES), text


# -- differential: against nltk 3.10.x ---------------------------------------------


@needs_nltk_310
def test_punkt_params_equal_nltks() -> None:
    from nltk.tokenize.punkt import PunktTokenizer

    theirs = PunktTokenizer("english")._params
    ours = load_punkt_params(PUNKT_DIR / "english")  # unused: lookups add to ortho_context
    assert ours.abbrev_types == theirs.abbrev_types
    assert ours.collocations == theirs.collocations
    assert ours.sent_starters == theirs.sent_starters
    assert dict(ours.ortho_context) == dict(theirs.ortho_context)


@needs_nltk_310
def test_punkt_splits_equal_nltks(punkt: PunktSentenceTokenizer, sample: list[str]) -> None:
    from nltk.tokenize.punkt import PunktTokenizer

    theirs = PunktTokenizer("english")
    differ = [t for t in sample if punkt.tokenize(t) != theirs.tokenize(t)]
    assert len(sample) > 5000
    assert differ == []


@needs_nltk_310
def test_tokens_equal_nltks(sample: list[str]) -> None:
    import nltk
    from nltk.tokenize.nist import NISTTokenizer
    from nltk.tokenize.util import xml_unescape as nltk_xml_unescape

    from pytest_textsim.nlp.tokenize import xml_unescape

    nist = NISTTokenizer()
    assert all(xml_unescape(t) == nltk_xml_unescape(t) for t in sample)

    def theirs(text: str) -> list[str]:
        if text.isascii():
            return nltk.word_tokenize(text)
        return nist.international_tokenize(text)

    differ = [t for t in sample if list(nltk_tokens(t)) != theirs(t)]
    assert sum(not t.isascii() for t in sample) > 100
    assert differ == []


@needs_nltk_310
def test_porter_stems_equal_nltks(sample: list[str]) -> None:
    from nltk.stem.porter import PorterStemmer

    words: set[str] = set()
    for path in (NLTK_DATA / "corpora" / "wordnet").glob("index.*"):
        with path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh):
                if number % 15 == 0 and not line.startswith(" "):
                    lemma = line.split(" ", 1)[0]
                    words |= {lemma, lemma.capitalize(), *lemma.split("_")}
    for text in sample[::4]:
        words.update(nltk_tokens(text))
    stemmer = PorterStemmer()
    assert len(words) > 10000
    assert [w for w in words if porter_stem(w) != stemmer.stem(w)] == []


# -- behaviour -----------------------------------------------------------------------


def test_scoring_imports_no_nltk() -> None:
    """ASCII and non-ASCII text through every algorithmic evaluator, nltk never imported."""
    code = (
        "import sys\n"
        "from pytest_textsim import (BleuScoreEvaluator, F1ScoreEvaluator,\n"
        "    GleuScoreEvaluator, MeteorScoreEvaluator, RougeScoreEvaluator, score_rows)\n"
        "evs = {'f1': F1ScoreEvaluator(), 'bleu': BleuScoreEvaluator(),\n"
        "       'gleu': GleuScoreEvaluator(), 'meteor': MeteorScoreEvaluator(),\n"
        "       'rougeL': RougeScoreEvaluator('rougeL')}\n"
        "rows = [{'response': 'Dr. Smith ran home. He was tired.',\n"
        "         'ground_truth': 'Smith runs.'},\n"
        "        {'response': 'Café — São Paulo’s “best”.', 'ground_truth': 'Москва, 5%.'}]\n"
        "out = score_rows(rows, evs)\n"
        "assert out[0]['meteor.meteor_score'] > 0, out\n"
        "print(sorted(m for m in sys.modules if m == 'nltk' or m.startswith('nltk.')))\n"
    )
    env = {**os.environ, "NLTK_DATA": str(NLTK_DATA), "TEXTSIM_NLTK_DOWNLOAD": "never"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def _zip_dir(source: Path, archive: Path, top: str) -> None:
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"{top}/", "")
        for path in sorted(source.rglob("*")):
            name = f"{top}/{path.relative_to(source).as_posix()}"
            zf.writestr(
                name + "/" if path.is_dir() else name, b"" if path.is_dir() else path.read_bytes()
            )


def test_punkt_model_from_zip_equals_directory(tmp_path: Path) -> None:
    archive = tmp_path / "punkt_tab.zip"
    _zip_dir(PUNKT_DIR, archive, "punkt_tab")
    zipped = load_punkt_params((archive, "punkt_tab/english/"))
    unzipped = load_punkt_params(PUNKT_DIR / "english")
    assert zipped.abbrev_types == unzipped.abbrev_types
    assert zipped.collocations == unzipped.collocations
    assert zipped.sent_starters == unzipped.sent_starters
    assert zipped.ortho_context == unzipped.ortho_context
    assert len(unzipped.ortho_context) > 10000


def test_tokens_from_zipped_data_in_a_fresh_process(tmp_path: Path) -> None:
    """Only ``.zip`` packages on the path (as ``nltk.download`` may leave them): same tokens."""
    root = tmp_path / "data"
    (root / "tokenizers").mkdir(parents=True)
    (root / "misc").mkdir()
    _zip_dir(PUNKT_DIR, root / "tokenizers" / "punkt_tab.zip", "punkt_tab")
    _zip_dir(
        NLTK_DATA / "misc" / "perluniprops", root / "misc" / "perluniprops.zip", "perluniprops"
    )
    texts = ["Dr. Smith went home. He slept.", "Café — São Paulo’s “best”, 5%."]
    code = (
        "import sys\n"
        "from pytest_textsim.nlp.tokenize import nltk_tokens\n"
        f"print([list(nltk_tokens(t)) for t in {texts!r}])\n"
        "assert 'nltk' not in sys.modules\n"
    )
    env = {
        **os.environ,
        "NLTK_DATA": str(root),
        "HOME": str(tmp_path),
        "TEXTSIM_NLTK_DOWNLOAD": "never",
    }
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str([list(nltk_tokens(t)) for t in texts])


@needs_nltk_310  # nltk 3.9 does not expand "~" in NLTK_DATA entries
def test_search_path_is_nltks_in_a_fresh_process(tmp_path: Path) -> None:
    """Without importing nltk we search where ``nltk.data.path`` points, in its order."""
    code = (
        LEAN_NLTK + "import os, sys\n"
        "from pytest_textsim.nlp.nltk_data import nltk_download_dir, nltk_search_path\n"
        "ours, download_dir = nltk_search_path(), nltk_download_dir()\n"
        "assert 'nltk' not in sys.modules\n"
        "import nltk.data\n"
        "from nltk.downloader import Downloader\n"
        "assert ours == nltk.data.path, (ours, nltk.data.path)\n"
        "theirs = Downloader(download_dir=os.devnull).default_download_dir()\n"
        "assert download_dir == theirs == sys.argv[1], (download_dir, theirs)\n"
        "nltk.data.path.insert(0, '/elsewhere')  # a program's own edit is obeyed\n"
        "assert nltk_search_path()[0] == '/elsewhere'\n"
    )
    entries = os.pathsep.join([str(tmp_path / "a"), "~/b", ""])
    (tmp_path / "b").mkdir()  # the first writable entry: NLTK's download directory
    env = {**os.environ, "NLTK_DATA": entries, "HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "b")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
