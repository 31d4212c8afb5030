"""Replays: the versioned event log a Table writes, and what reads it (verify, show, resume)."""

from referee.replay.format import (
    FORMAT,
    Replay,
    ReplayFormatError,
    read_replay,
)
from referee.replay.tally import Tally
from referee.replay.writer import ReplayWriter

__all__ = ["FORMAT", "Replay", "ReplayFormatError", "ReplayWriter", "Tally", "read_replay"]
