"""``ddz-table rules ...`` and ``ddz-table simulate``: the rules engine from a shell."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, TextIO

from table.cli import positive_int
from table.errors import UserError
from table.rules import (
    Combination,
    HouseRules,
    RulesError,
    Variant,
    classify,
    explain_invalid,
    get_variant,
    legal_plays,
    parse_cards,
)
from table.rules.simulate import Summary, simulate


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the ``rules`` and ``simulate`` sub-commands."""
    rules = commands.add_parser("rules", help="classify plays and list legal moves")
    rules_commands = rules.add_subparsers(dest="rules_command", required=True, metavar="COMMAND")

    classify_parser = rules_commands.add_parser(
        "classify", help="name the combination that cards form ('-' reads one play per line)"
    )
    classify_parser.add_argument("cards", help="cards like 33344456, or - to read lines from stdin")
    _add_players(classify_parser)
    classify_parser.set_defaults(func=_classify_command)

    moves = rules_commands.add_parser("moves", help="list every legal play of a hand")
    moves.add_argument("hand", help="the hand, like 334455789TJQKA2BR")
    moves.add_argument("--after", metavar="PREVIOUS", help="the play to beat (omit to lead)")
    moves.add_argument("--json", action="store_true", help="one JSON object per play")
    _add_players(moves)
    moves.set_defaults(func=_moves_command)

    sim = commands.add_parser("simulate", help="play random rounds through the rules engine")
    sim.add_argument(
        "--rounds", type=positive_int, default=100, help="settled rounds (default 100)"
    )
    sim.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    sim.add_argument("--spring", action="store_true", help="house rule: spring doubles the stake")
    sim.add_argument("--cap", type=positive_int, metavar="N", help="house rule: multiplier cap")
    sim.add_argument(
        "--db", metavar="URL", help="log the rounds here (file or URL; default: the usual log)"
    )
    sim.add_argument(
        "--table", metavar="ID", help="log as this table; a re-run resumes its open session"
    )
    sim.add_argument("--names", metavar="A,B,C", help="player names for a new logged session")
    sim.add_argument(
        "--echo", action="store_true", help="print each logged entry and the state as JSON lines"
    )
    _add_players(sim)
    sim.set_defaults(func=_simulate_command)


def _add_players(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--players", type=int, choices=(3, 4), default=3, help="3 or 4 players (default 3)"
    )


def _describe_json(text: str, variant: Variant) -> dict[str, Any]:
    """Classifies one play for the JSON Lines output; errors become an ``error`` field."""
    try:
        cards = parse_cards(text)
    except RulesError as error:
        return {"input": text, "error": str(error)}
    combination = classify(cards, variant)
    if combination is None:
        return {"input": text, "cards": str(cards), "error": explain_invalid(cards, variant)}
    return {"input": text, **_play_json(combination)}


def _play_json(combination: Combination) -> dict[str, Any]:
    return {
        "cards": str(combination.cards),
        "kind": combination.kind.value,
        "rank": combination.rank_symbol,
        "length": combination.length,
        "description": combination.describe(),
    }


def _play_line(combination: Combination) -> str:
    return f"{combination.cards!s:<20} {combination.kind.value:<17} {combination.describe()}"


def _classify_command(args: argparse.Namespace) -> int:
    variant = get_variant(args.players)
    if args.cards == "-":
        for line in sys.stdin:
            if line.strip():
                print(json.dumps(_describe_json(line.strip(), variant)), flush=True)
        return 0
    combination = _parse_play(args.cards, variant)
    print(_play_line(combination))
    return 0


def _parse_play(text: str, variant: Variant) -> Combination:
    try:
        return Combination.from_str(text, variant)
    except RulesError as error:
        raise UserError(str(error)) from None


def _moves_command(args: argparse.Namespace) -> int:
    variant = get_variant(args.players)
    try:
        hand = parse_cards(args.hand)
    except RulesError as error:
        raise UserError(str(error)) from None
    if not hand.is_subset(variant.deck):
        raise UserError(f"the hand {hand} holds more copies of a card than the {variant} deck")
    previous = _parse_play(args.after, variant) if args.after else None
    plays = legal_plays(hand, previous, variant)
    for play in plays:
        print(json.dumps(_play_json(play)) if args.json else _play_line(play))
    if not args.json:
        what = f"answers to {previous.describe()}" if previous else "leads"
        print(f"{len(plays)} legal {what}")
    return 0


def _progress(out: TextIO, total: int, started: float) -> Any:
    """Makes a callback that redraws a one-line progress bar on a terminal."""

    def draw(done: int) -> None:
        if done != total and done % max(1, total // 200):
            return
        width = 30
        filled = width * done // total
        rate = done / max(time.perf_counter() - started, 1e-9)
        out.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {rate:,.0f}/s")
        if done == total:
            out.write("\n")
        out.flush()

    return draw


def _simulate_command(args: argparse.Namespace) -> int:
    variant = get_variant(args.players)
    rules = HouseRules(spring=args.spring, multiplier_cap=args.cap)
    started = time.perf_counter()
    if args.db is not None or args.table is not None:
        return _simulate_logged(args, variant, rules, started)
    show = _progress(sys.stderr, args.rounds, started) if sys.stderr.isatty() else None
    summary = simulate(args.rounds, variant, seed=args.seed, house_rules=rules, on_round=show)
    print_summary(summary, time.perf_counter() - started)
    return 0 if summary.ledger.is_balanced else 1


def _simulate_logged(
    args: argparse.Namespace, variant: Variant, rules: HouseRules, started: float
) -> int:
    """Plays the rounds through the session log, resuming the table's open session."""
    from table.session.sim import simulate_logged

    names = [name.strip() for name in args.names.split(",")] if args.names else None
    session_id, summary = simulate_logged(
        args.db,
        args.table or "sim",
        variant.name,
        args.rounds,
        seed=args.seed,
        house_rules=rules,
        names=names,
        echo=sys.stdout if args.echo else None,
    )
    print(f"session {session_id}")
    print_summary(summary, time.perf_counter() - started)
    return 0 if summary.ledger.is_balanced else 1


def print_summary(summary: Summary, seconds: float) -> None:
    """Prints the summary table of a simulation."""
    ledger = summary.ledger
    rows = [
        ("variant", str(summary.variant)),
        ("rounds settled", f"{summary.rounds}"),
        ("redeals (all passed)", f"{summary.redeals}"),
        ("landlord win rate", f"{summary.landlord_win_rate:.1%}"),
        ("bombs", f"{summary.bombs}"),
        ("rockets", f"{summary.rockets}"),
        ("springs", f"{summary.springs}"),
        ("mean multiplier", f"{summary.mean_multiplier:.3f}"),
        (
            "totals",
            "  ".join(f"{n}: {t:+d}" for n, t in zip(ledger.players, ledger.totals, strict=True)),
        ),
        ("ledger sums to zero", "yes" if ledger.is_balanced else f"NO ({sum(ledger.totals):+d})"),
        ("rounds per second", f"{summary.rounds / max(seconds, 1e-9):,.0f}"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
