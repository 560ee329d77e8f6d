"""pytest hooks for pytest-textsim: thin functions over one session object.

Loading this module must not import nltk, rouge-score, sacrebleu or openai.
"""

from __future__ import annotations

import pytest

from .config import SETTINGS


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("textsim", "pytest-textsim: text similarity and LLM-judge scores")
    for setting in SETTINGS.values():
        if setting.flag:
            kwargs: dict = {"dest": setting.dest, "default": None, "help": setting.help}
            if setting.flag_action:
                kwargs["action"] = setting.flag_action
            if setting.metavar:
                kwargs["metavar"] = setting.metavar
            group.addoption(setting.flag_name, **kwargs)
        if setting.ini:
            parser.addini(setting.ini_name, help=setting.help, type=setting.ini_type, default=None)
