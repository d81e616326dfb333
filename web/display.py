"""Pure helpers that turn a snapshot into words and card faces for the templates.

Cards carry no suits in ddz-table, so the only red and black cards are the two
jokers. They differ in three ways at once, so that no one needs colour to tell
them apart: the black joker is a dark card with a "B", the red joker a light card
with a red double border, stripes and an "R".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from table.rules import RANK_SYMBOLS

#: Where each seat sits on the screen, in playing order (counterclockwise from the bottom).
POSITIONS: Final = {3: ("bottom", "right", "left"), 4: ("bottom", "right", "top", "left")}

PHASES: Final = {
    "waiting": "Waiting for a deal",
    "auction": "Bidding",
    "play": "Playing",
    "finished": "Round over",
    "redeal": "All passed: redeal",
    "ended": "Session over",
}

_SEAT: Final = re.compile(r"\bseat (\d+)\b")

DEVICE_STATUS: Final = {
    "ok": "ok",
    "back": "ok",
    "online": "ok",
    "lost": "lost",
    "offline": "lost",
    "off": "off",
}


@dataclass(frozen=True)
class CardFace:
    """How one card is drawn: its label, CSS class, a second cue and a spoken name."""

    label: str
    css: str
    mark: str
    title: str


def card_faces(text: str | None) -> list[CardFace]:
    """Turns canonical card text into faces, low to high.

    >>> [f.label for f in card_faces("TTBR")]
    ['10', '10', 'JOKER', 'JOKER']
    >>> [f.mark for f in card_faces("BR")]
    ['B', 'R']
    """
    faces = []
    for symbol in text or "":
        if symbol == "B":
            faces.append(CardFace("JOKER", "card joker joker-black", "B", "black joker"))
        elif symbol == "R":
            faces.append(CardFace("JOKER", "card joker joker-red", "R", "red joker"))
        elif symbol in RANK_SYMBOLS:
            label = "10" if symbol == "T" else symbol
            faces.append(CardFace(label, "card", "", label))
    return faces


def positions(players: int) -> tuple[str, ...]:
    """Gets the screen position of each seat.

    >>> positions(4)
    ('bottom', 'right', 'top', 'left')
    """
    return POSITIONS.get(players, POSITIONS[3])


def names(snapshot: dict[str, Any]) -> list[str]:
    """Gets the player names in seat order (empty before a session)."""
    return [str(seat["name"]) for seat in snapshot.get("seats") or []]


def seat_name(snapshot: dict[str, Any], seat: int | None) -> str:
    """Names a seat by its player, or by number when there is no such seat.

    >>> seat_name({"seats": [{"name": "Ann"}]}, 0), seat_name({}, 2), seat_name({}, None)
    ('Ann', 'seat 2', '')
    """
    if not isinstance(seat, int):
        return ""
    players = names(snapshot)
    return players[seat] if 0 <= seat < len(players) else f"seat {seat}"


def phase_label(snapshot: dict[str, Any]) -> str:
    """Says where the table is, for the screen.

    >>> phase_label({"phase": "play", "round": 3})
    'Round 3 · Playing'
    """
    phase = str(snapshot.get("phase", "waiting"))
    label = PHASES.get(phase, phase)
    number = snapshot.get("round") or 0
    return f"Round {number} · {label}" if number and phase != "ended" else label


def multiplier_parts(snapshot: dict[str, Any]) -> list[str]:
    """Lists what made the current stake: the bid, the bombs and the rockets.

    In 4p only bombs of six or more cards double, which the screen says when a
    bomb on the table did not (``doublings`` counts the bombs and rockets that did).

    >>> multiplier_parts({"highest_bid": 3, "bombs": 2, "rockets": 1, "doublings": 3})
    ['bid 3', '2 bombs', '1 rocket']
    >>> multiplier_parts({"variant": "4p", "bombs": 1, "rockets": 0, "doublings": 0})
    ['1 bomb (only bombs of 6+ cards double)']
    """
    parts = []
    bid = snapshot.get("highest_bid") or 0
    if bid:
        parts.append(f"bid {bid}")
    bombs = int(snapshot.get("bombs") or 0)
    rockets = int(snapshot.get("rockets") or 0)
    if bombs:
        part = f"{bombs} bomb{'' if bombs == 1 else 's'}"
        if int(snapshot.get("doublings", bombs + rockets)) - rockets < bombs:
            part += " (only bombs of 6+ cards double)"
        parts.append(part)
    if rockets:
        parts.append(f"{rockets} rocket{'' if rockets == 1 else 's'}")
    return parts


def standings(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """Orders the players by total, best first, marking the leaders.

    >>> [(r["name"], r["is_leader"]) for r in standings(
    ...     {"seats": [{"name": "A"}, {"name": "B"}], "totals": [-2, 2]})]
    [('B', True), ('A', False)]
    """
    players = names(snapshot)
    totals = list(snapshot.get("totals") or [0] * len(players))
    if not players:
        return []
    best = max(totals)
    rows = [
        {"seat": seat, "name": name, "total": total, "is_leader": total == best and best != 0}
        for seat, (name, total) in enumerate(zip(players, totals, strict=True))
    ]
    return sorted(rows, key=lambda row: (-row["total"], row["seat"]))


def leader_text(snapshot: dict[str, Any]) -> str:
    """Names who leads the session, or says nobody does yet.

    >>> leader_text({"seats": [{"name": "A"}, {"name": "B"}], "totals": [4, -4]})
    'A +4'
    >>> leader_text({"seats": [{"name": "A"}, {"name": "B"}], "totals": [0, 0]})
    'level'
    """
    rows = standings(snapshot)
    leaders = [row for row in rows if row["is_leader"]]
    if not rows:
        return "no session"
    if not leaders:
        return "level"
    return f"{' & '.join(row['name'] for row in leaders)} {signed(leaders[0]['total'])}"


def signed(value: int) -> str:
    """Writes a score with its sign, as a scoreboard does.

    >>> signed(3), signed(0), signed(-2)
    ('+3', '0', '−2')
    """
    if value > 0:
        return f"+{value}"
    return f"−{-value}" if value < 0 else "0"


def action_text(snapshot: dict[str, Any], action: dict[str, Any] | None) -> str:
    """Says an action in words with the player's name.

    >>> action_text({"seats": [{"name": "Ann"}]}, {"type": "play", "seat": 0, "cards": "TT"})
    'Ann plays 10 10'
    >>> action_text({}, {"type": "bid", "seat": 1, "amount": 2})
    'seat 1 bids 2'
    """
    if not action:
        return ""
    who = seat_name(snapshot, action.get("seat"))
    kind = action.get("type")
    if kind == "play":
        return f"{who} plays {' '.join(face.title for face in card_faces(action.get('cards')))}"
    if kind == "bid":
        return f"{who} bids {action.get('amount')}"
    if kind == "pass":
        return f"{who} passes"
    if kind == "show_kitty":
        return f"kitty shown: {action.get('cards')}"
    return str(kind)


def reason_text(snapshot: dict[str, Any], reason: str) -> str:
    """Names the players in a referee's reason, which speaks of seat numbers.

    >>> reason_text({"seats": [{"name": "Ann"}, {"name": "Bo"}, {"name": "Cy"}]},
    ...             "seat 0 is not on turn; seat 2 is")
    'Ann is not on turn; Cy is'
    """
    return _SEAT.sub(lambda found: seat_name(snapshot, int(found.group(1))), reason)


def device_state(health: dict[str, Any] | None) -> str:
    """Sorts a device's reported status into ok, lost, off or unknown for its badge.

    >>> device_state({"status": "back"}), device_state({"status": "lost"}), device_state(None)
    ('ok', 'lost', 'unknown')
    >>> device_state({"status": "off"})
    'off'
    """
    status = str((health or {}).get("status", "unknown"))
    return DEVICE_STATUS.get(status, "unknown")
