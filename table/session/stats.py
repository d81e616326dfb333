"""Player statistics from hand records: pure sums, no I/O."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass
class PlayerStats:
    """What one player did over the settled rounds counted."""

    name: str
    rounds: int = 0
    landlord: int = 0
    landlord_wins: int = 0
    bombs: int = 0
    rockets: int = 0
    net: int = 0

    @property
    def landlord_rate(self) -> float:
        """Gets the share of rounds this player was the landlord."""
        return self.landlord / self.rounds if self.rounds else 0.0

    @property
    def landlord_win_rate(self) -> float:
        """Gets the share of this player's landlord rounds that the landlord won."""
        return self.landlord_wins / self.landlord if self.landlord else 0.0


def player_stats(records: Iterable[dict[str, Any]]) -> list[PlayerStats]:
    """Sums settled rounds per player name, best net score first.

    Redeals and unfinished rounds count for nothing.

    >>> record = {"players": ["Ann", "Bo", "Cy"], "payments": [4, -2, -2], "landlord": 0,
    ...           "winner": 0, "plays": [{"seat": 1, "cards": "BR", "kind": "rocket"}]}
    >>> [(s.name, s.net, s.landlord_wins, s.rockets) for s in player_stats([record])]
    [('Ann', 4, 1, 0), ('Bo', -2, 0, 1), ('Cy', -2, 0, 0)]
    """
    table: dict[str, PlayerStats] = {}
    for record in records:
        payments = record.get("payments")
        if payments is None:
            continue
        landlord = record["landlord"]
        landlord_won = record["winner"] == landlord
        for seat, name in enumerate(record["players"]):
            stats = table.setdefault(name, PlayerStats(name))
            stats.rounds += 1
            stats.net += payments[seat]
            if seat == landlord:
                stats.landlord += 1
                stats.landlord_wins += landlord_won
        for play in record["plays"]:
            kind = play.get("kind")
            if kind in ("bomb", "rocket"):
                stats = table[record["players"][play["seat"]]]
                if kind == "bomb":
                    stats.bombs += 1
                else:
                    stats.rockets += 1
    return sorted(table.values(), key=lambda s: (-s.net, s.name))
