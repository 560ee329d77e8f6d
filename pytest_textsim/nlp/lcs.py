"""The longest common subsequence of two token lists, for ROUGE-L.

:func:`lcs_length` is the score's (bit-parallel, Hyyrö 2004);
:func:`lcs_pairs` one subsequence as rouge-score reads it out of the whole
table (rougeLsum's score depends on which); :func:`lcs_alignment` one as long,
in memory linear in the texts (Hirschberg 1975), for explanations.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Container, Sequence
from typing import Callable


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (bit-parallel, Hyyrö 2004).

    Equal to ``rouge_score.rouge_scorer._lcs_table(a, b)[-1][-1]``, in
    O(len(a) * len(b) / wordsize) instead of a Python double loop.
    """
    get = _masks(a, set(b)).get
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        u = v & get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - _ones(v)


def lcs_pairs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """One longest common subsequence of ``a`` and ``b`` as ``(index in a, index in b)`` pairs,
    the one rouge-score's ``_backtrack_norec`` reads out (rougeLsum's score depends
    on which).

    The bit-parallel rows of :func:`lcs_length` are kept and walked back, so the
    length is the score's (``len(pairs) == lcs_length(a, b)``), in
    O(len(a) * len(b) / wordsize) time and len(a) * len(b) / 8 bytes: for
    sentences. Explanations use :func:`lcs_alignment`, in linear space.
    """
    get = _masks(a, set(b)).get
    full = (1 << len(a)) - 1
    rows = [full]
    v = full
    for token in b:
        u = v & get(token, 0)
        v = ((v + u) | (v - u)) & full
        rows.append(v)

    def table(j: int, i: int) -> int:
        # LCS of b[:j] and a[:i]: the zero bits among the first i bits of row j.
        return i - _ones(rows[j] & ((1 << i) - 1))

    pairs = []
    i, j = len(a), len(b)
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1] and table(j, i) == table(j - 1, i - 1) + 1:
            pairs.append((i - 1, j - 1))
            i -= 1
            j -= 1
        elif table(j - 1, i) >= table(j, i - 1):
            j -= 1
        else:
            i -= 1
    pairs.reverse()
    return pairs


#: The most bytes of bit-parallel rows :func:`lcs_alignment` keeps at once: a
#: larger problem is split in two (Hirschberg) until its parts fit.
ALIGNMENT_ROW_BYTES = 1 << 20


def lcs_alignment(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """A longest common subsequence of ``a`` and ``b`` as ``(index in a, index in b)``
    pairs, in memory linear in the texts (what explanations show).

    Hirschberg's divide and conquer: the LCS lengths of the first half of ``b``
    with every prefix of ``a``, and of the second half with every suffix, come
    from one bit-parallel pass each (as :func:`lcs_length` computes them); the
    split of ``a`` where their sum is largest halves the problem. Parts whose
    rows fit in :data:`ALIGNMENT_ROW_BYTES` are aligned by :func:`lcs_pairs`.
    About twice the time of :func:`lcs_length`; ``len(pairs) == lcs_length(a, b)``.
    A pair small enough for one part gives :func:`lcs_pairs`' alignment.
    """
    pairs: list[tuple[int, int]] = []
    # Parts (a_lo, a_hi, b_lo, b_hi) still to align, the leftmost last.
    todo = [(0, len(a), 0, len(b))]
    while todo:
        a_lo, a_hi, b_lo, b_hi = todo.pop()
        if a_lo == a_hi or b_lo == b_hi:
            continue
        width, height = a_hi - a_lo, b_hi - b_lo
        if (height + 1) * (width // 8 + 40) <= ALIGNMENT_ROW_BYTES or height == 1:
            part = lcs_pairs(a[a_lo:a_hi], b[b_lo:b_hi])
            pairs.extend((i + a_lo, j + b_lo) for i, j in part)
            continue
        mid = (b_lo + b_hi) // 2
        # Zero bits among the first k bits: LCS(b[b_lo:mid], a[a_lo:a_lo + k]) = k - ones;
        # likewise for the reversed second half and the suffixes of a.
        head = _prefix_ones(_last_row(a[a_lo:a_hi], b[b_lo:mid]), width)
        tail = _prefix_ones(_last_row(a[a_lo:a_hi][::-1], b[mid:b_hi][::-1]), width)
        # LCS = width - (ones of the head at k + ones of the tail at width - k): the
        # fewest ones, at the first k that has them (_prefix_ones counts with an
        # offset that is the same for every k).
        sums = list(map(operator.add, head, reversed(tail)))
        k = sums.index(min(sums))
        todo.append((a_lo + k, a_hi, mid, b_hi))
        todo.append((a_lo, a_lo + k, b_lo, mid))
    return pairs


def _masks(a: Sequence[str], wanted: Container[str]) -> dict[str, int]:
    """The positions in ``a`` of each token in ``wanted`` as the bits of an int (one
    of ``len(a)`` bits per token at worst: only the tokens looked up are made)."""
    where: dict[str, list[int]] = {}
    for i, token in enumerate(a):
        seen = where.get(token)
        if seen is not None:
            seen.append(i)
        elif token in wanted:
            where[token] = [i]
    masks: dict[str, int] = {}
    for token, positions in where.items():
        if len(positions) < 4:
            mask = 0
            for i in positions:
                mask |= 1 << i
        else:  # set in bytes: or-ing into an int copies it at every position
            bits = bytearray((positions[-1] >> 3) + 1)
            for i in positions:
                bits[i >> 3] |= 1 << (i & 7)
            mask = int.from_bytes(bits, "little")
        masks[token] = mask
    return masks


#: Bits of ``a`` :func:`_last_row` works on at once: the masks of one strip take at
#: most (tokens in it) * STRIP_BITS / 8 bytes, whatever the length of ``a``.
STRIP_BITS = 1 << 15


def _last_row(a: Sequence[str], b: Sequence[str]) -> int:
    """The bit vector of :func:`lcs_length` after the whole of ``b``: bit ``i`` is 0
    where the LCS of ``b`` and ``a[:i + 1]`` is one longer than with ``a[:i]``.

    Computed in strips of :data:`STRIP_BITS` bits of ``a``, left to right, each
    row's carry of the addition kept for the next strip: the same vector, in
    memory linear in the texts (the masks of the whole of ``a`` may take
    len(a) / 8 bytes per distinct token).
    """
    wanted = set(b)
    if len(a) <= STRIP_BITS:
        get = _masks(a, wanted).get
        full = (1 << len(a)) - 1
        v = full
        for token in b:
            mask = get(token)
            if mask is not None:  # else the row is the one before
                u = v & mask
                v = ((v + u) | (v - u)) & full
        return v
    carries = bytearray(len(b))
    row = 0
    for start in range(0, len(a), STRIP_BITS):
        strip = a[start : start + STRIP_BITS]
        get = _masks(strip, wanted).get
        width = len(strip)
        full = (1 << width) - 1
        v = full
        for j, token in enumerate(b):
            mask = get(token)
            if mask is None:
                if not carries[j]:
                    continue  # the row is the one before
                mask = 0
            u = v & mask
            total = v + u + carries[j]
            carries[j] = total >> width
            v = (total & full) | (v - u)  # u is within v: no borrow
        row |= v << start
    return row


def _prefix_ones(v: int, width: int) -> list[int]:
    """For k = 0 .. width: the one bits among the first k bits of ``v``, plus 48 * k
    (the digits' character codes, summed as they are)."""
    return list(itertools.accumulate(format(v, f"0{width}b").encode()[::-1], initial=0))


#: The one bits of an int: ``int.bit_count`` from Python 3.10, else counted in its binary digits.
_ones: Callable[[int], int] = getattr(int, "bit_count", None) or (lambda v: bin(v).count("1"))
