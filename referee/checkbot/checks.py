"""The kit's checks: each stages a deal or a position, seats the bot, and grades what it did.

A check's position (or seed), the seat the bot takes, the policies of the kit's own seats and the
proxy's faults make its situation happen; `finished` says when enough has been seen, and `grade`
turns the trace into an outcome. The referee's own answers do most of the judging: a rejection
names its reason and the rule, a timeout shows as an answer that never came.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import text_format

from referee.checkbot.proxy import Faults, Trace
from referee.checkbot.report import CheckResult, Grade
from referee.match import ClockSettings
from referee.scripted import Policy, bomber_policy
from referee.server.codec import action_from_proto
from referee.wire.tichu.v1 import referee_pb2 as pb

K = pb.DecisionKind
KIND_NAMES: dict[int, str] = {
    K.DECISION_KIND_GRAND_TICHU: "GRAND_TICHU",
    K.DECISION_KIND_TICHU_STEP: "TICHU_STEP",
    K.DECISION_KIND_EXCHANGE: "EXCHANGE",
    K.DECISION_KIND_PLAY: "PLAY",
    K.DECISION_KIND_BOMB_WINDOW: "BOMB_WINDOW",
    K.DECISION_KIND_DRAGON_GIFT: "DRAGON_GIFT",
}
REASONS = {v.number: v.name.removeprefix("REJECTION_REASON_") for v in pb.RejectionReason.DESCRIPTOR.values}
# Rejections that a fault provokes and a good bot may get once (it answered what had just closed).
BENIGN = frozenset({pb.REJECTION_REASON_UNKNOWN_REQUEST, pb.REJECTION_REASON_STALE, pb.REJECTION_REASON_LATE})
# An answer is taken as accepted this long after the game moved on past it, or after QUIET_S
# with no sign either way.
SETTLE_S = 0.3
QUIET_S = 3.0


@dataclass(frozen=True, slots=True)
class Run:
    """What the graders know besides the trace: the clocks, the time now, and the bot's process."""

    clock: ClockSettings
    now: float
    exit_code: int | None = None  # the bot's process ended with this code before the check did
    match_over: bool = False  # the bot was sent the match's result (its process may then end)
    stderr_tail: str = ""


@dataclass(frozen=True)
class Check:
    """One scripted situation and how to grade the bot in it."""

    name: str
    title: str
    bot_seat: int
    finished: Callable[[Trace, Run], bool]
    grade: Callable[[Check, Trace, Run], CheckResult]
    position: dict[str, Any] | None = None  # a tichu-state/1 position; None: a fresh deal from `seed`
    seed: str = "check-bot"
    faults: Faults = field(default_factory=Faults)
    policies: dict[int, Policy] = field(default_factory=dict)  # kit seats that do not play first_policy


# ---------------------------------------------------------------------------- grading helpers


def shown(action: pb.Action) -> str:
    """An action as the bot sent it: its text, else its canonical text, else its structured form."""
    if action.text:
        return action.text
    try:
        return str(action_from_proto(action))
    except Exception:  # malformed: show what came
        return text_format.MessageToString(action, as_one_line=True) or "an empty action"


def delivered_at(trace: Trace, request_id: int) -> float | None:
    """When the bot first got a request (alone or in a Snapshot)."""
    for s in trace.seen:
        if s.to_bot is None:
            continue
        kind = s.to_bot.WhichOneof("kind")
        if (kind == "request" and s.to_bot.request.request_id == request_id) or (
            kind == "snapshot" and any(p.request_id == request_id for p in s.to_bot.snapshot.pending)
        ):
            return s.at
    return None


def settled(trace: Trace, request: pb.DecisionRequest, run: Run) -> bool:
    """The request's fate is known: rejected, cancelled, answered a moment ago, or out of time."""
    rid = request.request_id
    if trace.cancelled(rid) or any(r.request_id == rid for r in trace.rejections()):
        return True
    answers = trace.decisions(rid)
    if answers:
        # Accepted: the game moved on past the request after the answer (a rejection would have
        # come first, on the same stream); with no sign either way, a while after the answer.
        at = answers[-1][0].at
        moved = any(s.at >= at and e.state_version > request.state_version for s, e in trace.to_bot("event"))
        waited = run.now - at
        return (moved and waited > SETTLE_S) or waited > QUIET_S
    start = delivered_at(trace, rid)
    limit = (request.deadline_ms + run.clock.grace_ms) / 1000 + 2 * SETTLE_S
    return start is not None and run.now - start > limit


def first(trace: Trace, kind: int) -> pb.DecisionRequest | None:
    """The first request of a kind the bot got."""
    found = trace.requests(kind)
    return found[0] if found else None


def outcome(check: Check, verdict: Grade, detail: str = "", fault: str = "", rule: str = "") -> CheckResult:
    """An outcome of this check."""
    return CheckResult(check.name, check.title, verdict, detail, fault, rule)


def exited(check: Check, run: Run, fault: str = "bot_exited") -> CheckResult | None:
    """A failure if the bot's process ended before the check did (not after the match's result)."""
    if run.exit_code is None or (run.exit_code == 0 and run.match_over):
        return None
    tail = f"; its last words: {run.stderr_tail}" if run.stderr_tail else ""
    return outcome(check, Grade.FAILED, f"the bot's process ended (exit code {run.exit_code}){tail}", fault)


def bad_rejection(check: Check, trace: Trace, tolerate: frozenset[int] = frozenset()) -> CheckResult | None:
    """A failure for the first rejection that is not tolerated here, naming what the bot sent."""
    for rejection in trace.rejections():
        if rejection.reason not in tolerate:
            return _rejected(check, trace, rejection)
    return None


def _rejected(check: Check, trace: Trace, rejection: pb.Rejection) -> CheckResult:
    sent = ""
    if rejection.request_id:
        answers = trace.decisions(rejection.request_id)
        if answers:
            sent = f"to request {rejection.request_id} the bot sent {shown(answers[-1][1].action)!r}; "
    else:
        moves = trace.from_bot("out_of_turn")
        if moves:
            sent = f"out of turn the bot sent {shown(moves[-1][1].action)!r}; "
    reason = REASONS.get(rejection.reason, str(rejection.reason))
    detail = f"{sent}the referee rejected it ({reason}): {rejection.message}"
    return outcome(check, Grade.FAILED, detail, f"{reason.lower()}_answer", rejection.rule)


def answered_well(check: Check, trace: Trace, request: pb.DecisionRequest) -> CheckResult | None:
    """A failure if the request got no answer in time, or a rejected one."""
    for rejection in trace.rejections():
        if rejection.request_id == request.request_id:
            return _rejected(check, trace, rejection)
    if not trace.decisions(request.request_id) and not trace.cancelled(request.request_id):
        kind = KIND_NAMES.get(request.kind, str(request.kind))
        return outcome(
            check,
            Grade.FAILED,
            f"the bot did not answer the {kind} request {request.request_id} within its "
            f"{request.deadline_ms} ms; the referee applied its default",
            "no_answer",
            "R-DEF-1",
        )
    return None


def passed(check: Check, detail: str = "") -> CheckResult:
    """The check passed."""
    return outcome(check, Grade.PASSED, detail)


def not_reached(check: Check, what: str) -> CheckResult:
    """The situation never arose."""
    return outcome(check, Grade.NOT_REACHED, f"{what} never happened")


# ---------------------------------------------------------------------------- the plain checks


def requests_answered(*kinds: int) -> Rule:
    """A finish and a grade for checks whose situation is the bot's first request of each kind."""

    def finished(trace: Trace, run: Run) -> bool:
        last = first(trace, kinds[-1])
        return last is not None and settled(trace, last, run)

    def grade(check: Check, trace: Trace, run: Run) -> CheckResult:
        crashed = exited(check, run)
        if crashed is not None:
            return crashed
        for kind in kinds:
            request = first(trace, kind)
            if request is None:
                return not_reached(check, f"a {KIND_NAMES[kind]} request to the bot")
            failure = answered_well(check, trace, request)
            if failure is not None:
                return failure
        return bad_rejection(check, trace) or passed(check)

    return finished, grade


Rule = tuple[Callable[[Trace, Run], bool], Callable[[Check, Trace, Run], CheckResult]]


def make(name: str, title: str, bot_seat: int, rule: Rule, **options: Any) -> Check:
    """A check from its finish and grade."""
    return Check(name, title, bot_seat, rule[0], rule[1], **options)


# The other seats hold a few low cards; nobody has called.
WISH = {
    "hands": ["7s 9j Kp", "2j 3j 4j", "5j 6j 8j", "9p 10p Jp"],
    "trick": [{"seat": 3, "cards": "MJ"}],
    "wish": "7",
    "turn": 0,
    "played": [True, True, True, True],
    "config": {"target_score": 50},
}
# The bot's Dragon won the trick: it owes the gift.
DRAGON = {
    "hands": ["5j 8s", "2j 3j 4j", "5s 6j 8j", "9p 10p Jp"],
    "trick": [{"seat": 0, "cards": "DRG"}],
    "passed": [1, 2, 3],
    "gift": 0,
    "turn": 0,
    "played": [True, True, True, True],
    "config": {"target_score": 50},
}
# The bot leads with the Dog as its only card.
DOG = {
    "hands": ["DOG", "2j 3j 4j", "5s 6j 8j", "9p 10p Jp"],
    "turn": 0,
    "played": [True, True, True, True],
    "config": {"target_score": 50},
}
# Seat 0 (the kit) leads 7s; seats 1 and 2 hold bombs (the bot is one of them); nobody has
# played, so anyone may still call Tichu out of turn.
BOMBS = {
    "hands": ["7s 9j 10j", "3j 3s 3p 3t 4j", "5j 5s 5p 5t 6j", "2j 8p Kj"],
    "turn": 0,
    "played": [False, False, False, False],
    "config": {"target_score": 50},
}


def _plain_checks() -> list[Check]:
    return [
        make(
            "opening",
            "Grand Tichu, the Tichu step and the exchange (R-GT-1, R-CALL-6, R-EXCH-1)",
            0,
            requests_answered(
                K.DECISION_KIND_GRAND_TICHU, K.DECISION_KIND_TICHU_STEP, K.DECISION_KIND_EXCHANGE
            ),
        ),
        make(
            "wish",
            "following the Mah Jong's wish (R-WISH-3, R-WISH-4)",
            0,
            requests_answered(K.DECISION_KIND_PLAY),
            position=WISH,
        ),
        make(
            "dragon_gift",
            "giving the Dragon trick away (R-DRG-2)",
            0,
            requests_answered(K.DECISION_KIND_DRAGON_GIFT),
            position=DRAGON,
        ),
        make("dog", "leading the Dog (R-DOG-1)", 0, requests_answered(K.DECISION_KIND_PLAY), position=DOG),
        make(
            "bomb_window",
            "a bomb window and out-of-turn calls (R-BOMB-5, R-BOMB-9, R-CALL-1)",
            1,
            requests_answered(K.DECISION_KIND_BOMB_WINDOW),
            position=BOMBS,
        ),
    ]


# ---------------------------------------------------------------------------- the faults

# The bot (seat 0) follows a single in a trick seat 3 led.
TRICK = {
    "hands": ["8s 10j Kp", "2j 3j 4j", "5s 7j 9j", "9p 10p Jp 6p"],
    "trick": [{"seat": 3, "cards": "6j"}],
    "turn": 0,
    "played": [True, True, True, True],
    "config": {"target_score": 50},
}
OPENING = (K.DECISION_KIND_GRAND_TICHU, K.DECISION_KIND_TICHU_STEP, K.DECISION_KIND_EXCHANGE)


def later_pending(trace: Trace) -> list[pb.DecisionRequest]:
    """The requests that Snapshots on the bot's later streams (after a cut) listed as pending."""
    return [p for s, snap in trace.to_bot("snapshot") if s.stream > 1 for p in snap.pending]


def answered_on_later_stream(trace: Trace, request_id: int) -> bool:
    """The bot answered this request on a stream after the first."""
    return any(s.stream > 1 for s, _ in trace.decisions(request_id))


def _cut_finished(trace: Trace, run: Run) -> bool:
    request = first(trace, K.DECISION_KIND_PLAY)
    if request is None or not trace.cut_done:
        return False
    pending = later_pending(trace)
    if pending:
        return all(settled(trace, p, run) for p in pending)
    cut_at = next((s.at for s in trace.seen if s.way == "closed"), None)
    return cut_at is not None and run.now - cut_at > (request.deadline_ms + run.clock.grace_ms) / 1000 + 1.0


def _cut_grade(check: Check, trace: Trace, run: Run) -> CheckResult:
    request = first(trace, K.DECISION_KIND_PLAY)
    if request is None or not trace.cut_done:
        return exited(check, run) or not_reached(
            check, "a PLAY request to the bot (where the kit cuts the stream)"
        )
    if trace.streams < 2:
        ended = "" if run.exit_code is None else f" (its process ended with exit code {run.exit_code})"
        return outcome(
            check,
            Grade.FAILED,
            f"the kit cut the bot's stream after PLAY request {request.request_id}; the bot never "
            f"opened a new one{ended}",
            "never_reconnected",
        )
    for pending in later_pending(trace):
        if not answered_on_later_stream(trace, pending.request_id) and not trace.cancelled(
            pending.request_id
        ):
            return outcome(
                check,
                Grade.FAILED,
                f"the bot reconnected, but did not answer request {pending.request_id}, which the "
                "Snapshot listed as pending; the referee applied its default",
                "pending_request_unanswered",
                "R-DEF-1",
            )
    return exited(check, run) or bad_rejection(check, trace, BENIGN) or passed(check)


def repeated(*, fault: str, crash: str, limit: int) -> Rule:
    """The opening with a fault that repeats requests: at most `limit` answers to one on a stream."""
    finished, plain = requests_answered(*OPENING)

    def grade(check: Check, trace: Trace, run: Run) -> CheckResult:
        failure = exited(check, run, crash)
        if failure is not None:
            return failure
        for request in trace.requests():
            per_stream: dict[int, int] = {}
            for s, _ in trace.decisions(request.request_id):
                per_stream[s.stream] = per_stream.get(s.stream, 0) + 1
            if max(per_stream.values(), default=0) > limit:
                return outcome(
                    check,
                    Grade.FAILED,
                    f"the bot answered request {request.request_id} "
                    f"{max(per_stream.values())} times on one stream",
                    fault,
                )
        return plain(check, Trace(trace.faults, [s for s in trace.seen if not _benign(s)]), run)

    return finished, grade


def _benign(s: object) -> bool:
    """A rejection a repeated request provokes (UNKNOWN_REQUEST, STALE, LATE): not the bot's fault."""
    to_bot = getattr(s, "to_bot", None)
    return (
        to_bot is not None and to_bot.WhichOneof("kind") == "rejection" and to_bot.rejection.reason in BENIGN
    )


def _after_held(trace: Trace) -> pb.DecisionRequest | None:
    """The first request the bot got after the one the kit held past its deadline."""
    requests = trace.requests()
    for index, request in enumerate(requests):
        if request.request_id == trace.held_request_id:
            return requests[index + 1] if index + 1 < len(requests) else None
    return None


def _held_finished(trace: Trace, run: Run) -> bool:
    after = _after_held(trace)
    return after is not None and settled(trace, after, run)


def held(crash: str) -> Rule:
    """A finish and a grade for a request the kit holds past its deadline: the bot must carry on."""

    def grade(check: Check, trace: Trace, run: Run) -> CheckResult:
        failure = exited(check, run, crash)
        if failure is not None:
            return failure
        after = _after_held(trace)
        if after is None:
            return not_reached(check, "a request to the bot after the one held past its deadline")
        clean = Trace(trace.faults, [s for s in trace.seen if not _benign(s)])
        return answered_well(check, clean, after) or bad_rejection(check, clean) or passed(check)

    return _held_finished, grade


def _fault_checks() -> list[Check]:
    return [
        Check(
            "dropped_stream",
            "a stream cut mid-trick: reconnect and answer the pending request from the Snapshot",
            0,
            _cut_finished,
            _cut_grade,
            position=TRICK,
            faults=Faults(cut_on_play=True),
        ),
        make(
            "duplicates",
            "every request and event sent twice: one answer per request",
            0,
            repeated(fault="answered_twice", crash="crashed_on_duplicate", limit=1),
            faults=Faults(duplicate=True),
        ),
        make(
            "delayed",
            "every message 150 ms late: still every answer in time",
            0,
            requests_answered(*OPENING),
            faults=Faults(delay_ms=150),
        ),
        make(
            "stale_request",
            "an answered request sent again after a newer one: follow the newest",
            0,
            repeated(fault="answered_stale_request", crash="crashed_on_stale_request", limit=2),
            faults=Faults(replay_answered=True),
        ),
    ]


def held_checks(clock: ClockSettings) -> list[Check]:
    """Requests the kit holds past their deadlines: the referee's default applies, and a late
    answer is rejected (LATE); the bot must not crash and must answer its next request."""
    return [
        make(
            "timed_out",
            "a request held past its deadline (the default applies, R-DEF-1): carry on",
            0,
            held("crashed_after_timeout"),
            faults=Faults(hold_first_ms=clock.decision_ms + clock.grace_ms + 1_000),
        ),
        make(
            "closed_window",
            "a bomb window that closed before the bot heard of it (R-BOMB-9): carry on",
            2,
            held("crashed_on_closed_window"),
            position=BOMBS,
            faults=Faults(hold_first_ms=clock.window_ms + clock.grace_ms + 1_000),
            policies={1: bomber_policy},
        ),
    ]


def all_checks(clock: ClockSettings | None = None) -> list[Check]:
    """Every check, in the order the report lists them (`clock`: the kit's match clocks)."""
    return [*_plain_checks(), *_fault_checks(), *held_checks(clock or ClockSettings(decision_ms=3_000))]
