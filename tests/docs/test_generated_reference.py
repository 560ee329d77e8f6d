"""The docs' settings and metric tables are the ones the code generates."""

from __future__ import annotations

import pytest
from generate_reference import COMMAND, GENERATED, current, expected


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_table_is_current(name: str) -> None:
    page, _ = GENERATED[name]
    shown = current(name)
    assert shown is not None, f"{page} lacks its '<!-- generated: {name} -->' part"
    assert shown == expected(name), f"{page}: the {name} table is stale; run {COMMAND}"


def test_every_setting_is_in_the_reference() -> None:
    from generate_reference import _settings

    table = current("settings") or ""
    missing = [s.ini_name for s in _settings().values() if f"`{s.ini_name}`" not in table]
    assert not missing
