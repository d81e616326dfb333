"""MQTT topic parts and topic builders: pure, so every publisher and reader agrees.

Every table publishes under its own ``ddz/<table>/`` prefix, so a venue can
point all its controllers at one broker and a screen can follow them all with
``ddz/+/state``.

>>> state_topic("club-7")
'ddz/club-7/state'
>>> parse_table_topic("ddz/club-7/cmd/undo")
('club-7', 'cmd', 'undo')
"""

from __future__ import annotations

import re
from typing import Final

from table.errors import UserError

ROOT: Final = "ddz"
STATUS: Final = "status"
STATE: Final = "state"
EVENT: Final = "event"
ALERT: Final = "alert"
CMD: Final = "cmd"
REPLY: Final = "reply"

#: The parts a table publishes or listens on, after ``ddz/<table>/``.
PARTS: Final = (STATUS, STATE, EVENT, ALERT, CMD, REPLY)

ONLINE: Final = "online"
OFFLINE: Final = "offline"

#: Operator commands, the last part of ``ddz/<table>/cmd/<name>``.
CMD_UNDO: Final = "undo"
CMD_CORRECT: Final = "correct"
CMD_PLAY: Final = "play"
CMD_START: Final = "start"
CMD_ROUND: Final = "round"
CMD_END: Final = "end"
CMD_DECK: Final = "deck"
"""Another deck is on the table: the camera forgets how the old one's marks looked."""
COMMANDS: Final = (CMD_UNDO, CMD_CORRECT, CMD_PLAY, CMD_START, CMD_ROUND, CMD_END, CMD_DECK)

HA_PREFIX: Final = "homeassistant"
HA_STATUS_TOPIC: Final = f"{HA_PREFIX}/status"

#: Table ids become topic levels and Home Assistant ids, so keep them plain.
_TABLE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def check_table_id(table: str) -> str:
    """Returns ``table`` if it can be a topic level and a Home Assistant id.

    :raises: :exc:`~table.errors.UserError` naming what is wrong.

    >>> check_table_id("t1")
    't1'
    """
    if not _TABLE_ID.match(table):
        raise UserError(
            f"bad table id {table!r}: use 1 to 64 letters, digits, '-' or '_', "
            "starting with a letter or digit"
        )
    return table


def table_topic(table: str, part: str) -> str:
    """Builds ``ddz/<table>/<part>``; ``table`` may be ``+`` to match every table.

    >>> table_topic("+", "state")
    'ddz/+/state'
    """
    if table != "+":
        check_table_id(table)
    return f"{ROOT}/{table}/{part}"


def status_topic(table: str) -> str:
    """Builds the retained online/offline topic, also the last will's topic."""
    return table_topic(table, STATUS)


def state_topic(table: str) -> str:
    """Builds the retained snapshot topic."""
    return table_topic(table, STATE)


def event_topic(table: str) -> str:
    """Builds the topic that carries every logged entry."""
    return table_topic(table, EVENT)


def alert_topic(table: str) -> str:
    """Builds the topic for things a referee must look at."""
    return table_topic(table, ALERT)


def command_topic(table: str, name: str) -> str:
    """Builds ``ddz/<table>/cmd/<name>``.

    >>> command_topic("t1", "undo")
    'ddz/t1/cmd/undo'
    """
    return f"{table_topic(table, CMD)}/{name}"


def command_filter(table: str) -> str:
    """Builds the subscription that catches every command for one table."""
    return f"{table_topic(table, CMD)}/+"


def reply_topic(table: str, client_id: str) -> str:
    """Builds the response topic an operator client asks answers on.

    The venue ACL lets each user read only its own replies (``%u`` in Mosquitto).

    >>> reply_topic("t1", "desk")
    'ddz/t1/reply/desk'
    """
    return f"{table_topic(table, REPLY)}/{client_id}"


def parse_table_topic(topic: str) -> tuple[str, str, str]:
    """Splits ``ddz/<table>/<part>[/<rest>]`` into table, part and rest.

    :raises: :exc:`ValueError` for a topic outside ``ddz/<table>/``.

    >>> parse_table_topic("ddz/t1/state")
    ('t1', 'state', '')
    """
    levels = topic.split("/", 3)
    if len(levels) < 3 or levels[0] != ROOT or levels[2] not in PARTS:
        raise ValueError(f"{topic!r} is not a ddz-table topic")
    return levels[1], levels[2], levels[3] if len(levels) > 3 else ""


def ha_node_id(table: str) -> str:
    """Builds the Home Assistant device id of a table.

    >>> ha_node_id("club-7")
    'ddz_table_club-7'
    """
    return f"ddz_table_{check_table_id(table)}"


def ha_discovery_topic(table: str, prefix: str = HA_PREFIX) -> str:
    """Builds the device-based discovery topic ``<prefix>/device/<id>/config``.

    >>> ha_discovery_topic("t1")
    'homeassistant/device/ddz_table_t1/config'
    """
    return f"{prefix}/device/{ha_node_id(table)}/config"
