"""A test's scores as a small HTML fragment, for other reports (pytest-html's extras).

Inline styles only (the host page's stylesheet does not know our classes);
every text escaped. Failing n-gram scores with texts show their explanation:
the summary lines and the ground truth with what the response misses marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..formatting import html_text as escape
from ..nlp.explain import explain
from .agent import agent_detail
from .model import _explain_options, _number, label, rag_detail, verdict

_COLOURS = MappingProxyType(
    {
        "matched": "#c8e6c9",
        "stem": "#b2ebf2",
        "synonym": "#d1c4e9",
        "missing": "#ffcdd2",
        "extra": "#ffe0b2",
    }
)


def _marked(text: str, highlights: Sequence[Mapping[str, Any]]) -> str:
    out, position = [], 0
    for h in sorted(highlights, key=lambda h: int(h["start"])):
        start, end = int(h["start"]), int(h["end"])
        if start < position:
            continue
        out.append(escape(text[position:start]))
        colour = _COLOURS.get(str(h["kind"]), "#eeeeee")
        out.append(
            f'<mark style="background:{colour}" title="{escape(str(h["kind"]))}">'
            f"{escape(text[start:end])}</mark>"
        )
        position = end
    out.append(escape(text[position:]))
    return "".join(out)


_WORDS = MappingProxyType({"fail": "FAIL", "none": "-"})


def _fmt(value: Any) -> str:
    number = _number(value)
    return "-" if number is None else f"{number:.3f}"


_TONE_COLOURS = MappingProxyType({"good": "#2e7d32", "bad": "#c62828", "miss": "#ef8f00"})
_CHUNK_BACKGROUNDS = MappingProxyType({"support": "#e8f5e9", "against": "#ffebee"})


def _rag_html(score: Mapping[str, Any], rag: Mapping[str, Any]) -> str:
    """A failing RAG score's claims with their verdicts, then its chunks in order, the
    ones a claim rests on (or goes against) shaded and saying which claims."""
    parts = [f"<div><b>{escape(label(score))}</b>"]
    for side in rag["sides"]:
        items = "".join(
            f'<li value="{c["n"] + 1}"><b style="color:{_TONE_COLOURS[c["tone"]]}">'
            f"{escape(c['verdict'])}</b> {escape(c['claim'])}"
            + (f" (context[{c['chunk']}])" if "chunk" in c else "")
            + "</li>"
            for c in side["claims"]
        )
        name = "ground truth" if side["name"] == "ground_truth" else "response"
        parts.append(f"<p>claims of the {name}:</p><ol>{items}</ol>")
    if rag["chunks"]:
        listed = []
        for k, chunk in enumerate(rag["chunks"]):
            background = _CHUNK_BACKGROUNDS.get(chunk.get("mark", ""), "transparent")
            said = [
                ("supports" if how == "support" else "contradicts" if how == "against"
                 else "cited by") + f" claim {n + 1}"
                for n, how in chunk["cited"]
            ]  # fmt: skip
            extra = f" [{escape(chunk['verdict'])}]" if "verdict" in chunk else ""
            extra += f" ({escape(', '.join(said))})" if said else ""
            listed.append(
                f'<li style="background:{background}">context[{k}]'
                + (f" {escape(chunk['label'])}" if chunk["label"] else "")
                + f"{extra}: {escape(chunk['text'])}</li>"
            )
        parts.append(f"<p>chunks in retrieval order:</p><ul>{''.join(listed)}</ul>")
    return "".join(parts) + "</div>"


def _verdict_html(row: Mapping[str, Any]) -> str:
    said = f'<b style="color:{_TONE_COLOURS[row["tone"]]}">{escape(row["verdict"])}</b>'
    return said + (f" ({escape(row['reason'])})" if row["reason"] else "")


def _agent_html(score: Mapping[str, Any], agent: Mapping[str, Any]) -> str:
    """A failing agent score's trajectory, each step with the judge's verdict on it (if
    it gave one), the verdicts on no kept step, then the requirements or plan items."""
    parts = [f"<div><b>{escape(label(score))}</b>"]
    if agent["steps"]:
        items = "".join(
            f'<li value="{s["n"]}">{escape(s["kind"])} <code>{escape(s.get("name", ""))}'
            + (f"({escape(s['arguments'])})" if "arguments" in s else "")
            + "</code>"
            + (f" {_verdict_html(s)}" if "verdict" in s else "")
            + "</li>"
            for s in agent["steps"]
        )
        parts.append(f"<p>trajectory:</p><ol>{items}</ol>")
    if agent["loose"]:
        items = "".join(
            f"<li>{escape(v['label'])}: {_verdict_html(v)}</li>" for v in agent["loose"]
        )
        parts.append(f"<p>verdicts:</p><ul>{items}</ul>")
    for one in agent["lists"]:
        items = "".join(f"<li>{escape(v['text'])}: {_verdict_html(v)}</li>" for v in one["rows"])
        parts.append(f"<p>{escape(one['title'])}:</p><ol>{items}</ol>")
    return "".join(parts) + "</div>"


def scores_fragment(scores: Sequence[Mapping[str, Any]]) -> str:
    """``scores`` (JSON report score dicts of one test) as an HTML table and explanations."""
    if not scores:
        return ""
    rows = []
    details = []
    explained: set[tuple[Any, ...]] = set()
    for score in scores:
        passed = score.get("passed")
        said = verdict(score)
        colour = {"pass": "#2e7d32", "fail": "#c62828", "none": "#757575"}.get(said, "#ef8f00")
        rows.append(
            f"<tr><td>{escape(label(score))}</td><td>{_fmt(score.get('score'))}</td>"
            f"<td>{_fmt(score.get('threshold'))}</td>"
            f'<td style="color:{colour};font-weight:600">{_WORDS.get(said, said)}</td></tr>'
        )
        texts = score.get("texts") if isinstance(score.get("texts"), dict) else None
        how = _explain_options(score)
        if passed is not False or not texts or how is None:
            if passed is False and score.get("reason"):
                details.append(f"<p><b>reason:</b> {escape(str(score['reason']))}</p>")
            rag = rag_detail(score) if passed is False else None
            if rag is not None:
                details.append(_rag_html(score, rag))
            agent = agent_detail(score) if passed is False else None
            if agent is not None:
                details.append(_agent_html(score, agent))
            continue
        assert texts is not None
        response, truth = texts.get("response"), texts.get("ground_truth")
        if isinstance(truth, list) and truth and all(isinstance(t, str) for t in truth):
            truth = tuple(truth)  # a list of references: the best one is shown
        if not isinstance(response, str) or not isinstance(truth, (str, tuple)):
            continue
        name, options = how
        key = (name, tuple(sorted(options.items())), response, truth)
        if key in explained:
            continue
        explained.add(key)
        try:
            given = truth if isinstance(truth, str) else list(truth)
            result = explain(name, response=response, ground_truth=given, **options)
        except (ValueError, TypeError, LookupError, OSError):
            continue
        if not isinstance(truth, str):
            truth = truth[int(result.get("reference", 0))]  # a list of one: that one
        lines = "".join(f"<li>{escape(line)}</li>" for line in result["summary"])
        details.append(
            f"<div><b>{escape(label(score))}</b><ul>{lines}</ul>"
            '<div style="display:flex;gap:8px">'
            '<pre style="white-space:pre-wrap;flex:1;border:1px solid #ddd;padding:4px">'
            f"{_marked(response, result['highlights']['response'])}</pre>"
            '<pre style="white-space:pre-wrap;flex:1;border:1px solid #ddd;padding:4px">'
            f"{_marked(truth, result['highlights']['ground_truth'])}</pre></div></div>"
        )
    return (
        '<div class="textsim-scores"><table style="border-collapse:collapse">'
        "<tr><th>textsim metric</th><th>score</th><th>threshold</th><th>result</th></tr>"
        f"{''.join(rows)}</table>{''.join(details)}</div>"
    )
