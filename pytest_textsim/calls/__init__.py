"""What the app did: its model calls read from the HTTP exchanges the replay
interception sees, their prices, and assertions over them (no pytest in here).

The plugin gives each test that asks for the ``llm_calls`` fixture (or replays) an
:class:`LLMCalls` log; see ``docs/app-calls.md``.
"""

from __future__ import annotations

from .asserts import (
    assert_llm_limits,
    assert_tool_called,
    assert_tool_calls_valid,
    assert_tool_not_called,
    assert_tool_trajectory,
)
from .model import LLMCall, LLMCalls, ToolCall, Usage, figures
from .parse import read
from .prices import ModelPrice, PriceFileError, PriceTable, load_prices

__all__ = [
    "LLMCall",
    "LLMCalls",
    "ModelPrice",
    "PriceFileError",
    "PriceTable",
    "ToolCall",
    "Usage",
    "assert_llm_limits",
    "assert_tool_called",
    "assert_tool_calls_valid",
    "assert_tool_not_called",
    "assert_tool_trajectory",
    "figures",
    "load_prices",
    "read",
]
