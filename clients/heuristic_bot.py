"""HeuristicBot: a few rules of thumb that beat RandomBot by a wide margin.

The idea: split the hand once into combinations (bombs, straights, stairs, full houses, pairs,
singles); lead the lowest of them, longer ones first; follow with the cheapest play that beats
the top without breaking one; leave a trick to a partner who is winning it; keep the Dragon,
the Phoenix, Aces and bombs for when an opponent is about to go out or the trick is rich.
Calls need a hand with plenty of such control cards and few low combinations.
"""

from __future__ import annotations

from collections.abc import Sequence

from clients.bot import Bot, combo_of, exchange_recipients, opponents, sensible_exchange, teammates
from referee.rules import (
    Action,
    Combo,
    ComboKind,
    Exchange,
    Observation,
    Pass,
    Play,
    cards_of,
    mask_of,
    team_of,
)
from referee.rules.actions import make_exchange
from referee.rules.cards import DOG, DRG, MJ, PHX, RANK_MASKS
from referee.rules.combos import COMBOS, bombs, classify, plays

PASS = Pass()
ACES = RANK_MASKS[14]


class HeuristicBot(Bot):
    """Leads low combinations, follows cheaply, passes to a winning partner, saves its bombs."""

    name = "heuristic"

    def grand_tichu(self, obs: Observation) -> bool:
        """Only on first cards rich in control: e.g. Dragon, Phoenix and two Aces."""
        return control(mask_of(obs.hand)) >= 4

    def tichu(self, obs: Observation) -> bool:
        """A full hand with enough control cards to win back the lead for every low combination."""
        return is_tichu_hand(mask_of(obs.hand))

    def exchange(self, obs: Observation) -> Exchange:
        """Loose low cards to the opponents, the best card short of the Dragon to the partner."""
        recipients = exchange_recipients(obs)
        rivals = [s for s in recipients if team_of(s) != obs.team]
        partners = [s for s in recipients if team_of(s) == obs.team]
        if len(rivals) != 2 or len(partners) != 1:
            return sensible_exchange(obs)  # six players: the gifts go to partners only
        hand = mask_of(obs.hand)
        loose = [u for u in split_hand(hand) if u.bit_count() == 1 and not u & (DRG | PHX | MJ | ACES)]
        # Point cards (5, 10, K) last: an opponent should not get points for free.
        loose.sort(key=lambda u: (_points(u) > 0, u))
        low = [cards_of(u)[0] for u in loose[:2]]
        for card in obs.hand:
            if len(low) == 2:
                break
            if card not in low and not card.mask & (DRG | PHX):
                low.append(card)
        if len(low) < 2:
            return sensible_exchange(obs)
        rest = [c for c in obs.hand if c not in low]
        called = any(obs.calls[p] != "none" for p in partners)
        best = rest[-1] if called else max((c for c in rest if not c.mask & (DRG | PHX)), default=rest[-1])
        return make_exchange([(rivals[0], low[0]), (rivals[1], low[1]), (partners[0], best)])

    def play(self, obs: Observation) -> Action:
        """Go out if possible; else lead low or follow cheaply (see the module docstring)."""
        hand = mask_of(obs.hand)
        options = [a for a in obs.legal_decisions if isinstance(a, Play)]
        can_pass = any(isinstance(a, Pass) for a in obs.legal_decisions)
        finishing = [p for p in options if p.cards_mask == hand]
        if finishing:
            return finishing[0]
        units = split_hand(hand)
        if obs.top is None:
            return self._lead(obs, hand, units, options)
        return self._follow(obs, units, options, can_pass)

    def bomb(self, obs: Observation) -> Play | None:
        """Bomb an opponent's trick only when he is about to go out or the trick is rich."""
        if obs.top_seat is None or obs.top_seat in teammates(obs) or not _urgent(obs):
            return None
        found = [a for a in obs.legal_decisions if isinstance(a, Play)]
        return min(found, key=lambda p: _key(p, obs.top)) if found else None

    def _lead(self, obs: Observation, hand: int, units: list[int], options: Sequence[Play]) -> Play:
        dog = next((p for p in options if p.cards_mask == DOG), None)
        partner_playing = any(obs.hand_sizes[t] for t in teammates(obs))
        if dog is not None and partner_playing and obs.calls[obs.seat] == "none":
            return dog  # the Dog can only be led: hand the lead to the partner while he plays
        lone_rival = any(obs.hand_sizes[o] == 1 for o in opponents(obs))

        def lead_cost(unit: int) -> float:
            rank = _rank(unit)
            cost = rank - 2 * (unit.bit_count() - 1)
            if unit.bit_count() == 1 and lone_rival:
                cost += 20  # a single would let the opponent with one card go out
            if _is_control(unit):
                cost += 30  # winners win back the lead later; spend the losers first
            return cost

        for unit in sorted(units, key=lead_cost):
            matching = [p for p in options if p.cards_mask == unit]
            if matching:
                return _with_wish(matching, hand)
        # A wish to fulfil (R-WISH-4) or an odd hand: the least disruptive legal lead.
        return min(options, key=lambda p: _follow_cost(p, units, None))

    def _follow(self, obs: Observation, units: list[int], options: Sequence[Play], can_pass: bool) -> Action:
        if can_pass and obs.top_seat in teammates(obs):
            return PASS  # the partner is winning this trick: let him have it
        ordinary = [p for p in options if not _is_bomb(p, obs.top)]
        if not ordinary:
            bomb = self.bomb(obs) if options else None
            if bomb is not None:
                return bomb
            return PASS if can_pass else min(options, key=lambda p: _key(p, obs.top))
        best = min(ordinary, key=lambda p: _follow_cost(p, units, obs.top))
        spends = _is_control(best.cards_mask) or _broken(best.cards_mask, units) > 1
        racing = obs.calls[obs.seat] != "none"  # a caller must go out first: no saving winners
        if can_pass and spends and not racing and not _urgent(obs) and len(obs.hand) > 4:
            return PASS  # not worth a winner or a broken combination
        return best


# ----------------------------------------------------------------------------- hand analysis


def split_hand(hand: int) -> list[int]:
    """A greedy split of a hand into combinations (card masks) to play one by one.

    Bombs first, then straights (without the Phoenix, which stays a free card), then stairs,
    full houses, triples, pairs and the rest as singles.
    """
    units: list[int] = []
    for cards, _ in sorted(bombs(hand, None), key=lambda b: -COMBOS[b[1]].length):
        if not cards & ~hand:
            units.append(cards)
            hand &= ~cards
    while True:
        naturals = hand & ~(PHX | DOG | DRG)
        straights = [(m, COMBOS[c]) for m, c in plays(naturals, None) if COMBOS[c].kind is ComboKind.STRAIGHT]
        if not straights:
            break
        cards, _ = max(straights, key=lambda s: (s[1].length, -s[1].key))
        units.append(cards)
        hand &= ~cards
    groups = {r: hand & RANK_MASKS[r] for r in range(2, 15) if hand & RANK_MASKS[r]}
    pairs = [r for r, m in groups.items() if m.bit_count() == 2]
    triples = [r for r, m in groups.items() if m.bit_count() == 3]
    # Consecutive pairs make stairs: one lead instead of several.
    run: list[int] = []
    for r in [*pairs, 99]:
        if run and r != run[-1] + 1:
            if len(run) >= 2:
                units.append(sum(groups.pop(x) for x in run))
            run = []
        if r != 99:
            run.append(r)
    pairs = [r for r in pairs if r in groups]
    for r in triples:
        if pairs:
            low = pairs.pop(0)
            units.append(groups.pop(r) | groups.pop(low))
    for mask in groups.values():
        units.append(mask)
    for special in (MJ, DOG, PHX, DRG):
        if hand & special:
            units.append(special)
    return units


def control(hand: int) -> int:
    """Cards and bombs that win tricks: the Dragon, the Phoenix, each Ace, each bomb."""
    return bool(hand & DRG) + bool(hand & PHX) + (hand & ACES).bit_count() + len(bombs(hand, None))


def is_tichu_hand(hand: int) -> bool:
    """Four or more control cards, enough to regain the lead after each combination below a Jack."""
    low = [u for u in split_hand(hand) if not _is_control(u) and _rank(u) < 11 and u != DOG]
    return control(hand) >= 4 and len(low) <= min(control(hand) - 1, 3)


def _reading(cards: int) -> Combo | None:
    readings = classify(cards)
    return readings[0] if readings else None


def _rank(cards: int) -> float:
    """A combination's strength as a rank: its top for straights and sets; the Phoenix is 14.5."""
    if cards == PHX:
        return 14.5
    if cards == DOG:
        return 0
    combo = _reading(cards)
    return combo.rank if combo else 0


def _is_control(cards: int) -> bool:
    """The Dragon, the Phoenix, a single Ace or a bomb: cards that win back the lead."""
    if cards & (DRG | PHX) or (cards.bit_count() == 1 and cards & ACES):
        return True
    return _is_bomb_mask(cards)


def _follow_cost(play: Play, units: list[int], top: Combo | None) -> tuple[int, bool, int]:
    """Cheapest first: breaks fewer combinations, spends no control card, lower."""
    return (_broken(play.cards_mask, units), _is_control(play.cards_mask), _key(play, top))


def _is_bomb_mask(cards: int) -> bool:
    combo = _reading(cards)
    return combo is not None and combo.is_bomb


def _is_bomb(play: Play, top: Combo | None) -> bool:
    combo = combo_of(play, top)
    return combo is not None and combo.is_bomb


def _key(play: Play, top: Combo | None) -> int:
    combo = combo_of(play, top)
    return combo.key if combo else 0


def _broken(cards: int, units: list[int]) -> int:
    """How many of the hand's combinations a play would break (use in part)."""
    return sum(1 for u in units if u & cards and u & ~cards)


def _points(cards: int) -> int:
    return sum(c.points for c in cards_of(cards))


def _urgent(obs: Observation) -> bool:
    """An opponent holds the trick and is about to go out, or the trick is worth 20 or more."""
    if obs.top_seat is None or obs.top_seat in teammates(obs):
        return False
    points = sum(_points(mask_of(p.cards)) for p in obs.trick)
    return 0 < obs.hand_sizes[obs.top_seat] <= 2 or points >= 20


def _with_wish(matching: Sequence[Play], hand: int) -> Play:
    """For a Mah Jong lead, wish for the highest rank not in hand (never obliging ourselves)."""
    if len(matching) == 1:
        return matching[0]
    missing = [p for p in matching if p.wish and not hand & RANK_MASKS[p.wish]]
    return max(missing, key=lambda p: p.wish) if missing else matching[0]
