"""What a DecisionRequest costs the referee to encode, and what its observation adds.

Run `.venv/bin/python bench/request_bench.py` (a few seconds). It plays random games of the
tournament preset on the engine, makes a request of every decision every seat owes on the way
(every seat of every bomb window too: the most a referee sends, to bots that ask for no
declines), and times `referee.server.codec.request_to_proto` on each, serialized as it is sent,
with and without the seat's observation (`observation_json`, made straight from the state), the
best of five passes. It also prints the observation's size. CPU time, one core.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.match.messages import Request
from referee.rules import (
    DecisionKind,
    Phase,
    RulesConfig,
    answer_window,
    apply,
    can_call_tichu,
    default_action,
    legal_decisions,
    new_game,
    owed,
    to_act,
)
from referee.rules.legal import exchange_recipients
from referee.server import codec


def requests_of(games: int) -> tuple[list[Request], int]:
    """A request for every decision owed in `games` random games, and the hands played."""
    out: list[Request] = []
    hands = 0
    config = RulesConfig.from_json("tournament")
    for seed in range(games):
        rng = random.Random(seed)
        state, _ = new_game(config, seed)
        while not state.is_over:
            for seat in to_act(state):
                kind = owed(state, seat)
                assert kind is not None
                recipients = exchange_recipients(state, seat) if kind is DecisionKind.EXCHANGE else ()
                out.append(Request(1, kind, 1, 1000, 0, can_call_tichu(state, seat), recipients, seat, state))
            if state.window:
                answers = {s: rng.choice(list(legal_decisions(state, s))) for s in to_act(state)}
                state, _ = answer_window(state, answers)
                continue
            seat = to_act(state)[0]
            if state.phase is Phase.EXCHANGE:
                action = default_action(state, seat)
            else:
                action = rng.choice(list(legal_decisions(state, seat)))
            state, _ = apply(state, seat, action)
        hands += len(state.history)  # the rounds scored
    return out, hands


def best_us(requests: list[Request], encode: Callable[[Request], object], passes: int = 5) -> float:
    """The best pass's CPU time per request, in microseconds."""
    best = float("inf")
    for _ in range(passes):
        started = time.process_time()
        for request in requests:
            encode(request)
        best = min(best, time.process_time() - started)
    return best / len(requests) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=12, help="games of the tournament preset (default 12)")
    args = parser.parse_args()
    requests, hands = requests_of(args.games)
    with_obs = best_us(requests, lambda r: codec.request_to_proto(r).SerializeToString())
    # The same requests with an empty observation ("{}"): what the encoding costs without it.
    with mock.patch.object(codec, "observation_data", lambda state, seat, decisions=None: {}):
        without = best_us(requests, lambda r: codec.request_to_proto(r).SerializeToString())
    sizes = sorted(len(codec.request_to_proto(r).observation_json) for r in requests)
    print(f"Request bench: {len(requests)} requests of {hands} hands (tournament preset, every seat asked)")
    print(
        f"  encoded, serialized     {with_obs:.1f} us a request with its observation, {without:.1f} without"
    )
    print(f"  the observation adds    {with_obs - without:.1f} us a request")
    print(f"  observation_json        {sum(sizes) / len(sizes):,.0f} bytes on average, at most {sizes[-1]:,}")
    print(f"Reproduce: .venv/bin/python bench/request_bench.py --games {args.games}")


if __name__ == "__main__":
    main()
