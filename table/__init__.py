"""ddz-table: a referee and live scoreboard for Dou Dizhu at a real table."""

__version__ = "0.1.0"
