"""Baselines: a run's scores saved in a file, and read back.

A baseline is a small JSON file meant to be committed. It holds one line per
recorded score, sorted by test id, so a diff in review shows exactly which
scores moved::

    {
      "format": "pytest-textsim baseline",
      "version": 2,
      "scores": [
        {"test": "tests/test_qa.py::test_capital", "evaluator": "bleu", "metric": "bleu_score", "params": {}, "score": 0.412, "outcome": "passed"},
        ...
      ],
      "corpus": {
        "corpus_bleu": {"signature": "nrefs:1|case:mixed|...", "sentences": [
          ["tests/test_qa.py::test_capital", [12.0, 9.0, ...]],
          ...
        ]}
      }
    }

Version 2 added each test's ``outcome`` (for McNemar's test on pass-to-fail
flips) and, for the corpus metrics a run gated, sacreBLEU's statistics of each
sentence (for its paired bootstrap). A version-1 baseline is still compared,
with the max-drop rule only: the comparison says that significance needs a new
baseline.

A later run is compared with a baseline in :mod:`.compare`; the
``textsim regressions`` lines come from :mod:`.regressions`.
"""  # noqa: E501

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TextsimError
from ..formatting import plural
from ..records import ScoreRecord, fold_runs

FORMAT = "pytest-textsim baseline"
VERSION = 2
#: The first version whose comparisons get intervals and p-values.
SIGNIFICANCE_VERSION = 2
REPORT_FORMAT = "pytest-textsim/"  # --textsim-json reports: "pytest-textsim/1"


class BaselineError(TextsimError, ValueError):
    """A baseline or report file cannot be read; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Entry:
    """One score in a baseline."""

    test: str
    evaluator: str
    metric: str
    score: float
    params: dict[str, Any] = field(default_factory=dict)
    variant: str = ""  # ROUGE's rouge_type: rouge1 and rougeL are different scores
    index: int = 0  # the n-th score of this evaluator, variant and metric within the test
    outcome: str | None = None  # the test's: "passed", "failed", "skipped"
    served_model: str = ""  # judge scores: the model the reply says served it
    fingerprint: str = ""  # judge scores: the reply's system_fingerprint

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return (self.test, self.evaluator, self.variant, self.metric, self.index)

    @property
    def label(self) -> str:
        """The metric as reports show it: ``rouge_f1_score (rougeL)``."""
        return f"{self.metric} ({self.variant})" if self.variant else self.metric

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "test": self.test,
            "evaluator": self.evaluator,
            "metric": self.metric,
            **({"variant": self.variant} if self.variant else {}),
            "params": self.params,
            "score": self.score,
        }
        if self.index:
            data["index"] = self.index
        if self.outcome:
            data["outcome"] = self.outcome
        if self.served_model:
            data["served_model"] = self.served_model
        if self.fingerprint:
            data["fingerprint"] = self.fingerprint
        return json.dumps(data, ensure_ascii=False, sort_keys=False, default=str)


def entries_from_records(records: Iterable[ScoreRecord]) -> list[Entry]:
    """Baseline entries for ``records``, sorted, with call order kept within a test."""
    def group(r: ScoreRecord) -> tuple[str, str, str, str]:
        return (r.nodeid, r.metric_name, r.variant or "", r.score_key)

    seen: dict[tuple[str, str, str, str], int] = {}
    entries = []
    for record in sorted(records, key=group):  # stable: call order kept within a group
        if not math.isfinite(record.score):
            # NaN or Infinity would make the file invalid JSON and every comparison
            # of it "unchanged"; record() refuses them, so this is a last guard.
            raise ValueError(
                f"{record.nodeid}: {record.score_key} is {record.score!r}, not a finite number; "
                "a baseline holds only finite scores"
            )
        index = seen.get(group(record), 0)
        seen[group(record)] = index + 1
        params = json.loads(json.dumps(record.params, sort_keys=True, default=str))
        entries.append(
            Entry(
                record.nodeid,
                record.metric_name,
                record.score_key,
                float(record.score),
                params,
                record.variant or "",
                index,
                record.test_outcome,
                record.served_model,
                record.fingerprint,
            )
        )
    return entries


@dataclass(frozen=True)
class CorpusStats:
    """sacreBLEU's statistics of each sentence of one corpus metric, by test id."""

    signature: str
    sentences: list[tuple[str, list[float]]]


@dataclass(frozen=True)
class Baseline:
    """A baseline file as read: its scores, its format version and its corpus statistics."""

    entries: list[Entry]
    version: int = VERSION
    corpus: dict[str, CorpusStats] = field(default_factory=dict)
    report: bool = False  # read from a --textsim-json report, not a baseline
    scored: bool = False  # read from textsim score output: rows, no evaluator parameters


def dumps(entries: Sequence[Entry], corpus: Mapping[str, CorpusStats] | None = None) -> str:
    """The baseline file's text: one score (and sentence) per line so diffs stay readable."""
    body = ",\n".join("    " + entry.to_json() for entry in entries)
    scores = f"[\n{body}\n  ]" if entries else "[]"
    blocks = []
    for name, stats_table in sorted((corpus or {}).items()):
        rows = ",\n".join(
            "        " + json.dumps([test, row]) for test, row in stats_table.sentences
        )
        blocks.append(
            f"    {json.dumps(name)}: {{\"signature\": {json.dumps(stats_table.signature)}, "
            f"\"sentences\": [\n{rows}\n    ]}}"
        )
    extra = ',\n  "corpus": {\n' + ",\n".join(blocks) + "\n  }" if blocks else ""
    return (
        "{\n"
        f'  "format": {json.dumps(FORMAT)},\n'
        f'  "version": {VERSION},\n'
        f'  "scores": {scores}{extra}\n'
        "}\n"
    )


def corpus_statistics(
    records: Iterable[ScoreRecord], names: Iterable[str]
) -> dict[str, CorpusStats]:
    """Sentence statistics of the corpus metrics ``names`` over the records' text pairs.

    The sentences are the ones corpus gates score (:func:`..gates.corpus_sentences`).
    """
    from ..nlp.sacre import signed_sentence_statistics
    from .gates import corpus_sentences

    sentences = corpus_sentences(records)
    if not sentences:
        return {}
    out = {}
    for name in sorted(set(names)):
        table, signature = signed_sentence_statistics(
            name, [s[1] for s in sentences], [s[2] for s in sentences]
        )
        out[name] = CorpusStats(signature, [(s[0], row) for s, row in zip(sentences, table)])
    return out


def save(
    path: str | os.PathLike[str],
    records: Iterable[ScoreRecord],
    corpus: Mapping[str, CorpusStats] | None = None,
) -> list[Entry]:
    """Write ``records`` as a baseline to ``path`` (atomically) and return its entries.

    Missing parent folders are created, as for ``--textsim-json``. The file gets
    the usual permissions (0644 under the common umask 022): it is meant to be
    committed and read by others. Raises ``OSError`` when it cannot be written.
    """
    entries = entries_from_records(records)
    write(path, entries, corpus)
    return entries


def write(
    path: str | os.PathLike[str],
    entries: Sequence[Entry],
    corpus: Mapping[str, CorpusStats] | None = None,
) -> bool:
    """Write ``entries`` (sorted) as a baseline to ``path``, atomically, as :func:`save` does.

    Returns whether the file changed: one that already holds exactly this text is
    left alone (its modification time too), so a run that changed nothing says so.
    """
    target = Path(path)
    text = dumps(entries, corpus)
    try:
        if target.read_bytes() == text.encode("utf-8"):
            return False
    except OSError:
        pass  # no file yet, or one that cannot be read: written (or its error) below
    write_atomically(target, text)
    return True


def write_atomically(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` (its folder made if missing) next to it and
    rename, so an interrupted run never leaves half a file, and a reader sees the
    old file or the new one.

    Not tempfile.mkstemp: its files are 0600, and a baseline or a report is
    shared; os.open with 0o666 lets the umask decide, like any new file.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def describe_change(old: Sequence[Entry] | None, new: Sequence[Entry]) -> str:
    """How a baseline about to replace ``old`` differs from it, in one line.

    ``70 -> 52 scores: 18 tests no longer scored (t::a, t::b, ...), 3 scores changed``;
    ``new file, 52 scores of 20 tests`` when there was no file.
    """
    new_tests = {e.test for e in new}
    if old is None:
        return f"new file, {plural(len(new), 'score')} of {plural(len(new_tests), 'test')}"
    old_tests = {e.test for e in old}
    before = {e.key: e.score for e in old}
    after = {e.key: e.score for e in new}
    gone = sorted(old_tests - new_tests)
    added = sorted(new_tests - old_tests)
    changed = sum(1 for key, score in after.items() if key in before and before[key] != score)
    kept = old_tests & new_tests
    dropped = sum(1 for key in before if key not in after and key[0] in kept)
    extra = sum(1 for key in after if key not in before and key[0] in kept)
    parts = []
    if gone:
        shown = ", ".join(gone[:3]) + (", ..." if len(gone) > 3 else "")
        parts.append(f"{plural(len(gone), 'test')} no longer scored ({shown})")
    if added:
        parts.append(f"{plural(len(added), 'test')} newly scored")
    if dropped:
        parts.append(f"{plural(dropped, 'score')} fewer in tests still scored")
    if extra:
        parts.append(f"{plural(extra, 'score')} more in tests still scored")
    if changed:
        parts.append(f"{plural(changed, 'score')} changed")
    summary = f"{len(old)} -> {plural(len(new), 'score')}"
    return f"{summary}: {', '.join(parts)}" if parts else f"{summary}, unchanged"


def describe_same_or_replaced(new: Sequence[Entry], *, written: bool, unreadable: str) -> str:
    """The line of a save that found the file holding exactly ``new`` already
    (``unchanged, 52 scores of 20 tests``), or that replaced a file it could not
    read (``unreadable`` says why); "" for any other save (:func:`describe_change`)."""
    tests = len({e.test for e in new})
    counts = f"{plural(len(new), 'score')} of {plural(tests, 'test')}"
    if unreadable:
        return f"replaced what could not be read ({unreadable}) with {counts}"
    return "" if written else f"unchanged, {counts}"


def merge(
    old: Baseline,
    records: Iterable[ScoreRecord],
    corpus: Mapping[str, CorpusStats],
    updated: Collection[str],
) -> tuple[list[Entry], dict[str, CorpusStats]]:
    """A partial run's baseline: ``old`` with the entries of the ``updated`` tests replaced.

    An updated test (one that ran) is its scores now, all of them: one that records
    fewer scores than before loses the others. Every other test keeps its entries.
    The corpus statistics are merged the same way, per test; a corpus metric whose
    signature changed keeps only this run's sentences, as statistics under two
    signatures cannot be compared with one another.
    """
    entries = [e for e in old.entries if e.test not in updated]
    entries += entries_from_records(r for r in records if r.nodeid in updated)
    entries.sort(key=lambda e: e.key)
    merged: dict[str, CorpusStats] = {}
    for name in sorted(old.corpus.keys() | corpus.keys()):
        before, now = old.corpus.get(name), corpus.get(name)
        rows = list(now.sentences) if now is not None else []
        if before is not None and (now is None or now.signature == before.signature):
            rows += [row for row in before.sentences if row[0] not in updated]
        rows.sort(key=lambda row: row[0])  # stable: a test's sentences keep their order
        signature = now.signature if now is not None else before.signature if before else ""
        if rows:
            merged[name] = CorpusStats(signature, rows)
    return entries, merged


def describe_merge(old: Sequence[Entry], new: Sequence[Entry], updated: Collection[str]) -> str:
    """How a partial run's merged baseline differs from ``old``, in one line:
    ``updated 6 of 60 scores; 54 kept``, and the scores the tests that ran no
    longer record."""
    mine = {e.key for e in new if e.test in updated}
    line = f"updated {len(mine)} of {plural(len(new), 'score')}; {len(new) - len(mine)} kept"
    dropped = sum(1 for e in old if e.test in updated and e.key not in mine)
    if dropped:
        line += f"; {plural(dropped, 'score')} no longer recorded by the tests that ran"
    return line


def load(path: str | os.PathLike[str]) -> list[Entry]:
    """Read a baseline, or a ``--textsim-json`` report, as baseline entries."""
    return load_baseline(path).entries


def load_baseline(path: str | os.PathLike[str], *, id_field: str | None = None) -> Baseline:
    """Read a baseline, a ``--textsim-json`` report or ``textsim score`` output (its rows
    named by ``id_field``, else by line number), with its version and corpus statistics."""
    from . import scored

    where = str(path)
    try:
        # A byte order mark (some Windows editors write one) is skipped, as in JSONL.
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BaselineError(
            f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start + 1}); {scored.EXPECTED}"
        ) from None
    except FileNotFoundError:
        raise BaselineError(
            f"{where}: no such file; create it with --textsim-save-baseline={where}"
        ) from None
    except OSError as exc:
        raise BaselineError(f"{where}: cannot read it ({exc.strerror})") from None
    from ..jsonl import loads

    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and exc.lineno > 1:  # JSON values on several lines
            return _scored(text, where, id_field)
        raise BaselineError(f"{where}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except ValueError as exc:  # nested too deeply, or a lone surrogate
        raise BaselineError(f"{where}: {exc}") from None
    if scored.looks_like_rows(text, data):
        return _scored(text, where, id_field)
    return parse_baseline(data, where)


def _scored(text: str, where: str, id_field: str | None) -> Baseline:
    from .scored import parse_rows

    try:
        records = parse_rows(text, where, id_field)
    except ValueError as exc:
        raise BaselineError(str(exc)) from None
    return Baseline(entries_from_records(records), VERSION, scored=True)


def parse(data: Any, where: str) -> list[Entry]:
    """Entries from parsed JSON: a baseline, or a JSON report with a list of records."""
    return parse_baseline(data, where).entries


def parse_baseline(data: Any, where: str) -> Baseline:
    """A :class:`Baseline` from parsed JSON: a baseline, or a JSON report's records."""
    if isinstance(data, dict) and data.get("format") == FORMAT:
        version = data.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise BaselineError(
                f"{where}: \"version\" must be a whole number such as {VERSION} (the baseline "
                f"format version), got {json.dumps(version, default=str)[:40]}"
            )
        if version > VERSION:
            raise BaselineError(
                f"{where}: baseline format version {version} is newer than this "
                f"pytest-textsim understands ({VERSION}); upgrade pytest-textsim"
            )
        rows = data.get("scores")
        test_key = "test"
    elif isinstance(data, dict) and str(data.get("format", "")).startswith(REPORT_FORMAT):
        rows = data.get("scores")
        test_key = "test_id"
    else:
        from .scored import EXPECTED, describe

        raise BaselineError(
            f"{where}: {describe(data)}, not a pytest-textsim baseline or --textsim-json "
            f"report (\"format\": {FORMAT!r} or {REPORT_FORMAT + '1'!r}); {EXPECTED}"
        )
    if not isinstance(rows, list):
        raise BaselineError(f"{where}: \"scores\" must be a list")
    if test_key == "test":
        entries = [_entry(row, n, where) for n, row in enumerate(rows, 1)]
        _no_duplicates(entries, where)
        return Baseline(entries, int(data["version"]), _corpus(data.get("corpus"), where))
    # A report holds records in run order: number repeated metrics the way save() does.
    records = [_record(row, n, where) for n, row in enumerate(rows, 1)]
    # A repeated test counts once, with the mean of its runs, as in the run itself.
    repeats = {
        str(r.get("test_id")): r for r in data.get("repeats") or () if isinstance(r, dict)
    }
    return Baseline(entries_from_records(fold_runs(records, repeats)), VERSION, report=True)


def _no_duplicates(entries: Sequence[Entry], where: str) -> None:
    """A score listed twice (a merge that kept both sides, a hand edit) is an error:
    either one would be compared, and the other silently dropped."""
    first: dict[tuple[str, str, str, str, int], int] = {}
    for n, entry in enumerate(entries, 1):
        seen = first.setdefault(entry.key, n)
        if seen != n:
            index = f", index {entry.index}" if entry.index else ""
            raise BaselineError(
                f"{where}: score #{n} repeats score #{seen} ({entry.test}, {entry.evaluator} "
                f"{entry.label}{index}): keep one of them, or save the baseline again"
            )


def _corpus(data: Any, where: str) -> dict[str, CorpusStats]:
    if data is None:
        return {}
    try:
        return {
            str(name): CorpusStats(
                str(table["signature"]),
                [(str(test), [_finite(x) for x in row]) for test, row in table["sentences"]],
            )
            for name, table in data.items()
        }
    except (KeyError, TypeError, ValueError, AttributeError):
        raise BaselineError(
            f"{where}: \"corpus\" must map each corpus metric to its signature and "
            "[test, statistics] sentences of finite numbers"
        ) from None


def _finite(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError
    if not math.isfinite(value):  # NaN/Infinity, which json.loads accepts
        raise ValueError
    return float(value)


def _entry(row: Any, n: int, where: str) -> Entry:
    try:
        score = row["score"]
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise TypeError
        if not math.isfinite(score):  # NaN/Infinity, which json.loads accepts
            raise ValueError
        params = row.get("params", {})
        if not isinstance(params, dict):
            raise TypeError
        return Entry(
            str(row["test"]),
            str(row["evaluator"]),
            str(row["metric"]),
            float(score),
            params,
            str(row.get("variant") or ""),
            int(row.get("index", 0)),
            _outcome(row.get("outcome")),
            str(row.get("served_model") or ""),
            str(row.get("fingerprint") or ""),
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        raise BaselineError(
            f"{where}: score #{n} must be an object with test, evaluator, metric, params and a "
            f"finite numeric score; got {json.dumps(row, default=str)[:120]}"
        ) from None


def _outcome(value: Any) -> str | None:
    return str(value) if value is not None else None


def _record(row: Any, n: int, where: str) -> ScoreRecord:
    try:
        score = row["score"]
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise TypeError
        if not math.isfinite(score):  # NaN/Infinity, which json.loads accepts
            raise ValueError
        return ScoreRecord(
            metric_name=str(row["evaluator"]),
            score_key=str(row["metric"]),
            score=float(score),
            threshold=None,
            passed=None,
            params=dict(row.get("params") or {}),
            nodeid=str(row["test_id"]),
            variant=row.get("variant") or None,
            test_outcome=_outcome(row.get("test_outcome")),
            run=int(row["run"]) if row.get("run") is not None else None,
            served_model=str(row.get("served_model") or ""),
            fingerprint=str(row.get("fingerprint") or ""),
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        raise BaselineError(
            f"{where}: score #{n} must have test_id, evaluator, metric and a finite numeric score; "
            f"got {json.dumps(row, default=str)[:120]}"
        ) from None
