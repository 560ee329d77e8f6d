"""The HTML report of a 10,000-score run: time to write it, to open it, to sort and filter.

Builds a ``--textsim-json`` document of ``--scores`` scores (BLEU, ROUGE-1
precision/recall/F1 and METEOR of the shared parity corpus's pairs, texts kept,
about half failing, a baseline comparison), then

- writes the HTML report and prints the time (goal: under 2 s) and its size
  (goal: under 20 MB);
- opens it in headless Chromium (network off) and prints the time until its
  script has drawn the table (goal: under 3 s);
- sorts the table by each column and filters it by metric, verdict and test id
  text, printing the slowest (goal: under 300 ms), as the page measures it
  (``data-apply-ms``: filter, sort and drawing of the visible rows).

    NLTK_DATA=../shared/nltk_data .venv/bin/python benchmarks/bench_html.py
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_textsim import BleuScoreEvaluator, MeteorScoreEvaluator  # noqa: E402
from pytest_textsim.html import write  # noqa: E402

CORPUS = ROOT.parent / "shared" / "parity" / "corpus.jsonl"


def document(count: int, corpus: Path) -> dict[str, Any]:
    rows = [json.loads(line) for line in corpus.open(encoding="utf-8") if line.strip()]
    rng = random.Random(7)
    bleu, meteor = BleuScoreEvaluator(threshold=0.3), MeteorScoreEvaluator(threshold=0.5)
    from pytest_textsim import RougeScoreEvaluator

    rouge = RougeScoreEvaluator("rouge1")
    scores: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    test = 0
    while len(scores) < count:
        row = rows[test % len(rows)]
        texts = {"response": row["response"], "ground_truth": row["ground_truth"]}
        test_id = f"tests/test_app.py::test_answer[{row['id']}-{test}]"
        outputs = [
            ("bleu", "bleu_score", None, bleu(**texts)["bleu_score"], 0.3, {}),
            (
                "meteor",
                "meteor_score",
                None,
                meteor(**texts)["meteor_score"],
                0.5,
                {"alpha": 0.9, "beta": 3.0, "gamma": 0.5},
            ),
        ]
        r = rouge(**texts)
        for key in ("rouge_precision", "rouge_recall", "rouge_f1_score"):
            outputs.append(("rouge", key, "rouge1", r[key], 0.5, {"rouge_type": "rouge1"}))
        for evaluator, metric, variant, score, threshold, params in outputs:
            scores.append(
                {
                    "test_id": test_id,
                    "evaluator": evaluator,
                    "metric": metric,
                    "variant": variant,
                    "score": score,
                    "threshold": threshold,
                    "passed": score >= threshold,
                    "test_outcome": "passed",
                    "params": params,
                    "duration": 0.0004,
                    "reason": None,
                    "samples": None,
                    "texts": texts,
                }
            )
            old = min(1.0, max(0.0, score + rng.uniform(-0.05, 0.05)))
            kind = (
                "regression"
                if old - score > 0.02
                else "improvement"
                if score - old > 0.02
                else "unchanged"
            )
            label = f"{metric} ({variant})" if variant else metric
            changes.append(
                {
                    "kind": kind,
                    "test": test_id,
                    "evaluator": evaluator,
                    "metric": label,
                    "old": old,
                    "new": score,
                    "tolerance": 0.02,
                }
            )
        test += 1
    scores = scores[:count]
    return {
        "format": "pytest-textsim/1",
        "header": {"package": "pytest-textsim", "created": "2026-11-30T00:00:00Z", "texts": True},
        "summary": [],
        "failures": [],
        "scores": scores,
        "baseline": {
            "path": "baseline.json",
            "changes": changes[:count],
            "counts": {"regression": sum(c["kind"] == "regression" for c in changes)},
        },
    }


def open_in_chromium(page: Path) -> dict[str, float]:
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from webdriver_client import Chrome

    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1300,1600",
    ]
    profile = tempfile.mkdtemp(prefix="textsim-bench-")
    driver = Chrome(
        shutil.which("chromedriver") or "chromedriver",
        shutil.which("chromium") or "chromium",
        [*flags, f"--user-data-dir={profile}"],
        logging={},
    )

    def apply_ms() -> float:
        return float(driver.execute_script("return document.body.getAttribute('data-apply-ms')"))

    def select(element_id: str, value: str | None = None, index: int | None = None) -> None:
        driver.execute_script(
            "var s = document.getElementById(arguments[0]);"
            "if (arguments[1] !== null) { s.value = arguments[1]; }"
            "else { s.selectedIndex = arguments[2]; }"
            "s.dispatchEvent(new Event('change'));",
            element_id,
            value,
            index,
        )

    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd(
            "Network.emulateNetworkConditions",
            {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
        )
        start = time.perf_counter()
        driver.get(page.resolve().as_uri())  # returns after the load event: script has run
        ready = driver.execute_script("return document.body.getAttribute('data-ready')")
        opened = time.perf_counter() - start
        assert ready == "1", "the page's script did not finish"
        # performance.now() at the end of the script: from navigation start, page-side.
        drawn = (
            driver.execute_script(
                "return performance.getEntriesByType('navigation')[0].loadEventEnd"
            )
            / 1000
        )
        timings: dict[str, float] = {"open_s": opened, "load_event_s": drawn}
        applies: list[float] = []
        for column in range(7):
            header = driver.find_element(
                "css selector", f'th[data-col="{column if column < 6 else 7}"]'
            )
            for _ in range(2):  # ascending, then descending
                header.click()
                applies.append(apply_ms())
        select("f-verdict", value="fail")
        applies.append(apply_ms())
        select("f-metric", index=1)
        applies.append(apply_ms())
        select("f-verdict", value="")
        driver.find_element("css selector", "#f-text").send_keys("test_answer[dev-1")
        applies.append(apply_ms())
        rows = driver.execute_script("return document.querySelectorAll('#rows tr.row').length")
        timings.update(
            max_apply_ms=max(applies),
            mean_apply_ms=sum(applies) / len(applies),
            applies=len(applies),
            visible_rows=rows,
        )
        return timings
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scores", type=int, default=10_000)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--repeat", type=int, default=3, help="times to write the report")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    doc = document(args.scores, args.corpus)
    failing = sum(1 for s in doc["scores"] if s["passed"] is False)
    print(f"document: {len(doc['scores'])} scores, {failing} failing, texts kept")
    folder = Path(tempfile.mkdtemp(prefix="textsim-bench-html-"))
    page = folder / "report.html"
    times = []
    for _ in range(args.repeat):
        # A fresh process would also pay for the tokenizer's memo; clear it to be fair.
        from pytest_textsim.nlp.tokenize import nltk_tokens

        nltk_tokens.cache_clear()
        start = time.perf_counter()
        write(page, doc)
        times.append(time.perf_counter() - start)
    size = os.path.getsize(page)
    print(
        f"write: best {min(times):.3f} s, worst {max(times):.3f} s over {args.repeat} "
        f"(goal < 2 s); size {size / 1e6:.2f} MB (goal < 20 MB)"
    )
    if not args.no_browser:
        t = open_in_chromium(page)
        print(
            f"open in headless Chromium: {t['open_s']:.3f} s to the load event "
            f"(page-side {t['load_event_s']:.3f} s; goal < 3 s)"
        )
        print(
            f"sort/filter of {len(doc['scores'])} rows: slowest {t['max_apply_ms']:.1f} ms, "
            f"mean {t['mean_apply_ms']:.1f} ms over {t['applies']} (goal < 300 ms)"
        )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
