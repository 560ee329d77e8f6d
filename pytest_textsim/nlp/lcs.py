"""The longest common subsequence of two token lists, for ROUGE-L.

:func:`lcs_length` is the score's (bit-parallel, Hyyrö 2004);
:func:`lcs_pairs` one subsequence as rouge-score reads it out of the whole
table (rougeLsum's score depends on which), from a block of rows at a time;
:func:`lcs_alignment` one as long, in memory linear in the texts (Hirschberg
1975), for explanations.
"""

from __future__ import annotations

import itertools
import math
import operator
from array import array
from collections.abc import Container, Sequence
from typing import Callable


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (bit-parallel, Hyyrö 2004).

    Equal to ``rouge_score.rouge_scorer._lcs_table(a, b)[-1][-1]``, in
    O(len(a) * len(b) / wordsize) instead of a Python double loop, and in
    memory linear in the texts (:func:`_last_row`'s strips of ``a``).
    """
    return len(a) - _ones(_last_row(a, b))


def lcs_pairs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """One longest common subsequence of ``a`` and ``b`` as ``(index in a, index in b)`` pairs,
    the one rouge-score's ``_backtrack_norec`` reads out (rougeLsum's score depends
    on which).

    The walk back needs, at each step, two bits of the table's rows: whether
    the LCS grows by one from ``a[:i - 1]`` to ``a[:i]`` (a zero bit of the row
    of :func:`lcs_length`) and from ``b[:j - 1]`` to ``b[:j]`` (a carry of the
    addition that made the row). Every ``step``-th row is kept on the way
    forward, and the rows of one block of ``step`` rows at a time made again
    on the way back, as bytes: about 2 * sqrt(2 * len(b)) rows of len(a) / 8
    bytes, besides the masks (len(a) / 8 bytes per distinct token of ``b``
    found in ``a``), and twice the time of :func:`lcs_length`. The length is
    the score's (``len(pairs) == lcs_length(a, b)``).
    """
    width, height = len(a), len(b)
    if not width or not height:
        return []
    get = _masks(a, set(b)).get
    full = (1 << width) - 1
    step = _pairs_step(width, height)
    checkpoints = []  # the row before b[0], b[step], b[2 * step], ...
    v = full
    for j, token in enumerate(b):
        if j % step == 0:
            checkpoints.append(v)
        u = v & get(token, 0)
        v = ((v + u) | (v - u)) & full
    size = (width >> 3) + 1  # bit `width` of a carry row is the carry out
    pairs = []
    i, j = width, height
    while i > 0 and j > 0:
        lo = (j - 1) // step * step
        # Rows lo + 1 .. j: zeros[r] (bit k zero: the LCS of b[:lo + r + 1] grows
        # at a[k]) and carries[r] (bit k set: the LCS of a[:k] grows at b[lo + r]).
        zeros, carries = [], []
        v = checkpoints[lo // step]
        for token in b[lo:j]:
            u = v & get(token, 0)
            total = v + u
            carries.append((total ^ v ^ u).to_bytes(size, "little"))
            v = (total | (v - u)) & full
            zeros.append(v.to_bytes(size, "little"))
        while i > 0 and j > lo:
            if a[i - 1] == b[j - 1]:
                i -= 1
                j -= 1
                pairs.append((i, j))
                continue
            # table(j, i) - table(j - 1, i) is the carry into bit i; table(j, i) -
            # table(j, i - 1) is 1 where bit i - 1 of the row is zero. rouge-score
            # steps back in b unless the first is 1 and the second 0.
            k = i - 1
            if carries[j - 1 - lo][i >> 3] >> (i & 7) & zeros[j - 1 - lo][k >> 3] >> (k & 7) & 1:
                i -= 1
            else:
                j -= 1
    pairs.reverse()
    return pairs


def _pairs_step(width: int, height: int) -> int:
    """The rows per block of :func:`lcs_pairs`: all of them when the whole table
    fits in :data:`ALIGNMENT_ROW_BYTES`, else about sqrt(height / 2), which keeps
    the fewest rows (checkpoints and one block's zeros and carries)."""
    if 2 * height * (width // 8 + 40) <= ALIGNMENT_ROW_BYTES:
        return height
    return max(1, math.isqrt(height // 2))


def _pairs_bytes(width: int, height: int) -> int:
    """About the most bytes :func:`lcs_pairs` keeps at once: its rows, and its masks
    (one of ``width`` bits per distinct token, of which there are at most
    ``min(width, height)``)."""
    step = _pairs_step(width, height)
    rows = 2 * height if step == height else -(-height // step) + 2 * step
    return (rows + min(width, height)) * (width // 8 + 40)


#: The most bytes of rows and masks :func:`lcs_pairs` keeps at once without
#: checkpoints, and :func:`lcs_alignment` in one part: a larger problem is split
#: in two (Hirschberg) until its parts fit.
ALIGNMENT_ROW_BYTES = 1 << 22


def lcs_alignment(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """A longest common subsequence of ``a`` and ``b`` as ``(index in a, index in b)``
    pairs, in memory linear in the texts (what explanations show).

    Hirschberg's divide and conquer: the LCS lengths of the first half of ``b``
    with every prefix of ``a``, and of the second half with every suffix, come
    from one bit-parallel pass each (as :func:`lcs_length` computes them); the
    split of ``a`` where their sum is largest halves the problem. Parts whose
    rows and masks fit in :data:`ALIGNMENT_ROW_BYTES` are aligned by
    :func:`lcs_pairs`.
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
        if _pairs_bytes(width, height) <= ALIGNMENT_ROW_BYTES or height == 1:
            part = lcs_pairs(a[a_lo:a_hi], b[b_lo:b_hi])
            pairs.extend((i + a_lo, j + b_lo) for i, j in part)
            continue
        mid = (b_lo + b_hi) // 2
        head = _last_row(a[a_lo:a_hi], b[b_lo:mid])
        tail = _last_row(a[a_lo:a_hi][::-1], b[mid:b_hi][::-1])
        k = _best_split(head, tail, width)
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
        carry_out = full + 1
        for j, token in enumerate(b):
            mask = get(token)
            carry = carries[j]
            if mask is None:
                if not carry:
                    continue  # the row is the one before
                mask = 0
            u = v & mask
            total = v + u + carry if carry else v + u
            if total > full:
                carries[j] = 1
                total -= carry_out
            elif carry:
                carries[j] = 0
            v = total | (v - u)  # u is within v: no borrow
        row |= v << start
    return row


def _best_split(head: int, tail: int, width: int) -> int:
    """The first k (0 .. width) where the LCS of the first half of ``b`` with
    ``a[:k]`` plus that of the second half with ``a[k:]`` is largest.

    ``head`` and ``tail`` are :func:`_last_row`'s of the halves, the tail's on
    both texts reversed: k minus the ones among the first k bits of the head,
    plus (width - k) minus the ones among the first width - k bits of the tail.
    That is the least, from k to k + 1, by a step of head bit k less tail bit
    width - 1 - k: the first k where these steps' running sum is least. The
    running sums take 8 bytes a bit (an ``array``, no int per bit).
    """
    # Binary digits, most significant first: the head's reversed is bit k at k, the
    # tail's as it is bit width - 1 - k at k.
    steps = map(
        operator.sub,
        format(head, f"0{width}b").encode()[::-1],
        format(tail, f"0{width}b").encode(),
    )
    sums = array("q", itertools.accumulate(steps, initial=0))
    return sums.index(min(sums))


#: The one bits of an int: ``int.bit_count`` from Python 3.10, else counted in its binary digits.
_ones: Callable[[int], int] = getattr(int, "bit_count", None) or (lambda v: bin(v).count("1"))
