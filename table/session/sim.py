"""Simulated rounds played through a logged :class:`TableSession`, resumable after a kill.

This is what ``ddz-table simulate --db URL --table ID`` runs. A re-run with the
same table resumes the table's open session from the log, in the middle of a
round if need be (the deal is in the log), and plays on until the session has
the wanted number of settled rounds. Randomness comes from the seed and the
log's position, so a resumed run is as reproducible as an uninterrupted one.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import TextIO

from table.rules import HouseRules, Ledger, get_variant
from table.rules.simulate import Summary, deal, random_action
from table.session.entries import LogEntry, SessionError
from table.session.store import SessionLog
from table.session.table import TableSession


def open_table(
    log: SessionLog,
    table: str,
    variant: str,
    names: Sequence[str] | None = None,
    house_rules: HouseRules | None = None,
) -> TableSession:
    """Resumes the table's open session, or starts one when there is none.

    :raises: :exc:`SessionError` if the open session is of another variant.
    """
    wanted = get_variant(variant)
    info = log.latest_open_session(table)
    if info is None:
        players = list(names or (f"seat {seat}" for seat in range(wanted.players)))
        return TableSession.start(log, table, wanted.name, players, house_rules)
    if info.variant != wanted.name:
        raise SessionError(
            f"table {table} has an open {info.variant} session ({info.id}); use that"
            f" variant or another --table"
        )
    return TableSession.resume(log, info.id)


def play_on(
    session: TableSession,
    rounds: int,
    seed: int,
    on_entry: Callable[[LogEntry], None] | None = None,
) -> None:
    """Plays random legal actions until ``rounds`` rounds are settled, then ends the session."""
    state = session.state
    rng = random.Random(f"{seed}/{session.session_id}/{state.seq}")
    variant = get_variant(session.info.variant)
    if on_entry is not None:
        session.listeners.append(on_entry)
    try:
        assert state.ledger is not None
        while state.ledger.rounds < rounds:
            played = state.round
            if played is None or played.state.is_over:
                hands, kitty = deal(rng, variant)
                session.start_round(rng.randrange(variant.players), hands, kitty)
            elif played.state.hands[played.state.turn] is None:
                raise SessionError(
                    f"round {state.rounds[-1].number} of session {session.session_id} was"
                    " dealt without known hands; a simulation cannot play it on"
                )
            else:
                session.submit(random_action(played, rng), "sim")
        session.end()
    finally:
        if on_entry is not None:
            session.listeners.remove(on_entry)


def summarize(session: TableSession) -> Summary:
    """Sums up a logged session the way ``ddz-table simulate`` prints a run."""
    state = session.state
    summary = Summary(get_variant(session.info.variant), Ledger(session.info.players))
    summary.redeals = sum(log.is_redeal for log in state.rounds)
    for outcome in state.outcomes:
        summary.add(outcome)
    return summary


def simulate_logged(
    url: str | None,
    table: str,
    variant: str,
    rounds: int,
    seed: int = 0,
    house_rules: HouseRules | None = None,
    names: Sequence[str] | None = None,
    echo: TextIO | None = None,
) -> tuple[str, Summary]:
    """Plays (or resumes) a logged simulated session; returns its id and summary.

    With ``echo``, each entry is written there as a JSON line, with the state
    after it, once it is on disk: what a table would be told.

    :raises: :exc:`~table.errors.UserError` for a bad log or names.
    """

    def tell(entry: LogEntry) -> None:
        assert echo is not None
        line = {"entry": entry.public().to_dict(), "state": session.state.snapshot()}
        echo.write(json.dumps(line) + "\n")
        echo.flush()

    log = SessionLog.open(url)
    try:
        session = open_table(log, table, variant, names, house_rules)
        if echo is not None:
            echo.write(json.dumps({"resumed": session.state.snapshot()}) + "\n")
            echo.flush()
        play_on(session, rounds, seed, tell if echo is not None else None)
        return session.session_id, summarize(session)
    finally:
        log.close()
