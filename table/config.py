"""The table's settings: a TOML file, overridden by the environment, with sane defaults.

Every setting has one place in the file (``[section] key``) and one environment
variable; ``docs/table.example.toml`` lists them all with comments. A bad value
is reported with the file, the setting and what is allowed.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from table.errors import UserError
from table.rules import HouseRules, Variant, get_variant


@dataclass(frozen=True)
class Setting:
    """One setting: where it lives in the file, its variable, and how to read it."""

    section: str
    key: str
    env: str
    default: Any
    parse: Callable[[Any], Any]
    help: str


def _text(value: Any) -> str:
    if not isinstance(value, str | int):
        raise ValueError("expected text")
    return str(value)


def _optional_text(value: Any) -> str | None:
    text = _text(value).strip()
    return text or None


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError("expected true or false")


def _port(value: Any) -> int:
    number = int(value)
    if not 1 <= number <= 65535:
        raise ValueError("expected a TCP port from 1 to 65535")
    return number


def _cap(value: Any) -> int | None:
    number = int(value)
    if number < 0:
        raise ValueError("expected 0 (no cap) or a positive whole number")
    return number or None


def _players(value: Any) -> tuple[str, ...]:
    names = [part.strip() for part in value.split(",")] if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or len(names) not in (3, 4):
        raise ValueError("expected 3 or 4 player names in playing order")
    cleaned = tuple(str(name).strip() for name in names)
    if any(not name for name in cleaned) or len(set(cleaned)) != len(cleaned):
        raise ValueError("player names must be non-empty and different")
    return cleaned


def _table_id(value: Any) -> str:
    text = _text(value).strip()
    if not text or any(ch in text for ch in "/+#") or len(text) > 64:
        raise ValueError("expected a short name without '/', '+' or '#' (it is an MQTT topic part)")
    return text


SETTINGS: tuple[Setting, ...] = (
    Setting("table", "id", "DDZ_TABLE_ID", "table-1", _table_id, "name of this table"),
    Setting("table", "players", "DDZ_TABLE_PLAYERS", ("East", "North", "West"), _players,
            "3 or 4 names in playing order (counterclockwise), seat 0 first"),
    Setting("table", "spring", "DDZ_TABLE_SPRING", False, _flag, "house rule: spring doubles"),
    Setting("table", "multiplier_cap", "DDZ_TABLE_MULTIPLIER_CAP", 0, _cap,
            "house rule: highest multiplier, 0 for none"),
    Setting("log", "url", "DDZ_TABLE_DB", "", _optional_text,
            "empty: SQLite file in the data directory; or postgresql+psycopg://user@host/db"),
    Setting("mqtt", "url", "DDZ_TABLE_MQTT", "", _optional_text,
            "empty: MQTT off; mqtt://[user:password@]host[:port] or mqtts://...?ca=FILE"),
    Setting("mqtt", "home_assistant", "DDZ_TABLE_HOME_ASSISTANT", False, _flag,
            "publish Home Assistant discovery"),
    Setting("dashboard", "host", "DDZ_TABLE_DASHBOARD_HOST", "127.0.0.1", _text,
            "address the dashboard listens on; 0.0.0.0 to serve the room"),
    Setting("dashboard", "port", "DDZ_TABLE_DASHBOARD_PORT", 5000, _port, "dashboard port"),
    Setting("dashboard", "password_hash", "DDZ_TABLE_PASSWORD_HASH", "", _optional_text,
            "operator console password hash (ddz-table dashboard hash-password)"),
    Setting("dashboard", "secret_key", "DDZ_TABLE_SECRET_KEY", "", _optional_text,
            "key that signs console cookies; empty: a new random key at each start"),
    Setting("camera", "source", "DDZ_TABLE_CAMERA", "", _optional_text,
            "camera index, RTSP/HTTP URL or video file; empty: no camera"),
    Setting("camera", "calibration", "DDZ_TABLE_CALIBRATION", "calibration.json", _text,
            "file written by ddz-table vision calibrate"),
    Setting("camera", "model", "DDZ_TABLE_MODEL", "", _optional_text,
            "card reader model written by ddz-table vision learn; empty: the built-in one"),
    Setting("panel", "port", "DDZ_TABLE_PANEL", "", _optional_text,
            "serial port, /dev/serial/by-id/..., VID:PID or pyserial URL; empty: no panel"),
)  # fmt: skip


@dataclass(frozen=True)
class Config:
    """The resolved settings of one table, keyed ``section.key``."""

    values: Mapping[str, Any] = field(default_factory=dict)
    source: str = "defaults"

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    @property
    def variant(self) -> Variant:
        """Gets the variant from the number of players."""
        return get_variant(len(self["table.players"]))

    @property
    def house_rules(self) -> HouseRules:
        """Gets the agreed house rules."""
        return HouseRules(spring=self["table.spring"], multiplier_cap=self["table.multiplier_cap"])


def load_config(path: Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Reads a TOML file (if given), then the environment, over the defaults.

    :raises: :class:`UserError` naming the file, the setting and what is allowed.
    """
    environ = os.environ if environ is None else environ
    data: dict[str, Any] = {}
    source = "defaults"
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UserError(f"config file {path} not found; see docs/table.example.toml") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise UserError(f"config file {path} is not valid TOML: {error}") from None
        source = str(path)
        known = {setting.section for setting in SETTINGS}
        for section, body in data.items():
            keys = {s.key for s in SETTINGS if s.section == section}
            if section not in known or not isinstance(body, dict):
                raise UserError(f"{path}: unknown section [{section}]; known: {sorted(known)}")
            for key in body:
                if key not in keys:
                    raise UserError(
                        f"{path}: unknown setting {section}.{key}; known: {sorted(keys)}"
                    )
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        name = f"{setting.section}.{setting.key}"
        raw, origin = setting.default, "default"
        if setting.key in data.get(setting.section, {}):
            raw, origin = data[setting.section][setting.key], source
        if setting.env in environ:
            raw, origin = environ[setting.env], f"${setting.env}"
        try:
            values[name] = setting.parse(raw)
        except (ValueError, TypeError) as error:
            raise UserError(f"{origin}: {name} = {raw!r} is not valid: {error}") from None
    return Config(values, source)
