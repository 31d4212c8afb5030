// A live table: folds the match's public events (the Watch view, sent as server-sent events)
// into seats, the current trick, the score sheet and the event list. Every name and card reaches
// the page through textContent, never as markup.
"use strict";

(function () {
  const root = document.getElementById("match");
  if (!root) return;
  const matchId = root.dataset.match;
  const players = Number(root.dataset.players) || 4;
  const seatNodes = Array.from(document.querySelectorAll("#seats .seat"));
  const $ = (id) => document.getElementById(id);
  const CALLS = { tichu: "Tichu", grand_tichu: "Grand Tichu" };
  let names = seatNodes.map((node) => node.querySelector(".name").textContent);
  let state;

  function reset() {
    state = { cardsLeft: [], played: [], calls: [], out: [], hands: [], trick: [], wish: null, totals: [0, 0] };
    for (let seat = 0; seat < players; seat++) {
      state.hands.push(null);
      state.cardsLeft.push(null);
      state.played.push(0);
      state.calls.push("");
      state.out.push(0);
    }
    $("sheet").replaceChildren();
    $("events").replaceChildren();
    $("result").hidden = true;
  }

  function countCards(cards) {
    return cards ? cards.trim().split(/\s+/).length : 0;
  }

  function who(seat) {
    return `${names[seat] ?? "seat " + seat} (${seat})`;
  }

  function describe(event) {
    switch (event.type) {
      case "round_started": return `Hand ${event.round + 1} begins; ${who(event.dealer)} deals`;
      case "called": return `${who(event.seat)} calls ${CALLS[event.call] ?? event.call}`;
      case "call_declined": return null;
      case "cards_dealt": return `${who(event.seat)} is dealt ${event.cards}`;
      case "exchange_submitted": return `${who(event.seat)} gives ${event.gifts.map((g) => `${g[1]} to ${g[0]}`).join(", ")}`;
      case "cards_received": return null;
      case "exchange_completed": return "The cards are exchanged";
      case "played": {
        const combo = event.combo && event.combo.kind ? ` (${event.combo.kind.replaceAll("_", " ")})` : "";
        const wish = event.wish ? `, wishes a ${event.wish}` : "";
        return `${who(event.seat)} plays ${event.cards}${combo}${event.out_of_turn ? " out of turn" : ""}${wish}`;
      }
      case "passed": return `${who(event.seat)} passes`;
      case "window_closed": return null; // nobody bombed: folded away, as a viewer expects
      case "wish_fulfilled": return `${who(event.seat)} fulfils the wish (${event.rank})`;
      case "lead_passed": return `The Dog passes the lead to ${who(event.to)}`;
      case "trick_won": return `${who(event.seat)} wins the trick (${event.points} points)`;
      case "dragon_gift_pending": return `${who(event.seat)} must give the Dragon trick away`;
      case "dragon_given": return `${who(event.seat)} gives the Dragon trick to ${who(event.to)}`;
      case "went_out": return `${who(event.seat)} goes out (${event.place})`;
      case "round_ended": return `The hand ends (${event.reason.replaceAll("_", " ")})`;
      case "round_scored": return `Hand ${event.round + 1}: A ${event.round_points[0]}, B ${event.round_points[1]}; totals ${event.totals[0]} : ${event.totals[1]}`;
      case "game_over": return event.winner === null ? "The game ends in a draw" : `Team ${"AB"[event.winner]} wins the game`;
      default: return event.type.replaceAll("_", " ");
    }
  }

  function cardList(cards) {
    return cards ? cards.trim().split(/\s+/) : [];
  }

  function without(hand, cards) {
    if (hand === null) return null;
    const left = hand.slice();
    for (const card of cards) {
      const at = left.indexOf(card);
      if (at >= 0) left.splice(at, 1);
    }
    return left;
  }

  // Private events reach the page only in the organiser's view (the server decides).
  function foldPrivate(event) {
    switch (event.type) {
      case "cards_dealt":
        state.hands[event.seat] = event.stage === "rest" ? (state.hands[event.seat] ?? []).concat(cardList(event.cards)) : cardList(event.cards);
        break;
      case "exchange_submitted":
        state.hands[event.seat] = without(state.hands[event.seat], event.gifts.map((gift) => gift[1]));
        break;
      case "cards_received":
        state.hands[event.seat] = (state.hands[event.seat] ?? []).concat(event.received.map((gift) => gift[1]));
        break;
    }
  }

  function fold(event) {
    foldPrivate(event);
    switch (event.type) {
      case "round_started":
        for (let seat = 0; seat < players; seat++) {
          state.cardsLeft[seat] = players === 4 ? 14 : null;
          state.played[seat] = 0;
          state.calls[seat] = "";
          state.out[seat] = 0;
          state.hands[seat] = null;
        }
        state.trick = [];
        state.wish = null;
        break;
      case "called":
        state.calls[event.seat] = CALLS[event.call] ?? event.call;
        break;
      case "played": {
        const n = countCards(event.cards);
        state.played[event.seat] += n;
        if (state.cardsLeft[event.seat] !== null) state.cardsLeft[event.seat] -= n;
        state.hands[event.seat] = without(state.hands[event.seat], cardList(event.cards));
        state.trick.push({ seat: event.seat, text: event.cards });
        if (event.wish) state.wish = event.wish;
        break;
      }
      case "passed":
        state.trick.push({ seat: event.seat, text: "pass" });
        break;
      case "wish_fulfilled":
        state.wish = null;
        break;
      case "trick_won":
      case "dragon_given":
        state.trick = [];
        break;
      case "went_out":
        state.out[event.seat] = event.place;
        break;
      case "round_scored": {
        state.totals = event.totals;
        const row = document.createElement("tr");
        for (const value of [event.round + 1, event.round_points[0], event.round_points[1]]) {
          const cell = document.createElement("td");
          cell.textContent = String(value);
          row.append(cell);
        }
        $("sheet").append(row);
        break;
      }
      case "game_over":
        state.totals = event.totals;
        break;
    }
  }

  function render() {
    seatNodes.forEach((node, seat) => {
      node.querySelector(".name").textContent = names[seat] ?? `seat ${seat}`;
      const left = state.cardsLeft[seat];
      node.querySelector('[data-role="cards"]').textContent =
        left === null ? (state.played[seat] ? `played ${state.played[seat]}` : "") : `${left} cards`;
      node.querySelector('[data-role="call"]').textContent = state.calls[seat];
      node.querySelector('[data-role="out"]').textContent = state.out[seat] ? `out #${state.out[seat]}` : "";
      const hand = state.hands[seat];
      node.querySelector('[data-role="hand"]').textContent = hand === null ? "" : hand.join(" ");
      node.classList.toggle("is-out", state.out[seat] > 0);
    });
    $("trick").replaceChildren(
      ...state.trick.map((play) => {
        const item = document.createElement("li");
        item.textContent = `${names[play.seat] ?? play.seat}: ${play.text}`;
        return item;
      }),
    );
    $("wish").textContent = state.wish ? `Wish: ${state.wish}` : "";
    $("score-a").textContent = String(state.totals[0]);
    $("score-b").textContent = String(state.totals[1]);
  }

  function log(text) {
    if (!text) return;
    const list = $("events");
    const item = document.createElement("li");
    item.textContent = text;
    const atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
    list.append(item);
    if (atEnd) list.scrollTop = list.scrollHeight;
  }

  // The clocks of the seats being waited for: a snapshot from the server after each change of
  // the match, counted down here between changes.
  const KIND_WORDS = {
    grand_tichu: "Grand Tichu?", tichu_step: "Tichu?", exchange: "to exchange", play: "to play",
    dragon_gift: "to give the Dragon",
  };
  let clocks = [];
  let clocksAt = 0;
  function showClocks() {
    const elapsed = (performance.now() - clocksAt) / 1000;
    seatNodes.forEach((node, seat) => {
      const clock = clocks.find((c) => c.seat === seat);
      const shown = node.querySelector('[data-role="clock"]');
      node.classList.toggle("is-asked", Boolean(clock));
      if (!clock) { shown.textContent = ""; return; }
      const own = Math.max(0, clock.limit_s - clock.used_s - elapsed);
      const bank = Math.max(0, clock.bank_s - Math.max(0, clock.used_s + elapsed - clock.limit_s));
      const words = KIND_WORDS[clock.kind] ?? clock.kind;
      shown.textContent = `${words} ${own.toFixed(0)} s` + (bank > 0 ? ` + bank ${bank.toFixed(0)} s` : "");
    });
  }
  setInterval(() => { if (clocks.length) showClocks(); }, 500);

  function showResult(result) {
    clocks = [];
    showClocks();
    const node = $("result");
    const winner = result.winner === null ? "No winner" : `Team ${"AB"[result.winner]} wins`;
    node.textContent = `${winner}, ${result.scores[0]} : ${result.scores[1]} (${result.reason})`;
    node.hidden = false;
    $("status").textContent = "finished";
  }

  reset();
  const source = new EventSource(`/matches/${encodeURIComponent(matchId)}/events`);
  source.addEventListener("open", () => { $("connection").textContent = ""; });
  source.addEventListener("error", () => {
    if (source.readyState !== EventSource.CLOSED) $("connection").textContent = "(reconnecting)";
  });
  source.addEventListener("seats", (message) => {
    // The first message of every connection: the stream starts again from the match's start.
    const data = JSON.parse(message.data);
    names = data.players;
    reset();
    render();
  });
  source.addEventListener("event", (message) => {
    const { event } = JSON.parse(message.data);
    if ($("status").textContent === "waiting") $("status").textContent = "running";
    fold(event);
    log(describe(event));
    render();
  });
  source.addEventListener("clock", (message) => {
    clocks = JSON.parse(message.data).clocks;
    clocksAt = performance.now();
    showClocks();
  });
  source.addEventListener("result", (message) => showResult(JSON.parse(message.data)));
  source.addEventListener("end", () => source.close());
  source.addEventListener("refused", (message) => {
    $("connection").textContent = JSON.parse(message.data).why;
    source.close();
  });
})();
