"""Errors of the rules engine, split by cause; all are ``ValueError``.

Every message names the rule in words a player at the table understands.
"""


class RulesError(ValueError):
    """Base class of every rejection by the rules engine."""


class InvalidCardsError(RulesError):
    """Card text that cannot be read, or more copies of a card than the decks hold."""


class InvalidPlayError(RulesError):
    """Cards that form no combination of the variant being played."""


class IllegalActionError(RulesError):
    """A well-formed bid, pass or play that the rules do not allow now."""


class IllegalPlayError(IllegalActionError):
    """A combination that does not beat the table, is out of turn, or is not in hand."""


class IllegalBidError(IllegalActionError):
    """A bid or auction pass that the auction does not allow now."""


class ImpossibleCardsError(IllegalPlayError):
    """A play that would show more copies of a card than the decks hold: likely a misread."""
