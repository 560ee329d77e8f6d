"""A judge provider from outside the package: a distribution built in a folder
(its module and a ``.dist-info`` with ``entry_points.txt``), found by
``importlib.metadata`` once the folder is on ``sys.path``, as an installed one is."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

#: The provider's module: only connect, chat and read written, the rest BaseProvider's.
MODULE = '''
"""textsim_lab: a judge provider of another package."""

import json

from pytest_textsim import BaseProvider


class LabProvider(BaseProvider):
    name = "lab"
    title = "Lab"

    def connect(self, spec, url, headers, http, timeout, asynchronous=False):
        import openai

        kind = openai.AsyncOpenAI if asynchronous else openai.OpenAI
        return kind(api_key=spec.api_key, base_url=url, default_headers=headers,
                    http_client=http, max_retries=0, timeout=timeout)

    def chat(self, client, spec, sampling, messages, extra):
        return client.chat.completions.with_raw_response.create(
            model=spec.model, messages=messages, max_tokens=sampling["max_tokens"],
            temperature=sampling["temperature"], **extra)

    def read(self, body):
        reply = json.loads(body)
        choice, usage = reply["choices"][0], reply["usage"]
        return (choice["message"]["content"], usage["prompt_tokens"],
                usage["completion_tokens"], choice["finish_reason"],
                {"served_model": reply.get("model", ""), "fingerprint": ""})


class NamedOpenAI(LabProvider):
    name = "openai"
'''


def install(
    root: Path, monkeypatch: pytest.MonkeyPatch, entry_points: str = "lab = textsim_lab:LabProvider"
) -> Path:
    """Write the distribution ``textsim-lab`` under ``root`` and put ``root`` on
    ``sys.path``: its ``entry_points.txt`` declares ``entry_points`` in the group
    ``pytest_textsim.providers``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "textsim_lab.py").write_text(MODULE, encoding="utf-8")
    info = root / "textsim_lab-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: textsim-lab\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[pytest_textsim.providers]\n" + textwrap.dedent(entry_points).strip() + "\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, "textsim_lab", raising=False)
    return root
