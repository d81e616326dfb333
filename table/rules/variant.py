"""The two variants of the game: what changes between 3 and 4 players."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from table.rules.cards import Cards, Rank


@dataclass(frozen=True)
class Variant:
    """Deck, deal and combination rules for one number of players."""

    name: str
    players: int
    decks: int
    hand_size: int
    kitty_size: int

    @property
    def deck(self) -> Cards:
        """Gets every card of the variant's deck (one or two 54-card decks)."""
        return Cards((self.decks * 4,) * Rank.TWO.value + (self.decks * 4, self.decks, self.decks))

    @property
    def landlord_size(self) -> int:
        """Counts the cards the landlord holds after taking the kitty."""
        return self.hand_size + self.kitty_size

    @property
    def has_kickers(self) -> bool:
        """Tells whether single-card kickers and quad sets are allowed (3 players only)."""
        return self.players == 3

    @property
    def passes_to_close(self) -> int:
        """Counts the passes in a row that end a trick or, after a bid, the auction."""
        return self.players - 1

    def __str__(self) -> str:
        return self.name


THREE_PLAYER: Final = Variant("3p", players=3, decks=1, hand_size=17, kitty_size=3)
FOUR_PLAYER: Final = Variant("4p", players=4, decks=2, hand_size=25, kitty_size=8)
VARIANTS: Final = {"3p": THREE_PLAYER, "4p": FOUR_PLAYER}


def get_variant(name: str | int | Variant) -> Variant:
    """Looks up a variant by name (``"3p"``), by player count (``4``) or returns it as is.

    :raises: :exc:`ValueError` for any other value.

    >>> get_variant(4).kitty_size
    8
    """
    if isinstance(name, Variant):
        return name
    key = f"{name}p" if isinstance(name, int) or str(name).isdigit() else str(name)
    try:
        return VARIANTS[key]
    except KeyError:
        raise ValueError(f"unknown variant {name!r}: the game is for 3 or 4 players") from None
