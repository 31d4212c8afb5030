"""clients.listed: a request's legal actions parsed only as they are read, and the SDK's check of
an answer parsing only the action it names."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from clients.bot import Bot, Harness
from clients.heuristic_bot import HeuristicBot
from clients.listed import ListedActions
from clients.random_bot import RandomBot
from referee.rules import (
    Action,
    CallTichu,
    DecisionKind,
    Decline,
    Observation,
    Play,
    for_request,
    legal_decisions,
    observe,
    parse_action,
    state_from_json,
)
from referee.server.codec import action_from_proto, wire_actions
from referee.wire.tichu.v1 import referee_pb2 as pb

# Seat 0 leads with a hand of many plays (straights, pairs, a bomb among them).
LEADING = state_from_json(
    {"hands": ["MJ 2s 3s 4j 5p 6s 7s 7j 7p 7t 9s 10j Js Kp", "8s Kt", "2j", "3p 3t"], "turn": 0}
)


class Counting:
    """action_from_proto, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, msg: pb.Action) -> Action:
        self.calls += 1
        return action_from_proto(msg)


def listing() -> tuple[ListedActions[pb.Action], Counting, tuple[Action, ...]]:
    """The lazy listing of a request to seat 0 of LEADING, its parser, and the engine's own list."""
    truth = tuple(legal_decisions(LEADING, 0))
    parse = Counting()
    return ListedActions(wire_actions(truth), parse), parse, truth


def asked(legal: Sequence[Action], can_call: bool = False) -> Observation:
    """Seat 0's observation of LEADING for a PLAY request listing `legal`."""
    return for_request(observe(LEADING, 0), DecisionKind.PLAY, legal, can_call)


def test_reading_one_action_parses_that_one_and_keeps_it() -> None:
    listed, parse, truth = listing()
    assert len(truth) > 20 and len(listed) == len(truth) and parse.calls == 0
    assert listed[3] == truth[3] and listed[-1] == truth[-1] and parse.calls == 2
    assert listed[3] is listed[3] and parse.calls == 2
    assert list(listed[2:5]) == list(truth[2:5])
    kept = listed[3]
    assert list(listed) == list(truth) and parse.calls == len(truth) and list(listed)[3] is kept


def test_it_is_the_sequence_the_tuple_was() -> None:
    listed, _, truth = listing()
    assert listed == truth and truth == listed and list(listed) == list(truth)
    assert listed.index(truth[5]) == 5 and listed.count(truth[5]) == 1
    assert truth[7] in listed and Play.of("8s") not in listed
    with pytest.raises(IndexError):
        listed[len(truth)]


def test_find_parses_only_the_action_named() -> None:
    listed, parse, truth = listing()
    for index in (0, len(truth) // 2, len(truth) - 1):
        wanted = parse_action(str(truth[index]))  # an equal action, not the listed object
        found = listed.find(wanted)
        assert found == wanted and found is listed[index]
    assert parse.calls == 3
    assert listed.find(Play.of("8s")) is None and listed.find(Decline()) is None
    assert parse.calls == 3  # no text matched: nothing more was parsed
    # An answer that cannot even be hashed matches nothing (a list: a compiled Play refuses one).
    assert listed.find("not an action") is None and listed.find([1]) is None


def test_without_texts_find_parses_them_all() -> None:
    # A referee that sent the structured forms only: the texts cannot be trusted to find one.
    truth = tuple(legal_decisions(LEADING, 0))
    bare = [pb.Action() for _ in truth]
    for msg, wired in zip(bare, wire_actions(truth), strict=True):
        msg.CopyFrom(wired)
        msg.text = ""
    parse = Counting()
    listed = ListedActions(bare, parse)
    assert listed.find(truth[4]) == truth[4] and parse.calls == len(truth)
    assert listed.find(Play.of("8s")) is None and parse.calls == len(truth)  # parsed once each


def test_the_call_after_a_listing_leaves_it_unread() -> None:
    listed, parse, truth = listing()
    obs = asked(listed, can_call=True)
    assert len(obs.legal_actions) == len(truth) + 1 and parse.calls == 0
    assert obs.legal_actions[-1] == CallTichu() and CallTichu() in obs.legal_actions and parse.calls == 0
    assert obs.legal_actions[0] == truth[0] and obs.legal_actions == (*truth, CallTichu())
    assert obs.legal_decisions is listed


@pytest.mark.parametrize("bot_class", [RandomBot, HeuristicBot])
def test_the_harness_answers_as_it_did_from_a_tuple(bot_class: type[Bot]) -> None:
    listed, parse, truth = listing()
    lazy_bot, eager_bot = bot_class(), bot_class()
    lazy_bot._rng, eager_bot._rng = random.Random(3), random.Random(3)
    lazy = Harness(lazy_bot).decide(asked(listed), DecisionKind.PLAY)
    eager = Harness(eager_bot).decide(asked(truth), DecisionKind.PLAY)
    assert lazy == eager and lazy in truth
    if bot_class is RandomBot:
        assert parse.calls == 1  # the one it picked: the check found it by its text


def test_an_illegal_answer_is_replaced_as_before() -> None:
    class Stubborn(Bot):
        def play(self, obs: Observation) -> Action:
            return Play.of("8s")  # not in this hand

    listed, _, truth = listing()
    lazy = Harness(Stubborn()).decide(asked(listed), DecisionKind.PLAY)
    eager = Harness(Stubborn()).decide(asked(truth), DecisionKind.PLAY)
    assert lazy == eager
