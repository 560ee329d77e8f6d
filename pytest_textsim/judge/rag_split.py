"""RAG judgments over more chunks than the judge's context holds: groups that fit, merged.

Every RAG judgment about chunks is one call when its texts fit the judge's
context (``textsim_judge_context_tokens``). When they do not, the chunks are
split, in retrieval order, into consecutive groups that fit beside the rest
of the request (the prompt, the claims, the query), each group is asked on its
own, and the replies are merged into the verdicts one call would have given:

- a list of verdicts on **chunks** is the groups' lists one after another;
- a list of verdicts on **claims** takes, for each claim, the first verdict
  in the order of the prompt's words (``supported`` before ``contradicted``
  before ``not_found``; ``attributed`` before ``not_attributed``) that any
  group gave, naming its chunk by its place in the whole context.

Nothing is ever cut: a chunk, or a text, that alone does not fit is a
:class:`JudgeError` saying how large it is and which setting to raise.

Tokens are estimated, without a tokenizer, at :data:`CHARS_PER_TOKEN`
characters a token, fewer than English text averages with the OpenAI and
Anthropic tokenizers (about 4), so that the estimate errs on the large side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..evaluator import Chunk
from .errors import JudgeError
from .rag_prompts import Verdict, VerdictPrompt

#: Characters counted as one token.
CHARS_PER_TOKEN = 3
#: Tokens counted for each chunk's tags and for the messages' framing.
CHUNK_TAGS = 8
FRAMING = 200


def estimated_tokens(text: str | None) -> int:
    """The tokens ``text`` is counted as: its characters over :data:`CHARS_PER_TOKEN`,
    rounded up."""
    return -(-len(text or "") // CHARS_PER_TOKEN)


def request_tokens(prompt: VerdictPrompt | object, inputs: Mapping[str, str | None]) -> int:
    """The tokens one request of ``prompt`` on ``inputs`` is counted as."""
    words = getattr(prompt, "system", "") + getattr(prompt, "answer_format", "")
    return FRAMING + estimated_tokens(words) + sum(estimated_tokens(v) for v in inputs.values())


def too_large(metric: str, tokens: int, limit: int, setting: str, what: str) -> JudgeError:
    """The error for a request that does not fit however it is split."""
    return JudgeError(
        f"{metric}: {what} about {tokens:,} tokens, over the judge's context of {limit:,} "
        f"({setting}); texts are never truncated: raise {setting} for a judge that reads "
        "more, or give shorter texts or chunks"
    )


def chunk_groups(
    chunks: Sequence[Chunk], fixed: int, limit: int, *, metric: str, setting: str
) -> list[range]:
    """The chunks' positions in consecutive groups, each of which fits ``limit`` tokens
    beside ``fixed`` tokens of the rest of the request; one group when all fit."""
    sizes = [estimated_tokens(chunk.text) + CHUNK_TAGS for chunk in chunks]
    if fixed + sum(sizes) <= limit:
        return [range(len(chunks))]
    groups, start, used = [], 0, fixed
    for k, size in enumerate(sizes):
        if fixed + size > limit:
            rest = f" with the rest of the request (about {fixed:,} tokens)"
            raise too_large(metric, fixed + size, limit, setting, f"context[{k}] is{rest}")
        if used + size > limit:
            groups.append(range(start, k))
            start, used = k, fixed
        used += size
    groups.append(range(start, len(chunks)))
    return groups


def merged(
    prompt: VerdictPrompt, groups: Sequence[range], replies: Sequence[Mapping[str, list[Verdict]]]
) -> dict[str, list[Verdict]]:
    """The verdicts one call on every chunk would give, from each group's reply (see
    the module's docstring); chunk numbers count in the whole context, from 1."""
    out: dict[str, list[Verdict]] = {}
    for one in prompt.lists:
        if one.item == "chunk":
            out[one.key] = [
                replace(verdict, index=group.start + verdict.index)
                for group, reply in zip(groups, replies)
                for verdict in reply[one.key]
            ]
            continue
        verdicts = []
        for position in range(len(replies[0][one.key])):
            _, k = min(
                (one.words.index(reply[one.key][position].verdict), k)
                for k, reply in enumerate(replies)
            )
            verdict = replies[k][one.key][position]
            if verdict.chunk is not None:
                verdict = replace(verdict, chunk=groups[k].start + verdict.chunk)
            verdicts.append(verdict)
        out[one.key] = verdicts
    return out
