"""The rules of Dou Dizhu for 3 and 4 players: pure logic, no I/O.

The stable API used by every other part of ddz-table:

>>> from table.rules import parse_cards, classify, beats, legal_plays
>>> str(parse_cards("Th 10s J"))
'TTJ'
>>> classify("TTJJQQ").kind.value
'pair_straight'
>>> beats(classify("2"), classify("A"))
True
>>> len(legal_plays("3345", previous=classify("4")))
1
"""

from table.rules.actions import (
    Action,
    AuctionPassed,
    Bid,
    BidMade,
    Event,
    KittyShown,
    LandlordChosen,
    Outcome,
    Pass,
    Play,
    Played,
    PlayPassed,
    Redeal,
    RoundEnded,
    ShowKitty,
    TrickWon,
    action_from_dict,
    to_dict,
)
from table.rules.cards import RANK_SYMBOLS, Cards, Rank, cards_name, parse_cards, rank_name
from table.rules.combos import Combination, Kind, beats, classify, describe, explain_invalid
from table.rules.errors import (
    IllegalActionError,
    IllegalBidError,
    IllegalPlayError,
    ImpossibleCardsError,
    InvalidCardsError,
    InvalidPlayError,
    RulesError,
)
from table.rules.moves import legal_plays
from table.rules.round import LegalPlays, Phase, Round, RoundState, apply, new_round
from table.rules.scoring import HouseRules, Ledger, settle
from table.rules.variant import FOUR_PLAYER, THREE_PLAYER, Variant, get_variant

__all__ = [
    "FOUR_PLAYER",
    "RANK_SYMBOLS",
    "THREE_PLAYER",
    "Action",
    "AuctionPassed",
    "Bid",
    "BidMade",
    "Cards",
    "Combination",
    "Event",
    "HouseRules",
    "IllegalActionError",
    "IllegalBidError",
    "IllegalPlayError",
    "ImpossibleCardsError",
    "InvalidCardsError",
    "InvalidPlayError",
    "Kind",
    "KittyShown",
    "LandlordChosen",
    "Ledger",
    "LegalPlays",
    "Outcome",
    "Pass",
    "Phase",
    "Play",
    "PlayPassed",
    "Played",
    "Rank",
    "Redeal",
    "Round",
    "RoundEnded",
    "RoundState",
    "RulesError",
    "ShowKitty",
    "TrickWon",
    "Variant",
    "action_from_dict",
    "apply",
    "beats",
    "cards_name",
    "classify",
    "describe",
    "explain_invalid",
    "get_variant",
    "legal_plays",
    "new_round",
    "parse_cards",
    "rank_name",
    "settle",
    "to_dict",
]
