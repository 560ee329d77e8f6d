"""What the summary and the gates need from every row, in constant memory.

A row's texts are never kept. Each score is 8 bytes in an ``array('d')`` (so
percentile gates are exact over every score), with pass counts beside it, and
corpus gates keep sacreBLEU's summed statistics. A worker fills a
:class:`Tally` for its chunk; the parent merges the chunks in input order.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from ..gating.gates import (
    Gate,
    GateResult,
    corpus_interval_of,
    corpus_result,
    matches,
    nothing_recorded,
    sentence_result,
)
from ..records import ScoreRecord, score_keys
from ..stats import DEFAULT_SEED, Interval
from ..summary import MetricSummary, metric_label

Globs = tuple[str, ...]  # the test= filters of a gate: a row counts when it matches all


class Part:
    """The scores of one output key of one metric (over a chunk, or over the run)."""

    __slots__ = ("scores", "passed", "judged", "first", "position", "integral")

    def __init__(self, first: int, position: int) -> None:
        self.scores = array("d")
        self.passed = 0
        self.judged = 0
        self.first = first  # index of the first row that had this score
        self.position = position  # order of the key in its metric's output
        self.integral = False  # judge scores: whole numbers, printed as such

    def extend(self, other: Part) -> None:
        self.scores.extend(other.scores)
        self.passed += other.passed
        self.judged += other.judged
        self.integral = other.integral  # as the report does: the last score decides


SlotKey = tuple[int, str]  # (metric index, score key)


@dataclass
class CorpusPart:
    """sacreBLEU's statistics summed over the pairs a corpus gate counts; and each pair's,
    in input order, when a ``.ci_*`` gate needs them for its interval (else ``None``)."""

    total: list[Any] | None = None
    pairs: int = 0
    sentences: list[list[float]] | None = None
    # How many references the pairs had (sacreBLEU's nrefs in the signature).
    num_refs: set[int] = field(default_factory=set)

    def add(
        self,
        vector: Sequence[Any] | None,
        pairs: int,
        sentences: Sequence[list[float]] | None = None,
        num_refs: set[int] | None = None,
    ) -> None:
        if vector is None or not pairs:
            return
        self.num_refs |= num_refs or set()
        self.total = (
            list(vector) if self.total is None else [a + b for a, b in zip(self.total, vector)]
        )
        self.pairs += pairs
        if sentences is not None:
            if self.sentences is None:
                self.sentences = []
            self.sentences.extend(sentences)


@dataclass
class Tally:
    """Scores by metric and output key, by gate ``test=`` filters, and corpus statistics."""

    rows: int = 0  # rows scored
    slots: dict[SlotKey, Part] = field(default_factory=dict)
    globbed: dict[tuple[Globs, int, str], Part] = field(default_factory=dict)
    corpus: dict[str, CorpusPart] = field(default_factory=dict)
    # The score keys of each algorithmic metric's output: the same for every row.
    shapes: dict[int, list[tuple[str, str, str | None, str | None]]] = field(
        default_factory=dict, repr=False
    )
    # Every score as (row's test id, metric index, score key, score), for a baseline;
    # None (the default) keeps none, so memory stays flat.
    kept: list[tuple[str, int, str, float]] | None = None
    # A byte per row, 1 when one of its scores missed its threshold: a judge's
    # scores of a row are counted after its chunk's, so a row is marked, not counted.
    below: bytearray = field(default_factory=bytearray, repr=False)

    @property
    def rows_below(self) -> int:
        """The rows with a score that missed its threshold."""
        return self.below.count(1)

    def _mark_below(self, row: int) -> None:
        if row >= len(self.below):
            self.below.extend(bytes(row + 1 - len(self.below)))
        self.below[row] = 1

    def add(
        self,
        index: int,
        output: dict[str, Any],
        row: int,
        name: str,
        globs: Sequence[Globs] = (),
        judge: bool = False,
        test: str = "",
    ) -> None:
        """Count metric ``index``'s ``output`` for row number ``row`` (named ``name``;
        ``test``: its id in a baseline, when scores are kept)."""
        if judge:
            keys = score_keys(output)
        else:
            keys = self.shapes.get(index) or self.shapes.setdefault(index, score_keys(output))
        for position, (score_key, result_key, threshold_key, _) in enumerate(keys):
            score = float(output[score_key])
            passed = output[result_key] == "pass"
            integral = False
            if judge:
                threshold = output[threshold_key] if threshold_key else None
                integral = (
                    threshold is not None
                    and threshold >= 1
                    and score >= 1
                    and score.is_integer()
                    and float(threshold).is_integer()
                )
            targets = [self._part(self.slots, (index, score_key), row, position)]
            for pattern in globs:
                if all(fnmatchcase(name, g) for g in pattern):
                    targets.append(
                        self._part(self.globbed, (pattern, index, score_key), row, position)
                    )
            for part in targets:
                part.scores.append(score)
                part.passed += passed
                part.judged += 1
                part.integral = integral
            if not passed:
                self._mark_below(row)
            if self.kept is not None:
                self.kept.append((test, index, score_key, score))

    def _merge_parts(self, table: dict[Any, Part], theirs: dict[Any, Part]) -> None:
        for key, part in theirs.items():
            mine = table.get(key)
            if mine is None:
                part.first += self.rows
                table[key] = part
            else:
                mine.extend(part)

    @staticmethod
    def _part(table: dict[Any, Part], key: Any, row: int, position: int) -> Part:
        part = table.get(key)
        if part is None:
            part = table[key] = Part(row, position)
        return part

    def merge(self, other: Tally) -> None:
        """Add a later chunk's tally (its row numbers count from 0)."""
        self._merge_parts(self.slots, other.slots)
        self._merge_parts(self.globbed, other.globbed)
        for name, corpus in other.corpus.items():
            self.corpus.setdefault(name, CorpusPart()).add(
                corpus.total, corpus.pairs, corpus.sentences, corpus.num_refs
            )
        if other.below:
            self.below.extend(bytes(max(0, self.rows - len(self.below))))
            self.below[self.rows :] = other.below
        self.rows += other.rows
        if self.kept is not None and other.kept:
            self.kept.extend(other.kept)


@dataclass(frozen=True)
class SlotInfo:
    """What the report and the gates know of a metric's scores besides the numbers."""

    evaluator: str  # "rouge"
    variant: str | None
    params: dict[str, Any]


def summaries(
    tally: Tally, info: Sequence[SlotInfo]
) -> tuple[list[MetricSummary], dict[str, bool]]:
    """One summary per label, in order of first appearance (as the plugin's), and which
    labels print whole numbers (judge scores)."""
    groups: dict[str, list[Part]] = {}
    ordered = sorted(tally.slots.items(), key=lambda kv: (kv[1].first, kv[0][0], kv[1].position))
    for (index, key), part in ordered:
        variant = info[index].variant
        groups.setdefault(metric_label(key, variant), []).append(part)
    out = []
    for label, parts in groups.items():
        scores = parts[0].scores if len(parts) == 1 else _joined(parts)
        out.append(
            MetricSummary.of(
                label,
                scores,
                passed=sum(p.passed for p in parts),
                judged=sum(p.judged for p in parts),
            )
        )
    return out, {label: parts[-1].integral for label, parts in groups.items()}


def _joined(parts: Sequence[Part]) -> array[float]:
    joined = array("d")
    for part in parts:
        joined.extend(part.scores)
    return joined


def corpus_key(gate: Gate) -> str:
    """The tally key of a corpus gate: gates with the same metric and filters share it."""
    return f"{gate.corpus_name} {gate.filters!r}"


def sentence_keys(gates: Sequence[Gate]) -> tuple[str, ...]:
    """Tally keys of the corpus gates whose pairs' statistics must be kept one by one:
    those a ``.ci_*`` gate bounds (its interval resamples sentences). Other corpus gates
    keep only sums, in constant memory, and show no interval."""
    return tuple(sorted({corpus_key(g) for g in gates if g.is_corpus and g.bound}))


def gate_globs(gate: Gate) -> Globs:
    """The ``test=`` patterns of ``gate`` (empty: every row)."""
    return tuple(value for key, value in gate.filters if key == "test")


def evaluate_gates(
    gates: Sequence[Gate], tally: Tally, info: Sequence[SlotInfo], *, seed: int = DEFAULT_SEED
) -> list[GateResult]:
    """Each gate's verdict from the tally, worded as the plugin's gates are.

    ``seed`` seeds the bootstrap intervals (``textsim_bootstrap_seed``).
    """
    from ..nlp.sacre import CorpusStats

    intervals: dict[str, tuple[Interval | None, str]] = {}

    reps = [
        ScoreRecord(info[i].evaluator, key, 0.0, None, None, params=info[i].params)
        for (i, key) in tally.slots
    ]
    results = []
    for gate in gates:
        if gate.is_corpus:
            summed = tally.corpus.get(corpus_key(gate))
            if summed is None or summed.total is None:
                results.append(corpus_result(gate, None))
                continue
            stats = CorpusStats(gate.corpus_name)
            stats.add_vector(summed.total, summed.pairs, summed.num_refs)
            key = corpus_key(gate)
            if key not in intervals:
                intervals[key] = corpus_interval_of(
                    gate.corpus_name, summed.pairs, summed.sentences, seed
                )
            results.append(corpus_result(gate, stats.result(), *intervals[key]))
            continue
        plain = tuple((k, v) for k, v in gate.filters if k != "test")
        globs = gate_globs(gate)
        chosen: list[Part] = []
        evaluators: list[str] = []
        for (index, key), part in sorted(tally.slots.items(), key=lambda kv: kv[1].first):
            if key != gate.metric or not matches(reps_of(info[index], key), plain):
                continue
            evaluators.append(info[index].evaluator)
            if globs:
                found = tally.globbed.get((globs, index, key))
                if found is not None:
                    chosen.append(found)
            else:
                chosen.append(part)
        scores = _joined(chosen) if len(chosen) != 1 else chosen[0].scores
        results.append(
            sentence_result(
                gate,
                scores,
                sum(p.passed for p in chosen),
                sum(p.judged for p in chosen),
                lambda gate=gate: nothing_recorded(gate, reps),  # type: ignore[misc]
                evaluators,
                seed=seed,
            )
        )
    return results


def reps_of(info: SlotInfo, key: str) -> ScoreRecord:
    """A score record without a score: what gate filters read (metric and parameters)."""
    return ScoreRecord(info.evaluator, key, 0.0, None, None, params=info.params)
