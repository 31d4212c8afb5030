"""Tournaments between bots: config, duplicate schedule, SQLite results, standings, SPRT, runner."""
