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
    missing = []
    for setting in _settings().values():
        names = [setting.ini_name] if setting.ini else []
        names += [setting.flag_name] if setting.flag else []
        names += list(setting.env)
        if not any(f"`{name}" in table for name in names):
            missing.append(setting.name)
    assert not missing, f"settings missing from docs/configuration.md: {missing}"


def test_every_default_is_shown_as_a_user_would_type_it() -> None:
    """Typing the default the table shows, in the ini file, on the command line or in
    the environment, gives the setting's default value."""
    from generate_reference import _settings

    rows = (current("settings") or "").splitlines()[2:]
    settings = list(_settings().values())
    assert len(rows) == len(settings)
    wrong = []
    for setting, row in zip(settings, rows):
        cell = [cell.strip() for cell in row.strip("| ").split(" | ")][3]
        if not cell:
            assert setting.default in (None, [], ()), f"{setting.name}: its default is not shown"
            continue
        assert cell.startswith("`") and cell.endswith("`"), (setting.name, cell)
        read = setting.convert(cell[1:-1])
        if read != setting.default:
            wrong.append(f"{setting.name}: the table shows {cell}, which reads as {read!r}")
    assert not wrong, wrong
