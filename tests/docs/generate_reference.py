"""Generate the docs' tables of settings and metrics from the code that defines them.

``python tests/docs/generate_reference.py`` rewrites the generated parts of
docs/configuration.md (from the settings table), docs/pytest.md (from the
metric table) and docs/cli.md (``textsim score --metric``'s names, as its
``--help`` lists them); ``test_generated_reference.py`` fails when they are stale. A
generated part sits between ``<!-- generated: NAME -->`` and
``<!-- end generated: NAME -->``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
COMMAND = "python tests/docs/generate_reference.py"


def _settings() -> dict[str, Any]:
    from pytest_textsim.settings.table import SETTINGS

    return SETTINGS


def _metrics() -> dict[str, Any]:
    from pytest_textsim.catalog import METRICS

    return METRICS


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def typed_default(setting: Any) -> str | None:
    """The setting's default as a user would type it; None when it has none."""
    if setting.default_text is not None:
        return str(setting.default_text)
    value = setting.default
    if value is None or value == [] or value == ():
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float, str)):
        return str(value)
    # A Python value shown as its repr ("(None, None)") is no value anyone types.
    raise ValueError(
        f"{setting.name}: the default {value!r} is not text; give its Setting a default_text"
    )


def _default(setting: Any) -> str:
    text = typed_default(setting)
    return "" if text is None else f"`{text}`"


def settings_table() -> str:
    rows = [
        "| ini key | command line | environment | default | meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    for setting in _settings().values():
        ini = f"`{setting.ini_name}`" if setting.ini else "(none)"
        if setting.secret:
            ini = f"(refused: `{setting.ini_name}`)"
        flag = "(none)"
        if setting.flag:
            flag = f"`{setting.flag_name}`"
            if setting.metavar and setting.flag_action != "store_true":
                flag = f"`{setting.flag_name}={setting.metavar}`"
        env = ", ".join(f"`{name}`" for name in setting.env) or "(none)"
        cells = (ini, flag, env, _default(setting), setting.help)
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(rows)


def metrics_table() -> str:
    rows = [
        "| metric | fixture | helper | texts | score keys (`score=`) | passes when | "
        "default threshold | baseline tolerance | calls a model | options |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for metric in _metrics().values():
        texts = ", ".join([*metric.inputs, *(f"[{name}]" for name in metric.optional_inputs)])
        keys = ", ".join(f"`{key}` ({alias})" for alias, key in metric.score_keys.items())
        low, high = metric.threshold_range
        setting = f"textsim_{metric.threshold_setting}"
        # None: the evaluator picks its own default (a rubric's depends on its scale).
        default = "its own" if metric.default_threshold is None else f"{metric.default_threshold:g}"
        threshold = f"{default} (`{setting}`, {low:g}..{high:g})"
        options = ", ".join(
            f"`{name}={metric.option_defaults[name]!r}`"
            if name in metric.option_defaults
            else f"`{name}` (required)"
            if name in metric.leading_options
            else f"`{name}`"
            for name in metric.options
        )
        cells = (
            metric.label,
            f"`{metric.fixture}`",
            f"`{metric.helper}`",
            texts,
            keys,
            ">= threshold" if metric.higher_is_better else "<= threshold",
            threshold,
            f"{metric.baseline_drop:g}",
            "yes" if metric.calls_model else "no",
            options,
        )
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(rows)


def cli_metrics_table() -> str:
    """What ``textsim score --metric`` accepts, as its ``--help`` lists it."""
    from pytest_textsim.cli.score_parser import metric_names

    rows = ["| `--metric` | notes |", "| --- | --- |"]
    for name, notes in metric_names():
        cells = (f"`{name}`", "; ".join(notes))
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(rows)


GENERATED: dict[str, tuple[str, Callable[[], str]]] = {
    "settings": ("docs/configuration.md", settings_table),
    "metrics": ("docs/pytest.md", metrics_table),
    "cli-metrics": ("docs/cli.md", cli_metrics_table),
}


def block_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- generated: {name} -->\n)(.*?)(<!-- end generated: {name} -->)", re.S)


def current(name: str) -> str | None:
    """The generated part as the page has it now, or None when the markers are missing."""
    page, _ = GENERATED[name]
    match = block_pattern(name).search((ROOT / page).read_text(encoding="utf-8"))
    return match[2] if match else None


def expected(name: str) -> str:
    _, make = GENERATED[name]
    return make() + "\n"


def main() -> int:
    for name, (page, _) in GENERATED.items():
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        new, count = block_pattern(name).subn(
            lambda m, name=name: m[1] + expected(name) + m[3], text
        )
        if count != 1:
            print(f"{page}: no '<!-- generated: {name} -->' part", file=sys.stderr)
            return 1
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"{page}: {name} table rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
