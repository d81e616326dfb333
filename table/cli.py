"""The ``ddz-table`` command: one sub-command per part of the table."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from table.errors import UserError

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


def positive_int(text: str) -> int:
    """Parses a whole number of 1 or more for an option, with a readable error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be 1 or more")
    return value


def number_between(low: float, high: float) -> Callable[[str], float]:
    """Returns a parser of a number from ``low`` to ``high`` for an option, with a
    readable error."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value:g} is out of range; use {low:g} to {high:g}")
        return value

    return parse


def _registrars() -> list[Registrar]:
    """Lists the parts that add sub-commands; imported lazily so ``--help`` stays fast."""
    from table import mqtt_cli, rules_cli
    from table.controller import cli as controller_cli
    from table.devices import cli as devices_cli
    from table.session import cli as session_cli
    from table.vision import cli as vision_cli
    from web import cli as web_cli

    return [
        rules_cli.register,
        session_cli.register,
        controller_cli.register,
        mqtt_cli.register,
        vision_cli.register,
        web_cli.register,
        devices_cli.register,
    ]


def build_parser() -> argparse.ArgumentParser:
    """Builds the full argument parser with every part's sub-commands."""
    parser = argparse.ArgumentParser(
        prog="ddz-table",
        description="Referee and live scoreboard for Dou Dizhu at a real table.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in _registrars():
        register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one sub-command; bad input ends in one line on stderr and exit status 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
    except UserError as error:
        print(f"ddz-table: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ddz-table: interrupted", file=sys.stderr)
        return 130
    return status


if __name__ == "__main__":
    sys.exit(main())
