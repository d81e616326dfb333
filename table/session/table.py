"""The referee spine: check each action with the rules, log it, then tell the listeners.

A :class:`TableSession` is the only writer of a table's session. Every call
appends to the log first and folds the new entry into :attr:`TableSession.state`
second, so what the table is told (LEDs, MQTT, the dashboard, all fed from
``listeners``) is always already on disk, and :meth:`TableSession.resume` after
a crash rebuilds exactly that state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from table.rules import (
    Action,
    Cards,
    Event,
    HouseRules,
    IllegalActionError,
    LandlordChosen,
    Play,
    RulesError,
    apply,
    new_round,
    parse_cards,
    to_dict,
)
from table.session import entries as kinds
from table.session.entries import LogEntry, SessionError, SessionInfo, house_rules_to_dict
from table.session.state import TableState
from table.session.store import SessionLog

logger = logging.getLogger(__name__)

Listener = Callable[[LogEntry], None]


def public_event(event: Event) -> dict[str, Any]:
    """Turns an event into its logged form, without the kitty the players have not seen.

    >>> public_event(LandlordChosen(1, 3, Cards.from_str("3BR")))
    {'type': 'landlord', 'seat': 1, 'bid': 3, 'kitty': None}
    """
    if isinstance(event, LandlordChosen) and event.kitty is not None:
        event = LandlordChosen(event.seat, event.bid, None)
    return to_dict(event)


class TableSession:
    """One table's session: the controller drives it, the log keeps it.

    ``listeners`` are called with each new entry after it is on disk; an entry
    may hold the deal (``round_start``), so publish ``entry.public()``.
    """

    def __init__(self, log: SessionLog, state: TableState) -> None:
        self.log = log
        self.state = state
        self.listeners: list[Listener] = []

    @classmethod
    def start(
        cls,
        log: SessionLog,
        table: str,
        variant: str,
        players: Sequence[str],
        house_rules: HouseRules | None = None,
    ) -> TableSession:
        """Starts a new session at a table.

        :raises: :exc:`~table.errors.UserError` for bad players or variant.
        """
        rules = house_rules_to_dict(house_rules or HouseRules())
        info = log.start_session(table, variant, players, rules)
        return cls.resume(log, info.id)

    @classmethod
    def resume(cls, log: SessionLog, session_id: str) -> TableSession:
        """Rebuilds a session's state from its log, to carry on where it stopped.

        :raises: :exc:`~table.errors.UserError` for an unknown session.
        """
        return cls(log, TableState.from_entries(log.entries(session_id)))

    @property
    def info(self) -> SessionInfo:
        """Gets who plays at which table under which rules."""
        assert self.state.info is not None
        return self.state.info

    @property
    def session_id(self) -> str:
        """Gets the session's id."""
        return self.info.id

    def _append(self, kind: str, data: dict[str, Any]) -> LogEntry:
        """Appends, folds, then tells the listeners: in that order, what they hear is on disk."""
        entry = self.log.append(self.session_id, kind, data)
        errors = len(self.state.errors)
        if entry.seq == self.state.seq + 1:
            self.state.apply(entry)
        else:  # another writer appended to this session: fold its entries too
            for missed in self.log.entries(self.session_id, after=self.state.seq):
                self.state.apply(missed)
        for seq, message in self.state.errors[errors:]:
            logger.error("session %s entry %d does not fold: %s", self.session_id, seq, message)
        for listener in list(self.listeners):
            try:
                listener(entry)
            except Exception:
                logger.exception("a session listener failed on entry %d", entry.seq)
        return entry

    def _check_open(self) -> None:
        if self.state.is_ended:
            raise SessionError(f"session {self.session_id} has ended; start a new session")

    def start_round(
        self,
        first_bidder: int,
        hands: Sequence[Cards] | None = None,
        kitty: Cards | None = None,
    ) -> LogEntry:
        """Logs a new deal; the dealer follows the ledger's rotation.

        ``hands`` and ``kitty`` are given only when the referee knows them (a
        simulation, the demo); they stay in the log and never reach a snapshot.

        :raises: :exc:`SessionError` if a round is still on or the deal is wrong.
        """
        self._check_open()
        state = self.state
        if state.round is not None and not state.round.state.is_over:
            number = state.current.number if state.current else 0
            raise SessionError(f"round {number} is still on; finish or undo it first")
        assert state.ledger is not None
        dealer = state.ledger.dealer
        try:
            new_round(
                self.info.variant,
                dealer=dealer,
                first_bidder=first_bidder,
                hands=hands,
                kitty=kitty,
                house_rules=state.house_rules,
            )
        except ValueError as error:
            raise SessionError(str(error)) from None
        data: dict[str, Any] = {
            "round": len(state.rounds) + 1,
            "dealer": dealer,
            "first_bidder": first_bidder,
        }
        if hands is not None:
            data["hands"] = [str(hand) for hand in hands]
        if kitty is not None:
            data["kitty"] = str(kitty)
        return self._append(kinds.ROUND_START, data)

    def submit(self, action: Action, source: str) -> list[LogEntry]:
        """Checks an action with the rules and logs it, accepted or rejected.

        :raises: the :exc:`~table.rules.RulesError` of a rejection, unchanged,
            after the rejection is logged.
        """
        try:
            events = self._check(action)
        except RulesError as error:
            self._append(
                kinds.REJECTED,
                {
                    "action": to_dict(action),
                    "reason": str(error),
                    "error": type(error).__name__,
                    "source": source,
                },
            )
            raise
        data = {
            "action": to_dict(action),
            "source": source,
            "events": [public_event(e) for e in events],
        }
        return [self._append(kinds.ACTION, data)]

    def _check(self, action: Action) -> list[Event]:
        if self.state.is_ended:
            raise IllegalActionError("the session has ended")
        played = self.state.round
        if played is None:
            raise IllegalActionError("no round has started; deal the cards first")
        return apply(played.state, action)[1]

    def undo(self, by: str, why: str) -> LogEntry:
        """Takes back the last action of the current round (a settled round is unsettled).

        :raises: :exc:`SessionError` if the round has no action to take back.
        """
        self._check_open()
        log = self.state.current
        if log is None or not log.steps:
            raise SessionError("there is no action to undo in this round")
        step = log.steps[-1]
        data = {"by": by, "why": why, "undone_seq": step.seq, "action": step.action_data}
        return self._append(kinds.UNDO, data)

    def correct(self, seat: int, cards: Cards | str, by: str, why: str) -> LogEntry:
        """Replaces the cards of a seat's play when it is the last action (a misread).

        :raises: :exc:`SessionError` if that play is not the last action, or the
            :exc:`~table.rules.RulesError` refusing the corrected play (logged).
        """
        self._check_open()
        log = self.state.current
        played = self.state.round
        last = log.steps[-1] if log is not None and log.steps else None
        if played is None or last is None or not isinstance(last.action, Play):
            raise SessionError("the last action is not a play; only the last play can be corrected")
        if last.action.seat != seat:
            raise SessionError(
                f"the last play was by seat {last.action.seat}, not seat {seat}; undo instead"
            )
        try:
            action = Play(seat, parse_cards(cards) if isinstance(cards, str) else cards)
            previous = played.pop()
            try:
                events = played.push(action)
                played.pop()
            finally:
                played.push(previous)
        except RulesError as error:
            self._append(
                kinds.REJECTED,
                {
                    "action": {"type": "play", "seat": seat, "cards": str(cards)},
                    "reason": str(error),
                    "error": type(error).__name__,
                    "source": "correction",
                },
            )
            raise
        data = {
            "by": by,
            "why": why,
            "replaces_seq": last.seq,
            "action": to_dict(action),
            "events": [public_event(e) for e in events],
        }
        return self._append(kinds.CORRECTION, data)

    def device(self, name: str, status: str, detail: str = "") -> LogEntry:
        """Logs a device's health (``panel``, ``camera``, ``broker``: ``lost``, ``back``...)."""
        return self._append(kinds.DEVICE, {"device": name, "status": status, "detail": detail})

    def alert(self, kind: str, message: str) -> LogEntry:
        """Logs something the room should be told about."""
        return self._append(kinds.ALERT, {"kind": kind, "message": message})

    def end(self) -> LogEntry:
        """Ends the session with its totals; a round still on is left unsettled.

        :raises: :exc:`SessionError` if it has already ended.
        """
        self._check_open()
        ledger = self.state.ledger
        assert ledger is not None
        data = {"totals": list(ledger.totals), "leaders": ledger.leaders(), "rounds": ledger.rounds}
        return self._append(kinds.SESSION_END, data)
