"""Tichu Referee: a rules engine, a gRPC referee, replays and tournaments for Tichu bots."""

__version__ = "0.2.0"
