"""Settings from the example file, the environment and bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from table.config import SETTINGS, load_config
from table.errors import UserError

EXAMPLE = Path(__file__).parents[2] / "docs" / "table.example.toml"


def test_defaults_are_sane() -> None:
    config = load_config(None, environ={})
    assert config["dashboard.host"] == "127.0.0.1"
    assert config["dashboard.port"] == 5000
    assert config["mqtt.url"] is None and config["log.url"] is None
    assert config.variant.name == "3p"


def test_the_example_file_loads_and_names_every_setting() -> None:
    config = load_config(EXAMPLE, environ={})
    assert config["table.players"] == ("Ann", "Bo", "Cy")
    text = EXAMPLE.read_text()
    for setting in SETTINGS:
        assert setting.env in text, f"{setting.env} is not documented in the example"


def test_environment_wins_over_the_file() -> None:
    env = {
        "DDZ_TABLE_PLAYERS": "A, B, C, D",
        "DDZ_TABLE_MULTIPLIER_CAP": "8",
        "DDZ_TABLE_SPRING": "yes",
    }
    config = load_config(EXAMPLE, environ=env)
    assert config.variant.name == "4p"
    assert config.house_rules.multiplier_cap == 8 and config.house_rules.spring


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[table]\nplayers = ['a', 'b']\n", "3 or 4 player names"),
        ("[table]\nid = 'a/b'\n", "without '/'"),
        ("[dashboard]\nport = 70000\n", "from 1 to 65535"),
        ("[dashboard]\ncolour = 'red'\n", "unknown setting dashboard.colour"),
        ("[screen]\nx = 1\n", "unknown section [screen]"),
        ("[table\n", "not valid TOML"),
    ],
)
def test_bad_files_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "table.toml"
    path.write_text(text)
    with pytest.raises(UserError, match=message.replace("[", r"\[")):
        load_config(path, environ={})


def test_bad_environment_value_names_the_variable() -> None:
    with pytest.raises(UserError, match=r"\$DDZ_TABLE_DASHBOARD_PORT: dashboard.port = 'x'"):
        load_config(None, environ={"DDZ_TABLE_DASHBOARD_PORT": "x"})


def test_missing_file() -> None:
    with pytest.raises(UserError, match="not found"):
        load_config(Path("/nonexistent/table.toml"), environ={})
