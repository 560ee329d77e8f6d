"""Baselines: save a run's scores, compare a later run with them, list what got worse.

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

Scores are matched by test id, evaluator, metric and, when one test records
the same metric several times, the order of the calls. A score whose evaluator
parameters differ from the baseline's (another ROUGE type, a new judge prompt
version, another judge model) is *not compared*: the comparison says so and
asks for a new baseline, since the old number measured something else.
"""  # noqa: E501

from __future__ import annotations

import dataclasses
import json
import math
import os
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalog import higher_is_better
from ..formatting import alike, number, plural, table
from ..records import ScoreRecord, fold_runs
from ..stats import DEFAULT_SEED
from .significance import (
    Flips,
    MetricTest,
    corpus_metric_test,
    flips,
    holm_correct,
    paired_metric_test,
    test_verdicts,
)
from .tolerances import Tolerances

FORMAT = "pytest-textsim baseline"
VERSION = 2
#: The first version whose comparisons get intervals and p-values.
SIGNIFICANCE_VERSION = 2
REPORT_FORMAT = "pytest-textsim/"  # --textsim-json reports: "pytest-textsim/1"

# Scores are recomputed from the same text, yet summing floats in another order
# can move the last digit; never call that a regression.
_EPSILON = 1e-9


class BaselineError(ValueError):
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
        return (r.nodeid, r.evaluator, r.variant or "", r.metric)

    seen: dict[tuple[str, str, str, str], int] = {}
    entries = []
    for record in sorted(records, key=group):  # stable: call order kept within a group
        if not math.isfinite(record.score):
            # NaN or Infinity would make the file invalid JSON and every comparison
            # of it "unchanged"; record() refuses them, so this is a last guard.
            raise ValueError(
                f"{record.nodeid}: {record.metric} is {record.score!r}, not a finite number; "
                "a baseline holds only finite scores"
            )
        index = seen.get(group(record), 0)
        seen[group(record)] = index + 1
        params = json.loads(json.dumps(record.params, sort_keys=True, default=str))
        entries.append(
            Entry(
                record.nodeid,
                record.evaluator,
                record.metric,
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
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write next to the target and rename, so an interrupted run never leaves
    # half a file. Not tempfile.mkstemp: its files are 0600, and a baseline is
    # shared; os.open with 0o666 lets the umask decide, like any new file.
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(dumps(entries, corpus))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return entries


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


def load(path: str | os.PathLike[str]) -> list[Entry]:
    """Read a baseline, or a ``--textsim-json`` report, as baseline entries."""
    return load_baseline(path).entries


def load_baseline(path: str | os.PathLike[str]) -> Baseline:
    """Read a baseline, or a ``--textsim-json`` report, with its version and corpus statistics."""
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineError(
            f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start + 1}); a baseline is "
            "the UTF-8 JSON that --textsim-save-baseline writes"
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
        raise BaselineError(f"{where}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except ValueError as exc:  # nested too deeply, or a lone surrogate
        raise BaselineError(f"{where}: {exc}") from None
    return parse_baseline(data, where)


def parse(data: Any, where: str) -> list[Entry]:
    """Entries from parsed JSON: a baseline, or a JSON report with a list of records."""
    return parse_baseline(data, where).entries


def parse_baseline(data: Any, where: str) -> Baseline:
    """A :class:`Baseline` from parsed JSON: a baseline, or a JSON report's records."""
    if isinstance(data, dict) and data.get("format") == FORMAT:
        if not isinstance(data.get("version"), int) or data["version"] > VERSION:
            raise BaselineError(
                f"{where}: baseline format version {data.get('version')!r} is newer than this "
                f"pytest-textsim understands ({VERSION}); upgrade pytest-textsim"
            )
        rows = data.get("scores")
        test_key = "test"
    elif isinstance(data, dict) and str(data.get("format", "")).startswith(REPORT_FORMAT):
        rows = data.get("scores")
        test_key = "test_id"
    else:
        raise BaselineError(
            f"{where}: not a pytest-textsim baseline or --textsim-json report (expected an "
            f"object with \"format\": {FORMAT!r} or {REPORT_FORMAT + '1'!r})"
        )
    if not isinstance(rows, list):
        raise BaselineError(f"{where}: \"scores\" must be a list")
    if test_key == "test":
        entries = [_entry(row, n, where) for n, row in enumerate(rows, 1)]
        return Baseline(entries, int(data["version"]), _corpus(data.get("corpus"), where))
    # A report holds records in run order: number repeated metrics the way save() does.
    records = [_record(row, n, where) for n, row in enumerate(rows, 1)]
    # A repeated test counts once, with the mean of its runs, as in the run itself.
    repeats = {
        str(r.get("test_id")): r for r in data.get("repeats") or () if isinstance(r, dict)
    }
    return Baseline(entries_from_records(fold_runs(records, repeats)), VERSION, report=True)


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
            evaluator=str(row["evaluator"]),
            metric=str(row["metric"]),
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


# -- comparison -----------------------------------------------------------------

REGRESSION = "regression"
IMPROVEMENT = "improvement"
UNCHANGED = "unchanged"
NEW = "new"
VANISHED = "vanished"  # in the baseline; its test is gone or no longer records it
NOT_RUN = "not run"  # in the baseline; its test was deselected, skipped or not collected
INCOMPARABLE = "incomparable"
# Beyond the tolerance, but its metric's drop is not significant (--textsim-significance).
NOT_SIGNIFICANT = "not significant"
# A judge score served by another model than the baseline's: not compared.
JUDGE_CHANGED = "judge changed"


@dataclass(frozen=True)
class Change:
    """How one score moved between the baseline and this run."""

    kind: str
    test: str
    evaluator: str
    metric: str  # with the variant, as reports show it: "rouge_f1_score (rougeL)"
    old: float | None
    new: float | None
    tolerance: float = 0.0
    why: str = ""  # for INCOMPARABLE: which parameters differ
    index: int = 0  # the n-th score of this metric in the test (Entry.index)

    @property
    def delta(self) -> float | None:
        if self.old is None or self.new is None:
            return None
        return self.new - self.old


@dataclass
class Comparison:
    """Every score of the baseline and of this run, classified."""

    changes: list[Change]
    # Per-metric tolerances that name no metric of either side (a typo such as
    # blue_score): listed, since they silently leave the default in force.
    unmatched_tolerances: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)  # the metrics of both sides
    # Paired tests per metric (empty for a version-1 baseline), Holm-corrected.
    metric_tests: list[MetricTest] = field(default_factory=list)
    flips: Flips | None = None  # tests that went from pass to fail, and back
    alpha: float | None = None  # --textsim-significance; None: the max-drop rule alone
    # Why there are no intervals or p-values ("" when there are).
    no_significance: str = ""
    # Judge scores compared whose system fingerprint changed or is missing on a side.
    fingerprints: list[Change] = field(default_factory=list)

    def of(self, kind: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def regressions(self) -> list[Change]:
        return self.of(REGRESSION)

    @property
    def metric_regressions(self) -> list[MetricTest]:
        """Metrics whose mean (or corpus score) got worse beyond tolerance (and significantly,
        with a significance level)."""
        return [t for t in self.metric_tests if t.verdict(self.alpha) == "REGRESSION"]

    @property
    def regressed(self) -> bool:
        """Whether anything regressed: a score, or a metric as a whole."""
        return bool(self.regressions or self.metric_regressions)

    def to_dict(self, path: str = "") -> dict[str, Any]:
        """The comparison as the JSON report (and the HTML report) show it."""
        return {
            "path": path,
            "counts": self.counts(),
            "regressions": len(self.regressions),
            "metric_regressions": len(self.metric_regressions),
            "unmatched_tolerances": list(self.unmatched_tolerances),
            "changes": [
                {
                    "kind": change.kind,
                    "test": change.test,
                    "evaluator": change.evaluator,
                    "metric": change.metric,
                    "index": change.index,
                    "old": change.old,
                    "new": change.new,
                    "delta": change.delta,
                    "tolerance": change.tolerance,
                    "why": change.why,
                }
                for change in self.changes
            ],
            "significance": self.alpha,
            "no_significance": self.no_significance,
            "metric_tests": [
                {
                    "metric": test.metric,
                    "pairs": test.pairs,
                    "old": test.old,
                    "new": test.new,
                    "difference": test.difference,
                    "lower_is_better": test.lower_is_better,
                    "tolerance": test.tolerance,
                    "interval": None if test.interval is None else test.interval.to_dict(),
                    "p": test.p,
                    "p_holm": test.p_holm,
                    "verdict": test.verdict(self.alpha),
                    "why": test.why,
                }
                for test in self.metric_tests
            ],
            "flips": None if self.flips is None else {
                "pass_to_fail": self.flips.pass_to_fail,
                "fail_to_pass": self.flips.fail_to_pass,
                "tests": self.flips.tests,
                "failed": list(self.flips.failed),
                "p": self.flips.p,
            },
            "fingerprints": [
                {"test": c.test, "evaluator": c.evaluator, "metric": c.metric, "why": c.why}
                for c in self.fingerprints
            ],
        }  # fmt: skip

    def counts(self) -> dict[str, int]:
        """How many *scores* are of each kind."""
        kinds = (REGRESSION, IMPROVEMENT, UNCHANGED, NEW, VANISHED, NOT_RUN, INCOMPARABLE)
        counts = {kind: len(self.of(kind)) for kind in kinds}
        if self.of(JUDGE_CHANGED):  # only judge scores with a served model make this kind
            counts[JUDGE_CHANGED] = len(self.of(JUDGE_CHANGED))
        if self.alpha is not None:  # only a significance level makes this kind
            counts[NOT_SIGNIFICANT] = len(self.of(NOT_SIGNIFICANT))
        return counts


def compare(
    old: Sequence[Entry],
    new: Sequence[Entry],
    tolerances: Tolerances | None = None,
    *,
    not_run: Callable[[str], bool] | None = None,
    significance: float | None = None,
    seed: int = DEFAULT_SEED,
    old_version: int = VERSION,
    old_corpus: Mapping[str, CorpusStats] | None = None,
    new_corpus: Mapping[str, CorpusStats] | None = None,
    old_name: str = "the baseline",
) -> Comparison:
    """Classify every score of ``old`` (the baseline) and ``new`` (this run).

    A baseline score missing from ``new`` is ``NOT_RUN`` when ``not_run(test_id)``
    says its test did not run this time (deselected with ``-k``, skipped, outside
    the paths given), else ``VANISHED``: the test is gone or stopped recording it.
    Without ``not_run`` (two files compared) every missing score is ``VANISHED``.

    Each metric compared also gets a paired bootstrap of its mean difference (and
    corpus metrics sacreBLEU's paired bootstrap, when both sides have their
    sentence statistics), Holm-corrected. With ``significance`` (a level such as
    0.05) a score beyond its tolerance is a ``REGRESSION`` only when its metric's
    drop is significant, else ``NOT_SIGNIFICANT``. An ``old_version`` below 2 has
    no test outcomes or sentence statistics: no significance, and the comparison
    says why in ``no_significance``.
    """
    tolerances = tolerances or Tolerances()
    old_by_key = {e.key: e for e in old}
    new_by_key = {e.key: e for e in new}
    changes = []
    fingerprint_notes: list[Change] = []
    for key in sorted(old_by_key.keys() | new_by_key.keys()):
        before, after = old_by_key.get(key), new_by_key.get(key)
        ref = before or after
        assert ref is not None
        where = (ref.test, ref.evaluator, ref.label)
        if before is None or after is None:
            if before is None:
                kind = NEW
            else:
                kind = NOT_RUN if not_run is not None and not_run(before.test) else VANISHED
            old_score = before.score if before else None
            new_score = after.score if after else None
            changes.append(Change(kind, *where, old_score, new_score, index=ref.index))
            continue
        if before.params != after.params:
            why = _params_diff(before.params, after.params)
            changes.append(
                Change(INCOMPARABLE, *where, before.score, after.score, why=why, index=ref.index)
            )
            continue
        if before.served_model and after.served_model and before.served_model != after.served_model:
            why = f"served by {before.served_model} -> {after.served_model}"
            changes.append(
                Change(JUDGE_CHANGED, *where, before.score, after.score, why=why, index=ref.index)
            )
            continue
        if (before.fingerprint or after.fingerprint) and before.fingerprint != after.fingerprint:
            fingerprint_notes.append(
                Change(UNCHANGED, *where, before.score, after.score, index=ref.index,
                       why=f"{before.fingerprint or 'none'} -> {after.fingerprint or 'none'}")
            )  # fmt: skip
        tolerance = tolerances.for_metric(before.metric, before.evaluator)
        lower_better = not higher_is_better(before.metric, before.evaluator)
        drop = (after.score - before.score) if lower_better else (before.score - after.score)
        if drop > tolerance + _EPSILON:
            kind = REGRESSION
        elif -drop > tolerance + _EPSILON:
            kind = IMPROVEMENT
        else:
            kind = UNCHANGED
        changes.append(
            Change(kind, *where, before.score, after.score, tolerance, index=ref.index)
        )
    metrics = sorted({e.metric for e in (*old, *new)})
    unmatched = [name for name in tolerances.per_metric if name not in metrics]
    comparison = Comparison(
        changes, unmatched, metrics, alpha=significance, fingerprints=fingerprint_notes
    )
    if old_version < SIGNIFICANCE_VERSION:
        comparison.no_significance = (
            f"compared without significance: {old_name} is a version {old_version} baseline, "
            "without the statistics intervals and p-values need; save a new baseline with "
            "--textsim-save-baseline"
        )
        return comparison
    tests = _metric_tests(old_by_key, new_by_key, changes, tolerances, seed)
    tests += _corpus_tests(old_corpus or {}, new_corpus or {}, tolerances, seed)
    comparison.metric_tests = holm_correct(tests)
    comparison.flips = flips(
        test_verdicts((e.test, e.outcome) for e in old),
        test_verdicts((e.test, e.outcome) for e in new),
    )
    if significance is not None:
        noise = {t.metric for t in comparison.metric_tests if t.significant(significance) is False}
        comparison.changes = [
            dataclasses.replace(c, kind=NOT_SIGNIFICANT)
            if c.kind == REGRESSION and c.metric in noise
            else c
            for c in changes
        ]
    return comparison


_COMPARED = (REGRESSION, IMPROVEMENT, UNCHANGED)


def _metric_tests(
    old: Mapping[tuple[str, str, str, str, int], Entry],
    new: Mapping[tuple[str, str, str, str, int], Entry],
    changes: Sequence[Change],
    tolerances: Tolerances,
    seed: int,
) -> list[MetricTest]:
    """One paired test per metric (and variant) over the scores both sides compared."""
    compared = {(c.test, c.evaluator, c.metric) for c in changes if c.kind in _COMPARED}
    pairs: dict[str, tuple[list[float], list[float], Entry]] = {}
    for key in sorted(old.keys() & new.keys()):
        before, after = old[key], new[key]
        if (before.test, before.evaluator, before.label) not in compared:
            continue
        olds, news, _ = pairs.setdefault(before.label, ([], [], before))
        olds.append(before.score)
        news.append(after.score)
    return [
        paired_metric_test(
            label,
            olds,
            news,
            lower_is_better=not higher_is_better(entry.metric, entry.evaluator),
            tolerance=tolerances.for_metric(entry.metric, entry.evaluator),
            seed=seed,
        )
        for label, (olds, news, entry) in sorted(pairs.items())
    ]


def _corpus_tests(
    old: Mapping[str, CorpusStats],
    new: Mapping[str, CorpusStats],
    tolerances: Tolerances,
    seed: int,
) -> list[MetricTest]:
    """sacreBLEU's paired bootstrap for corpus metrics both sides have sentences of.

    Sentences are paired by test id and order within the test; a sentence on one
    side only is left out. Signatures must match (same tokenizer, same version).
    """
    out = []
    for name in sorted(old.keys() & new.keys()):
        before, after = old[name], new[name]
        if before.signature != after.signature:
            continue
        old_rows, new_rows = _paired_sentences(before.sentences, after.sentences)
        metric = f"sacrebleu.{name}.score"
        out.append(
            corpus_metric_test(
                name,
                old_rows,
                new_rows,
                lower_is_better=not higher_is_better(metric),
                tolerance=tolerances.for_metric(metric),
                seed=seed,
            )
        )
    return out


def _paired_sentences(
    old: Sequence[tuple[str, list[float]]], new: Sequence[tuple[str, list[float]]]
) -> tuple[list[list[float]], list[list[float]]]:
    def keyed(rows: Sequence[tuple[str, list[float]]]) -> dict[tuple[str, int], list[float]]:
        counts: dict[str, int] = {}
        out = {}
        for test, row in rows:
            out[(test, counts.get(test, 0))] = row
            counts[test] = counts.get(test, 0) + 1
        return out

    before, after = keyed(old), keyed(new)
    both = sorted(before.keys() & after.keys())
    return [before[k] for k in both], [after[k] for k in both]


def _params_diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    parts = []
    for name in sorted(old.keys() | new.keys()):
        if old.get(name) != new.get(name):
            before = _short(old[name]) if name in old else "(unset)"
            after = _short(new[name]) if name in new else "(unset)"
            parts.append(f"{name} {before} -> {after}")
    return ", ".join(parts)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


# -- report ---------------------------------------------------------------------

_LIST_LIMIT = 10  # improvements shown
_TESTS_LIMIT = 5  # new / vanished tests shown: a brief list, the JSON report has all


#: Headings of the brief lists; the summary line counts the same kinds by these words.
_MISSING = (
    (NEW, "new, not in the baseline"),
    (VANISHED, "vanished, in the baseline but no longer recorded"),
    (NOT_RUN, "not run, in the baseline but deselected, skipped or not collected"),
)


def report_lines(comparison: Comparison, baseline: str = "the baseline") -> Iterator[str]:
    """The ``textsim regressions`` section: regressions in full, the rest briefly.

    Every count is of scores; lists of tests say how many tests and scores they hold.
    """
    counts = comparison.counts()
    regressions = comparison.regressions
    if regressions:
        rows: list[tuple[str, ...]] = [("test", "metric", "baseline", "now", "change", "tolerance")]
        for c in regressions:
            numbers = alike([c.old, c.new, c.delta or 0.0, c.tolerance], signed=(2,))
            rows.append((c.test, c.metric, *numbers))
        yield from table(rows)
    elif comparison.metric_regressions:
        yield f"no single score dropped beyond its tolerance against {baseline}"
    else:
        yield f"no regressions against {baseline}"
    yield from _significance_lines(comparison)
    noise = comparison.of(NOT_SIGNIFICANT)
    if noise:
        tests = len({c.test for c in noise})
        yield (
            f"beyond tolerance but not significant at {comparison.alpha:g} "
            f"({plural(tests, 'test')}, {plural(len(noise), 'score')}), not regressions:"
        )
        for c in noise[:_LIST_LIMIT]:
            yield f"  {c.test} {c.metric} {number(c.old)} -> {number(c.new)}"
        if len(noise) > _LIST_LIMIT:
            yield f"  ... and {len(noise) - _LIST_LIMIT} more"
    improvements = comparison.of(IMPROVEMENT)
    if improvements:
        yield f"improved ({plural(len(improvements), 'score')}):"
        for c in improvements[:_LIST_LIMIT]:
            old, new = alike([c.old, c.new])
            yield f"  {c.test} {c.metric} {old} -> {new}"
        if len(improvements) > _LIST_LIMIT:
            yield f"  ... and {len(improvements) - _LIST_LIMIT} more"
    for kind, label in _MISSING:
        changes = comparison.of(kind)
        if changes:
            tests = len({c.test for c in changes})
            yield f"{label} ({plural(tests, 'test')}, {plural(len(changes), 'score')}):"
            yield from _brief_tests(changes)
    changed = comparison.of(JUDGE_CHANGED)
    if changed:
        yield (
            f"judge changed ({plural(len(changed), 'score')}): another model served these "
            "judgments than the baseline's, so they are not compared"
        )
        by_why: dict[str, list[Change]] = {}
        for c in changed:
            by_why.setdefault(f"{c.evaluator}: {c.why}", []).append(c)
        for why, group in by_why.items():
            yield f"  {why} ({plural(len(group), 'score')}, e.g. {group[0].test})"
    if comparison.fingerprints:
        notes = sorted({c.why for c in comparison.fingerprints})
        shown = "; ".join(notes[:3]) + ("; ..." if len(notes) > 3 else "")
        yield (
            f"note: the judge's system fingerprint changed or is missing for "
            f"{plural(len(comparison.fingerprints), 'compared score')} ({shown}): "
            "the backend changed, so judge scores may move for that reason"
        )
    incomparable = comparison.of(INCOMPARABLE)
    if incomparable:
        yield (
            f"not compared ({plural(len(incomparable), 'score')}): the evaluator parameters "
            "differ from the baseline's, so the scores measure different things; save a new "
            "baseline with --textsim-save-baseline"
        )
        groups: dict[tuple[str, str], list[Change]] = {}
        for c in incomparable:
            groups.setdefault((c.evaluator, c.why), []).append(c)
        for (evaluator, why), group in groups.items():
            yield f"  {evaluator}: {why} ({plural(len(group), 'score')}, e.g. {group[0].test})"
    for name in comparison.unmatched_tolerances:
        here = ", ".join(comparison.metrics) or "none"
        yield f"tolerance for {name!r} matches no score; metrics here: {here}"
    yield (
        f"scores: {counts[REGRESSION]} regressed, {counts[IMPROVEMENT]} improved, "
        f"{counts[UNCHANGED]} unchanged, {counts[NEW]} new, {counts[VANISHED]} vanished"
        + (f", {counts[NOT_RUN]} not run" if counts[NOT_RUN] else "")
        + (f", {counts[INCOMPARABLE]} not compared" if counts[INCOMPARABLE] else "")
        + (f", {counts[NOT_SIGNIFICANT]} not significant" if counts.get(NOT_SIGNIFICANT) else "")
        + (f", {counts[JUDGE_CHANGED]} judge changed" if counts.get(JUDGE_CHANGED) else "")
    )


def _significance_lines(comparison: Comparison) -> Iterator[str]:
    if comparison.no_significance:
        yield comparison.no_significance
        return
    tests = comparison.metric_tests
    # Small comparisons (no metric with 10 pairs) keep to the max-drop report,
    # unless a significance level was asked for.
    shown = any(t.p is not None for t in tests) or comparison.alpha is not None
    if tests and shown:
        tested = sum(t.p is not None for t in tests)
        level = (
            f"a drop is a regression when beyond tolerance and significant at "
            f"{comparison.alpha:g}"
            if comparison.alpha is not None
            else "max-drop rule only; --textsim-significance 0.05 also asks for significance"
        )
        yield (
            f"paired bootstrap per metric (95% CI of the difference; one-sided p of a drop, "
            f"Holm-corrected over {plural(tested, 'metric')}; {level}):"
        )
        for test in tests:
            yield "  " + test.line(comparison.alpha)
    flipped = comparison.flips
    if flipped is not None and flipped.tests and (shown or flipped.pass_to_fail):
        yield flipped.line()


def _brief_tests(changes: list[Change]) -> Iterator[str]:
    by_test: dict[str, list[str]] = {}
    for c in changes:
        metrics = by_test.setdefault(c.test, [])
        if c.metric not in metrics:
            metrics.append(c.metric)
    tests = list(by_test.items())
    for test, metrics in tests[:_TESTS_LIMIT]:
        yield f"  {test} ({', '.join(metrics)})"
    if len(tests) > _TESTS_LIMIT:
        more = len(tests) - _TESTS_LIMIT
        yield f"  ... and {more} more test{'s' if more != 1 else ''}"
