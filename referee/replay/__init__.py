"""Replays: the versioned event log a match writes, and what reads it (verify, show, html, resume)."""

from referee.match.records import FORMAT
from referee.replay.format import Replay, ReplayFormatError, read_replay
from referee.replay.writer import ReplayWriter

__all__ = ["FORMAT", "Replay", "ReplayFormatError", "ReplayWriter", "read_replay"]
