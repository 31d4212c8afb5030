// A person's seat: draws what the relay sends (referee/web/seat.py) and sends back the answers.
// It knows no rule of the game: every choice it offers is one of the request's legal actions,
// as the referee listed them; anything else the referee refuses, and the page says why.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const token = decodeURIComponent(location.hash.replace(/^#/, ""));
  const socketPath = $("table").dataset.socket;

  let socket = null;
  let view = null; // the last view
  let selected = new Set(); // card notations
  let focusIndex = 0;
  let exchange = {}; // recipient seat -> card, while an exchange is being chosen
  let choiceList = []; // the actions the prompt offers as numbered choices
  let finished = false;
  let retryMs = 500;
  let clockTimer = null;
  let clockEnd = 0;

  // ---------------------------------------------------------------- the socket

  function connect() {
    if (!token) {
      status("This page needs the seat link the organiser gave you (it ends in #…).");
      return;
    }
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(scheme + "//" + location.host + socketPath);
    socket.addEventListener("open", () => {
      socket.send(JSON.stringify({ type: "hello", token: token }));
      status("Connected; waiting for the referee…");
    });
    socket.addEventListener("message", (event) => {
      retryMs = 500;
      receive(JSON.parse(event.data));
    });
    socket.addEventListener("close", (event) => {
      socket = null;
      if (finished) return;
      // Refused (a wrong or finished seat's link), or closed for a broken rule: asking again
      // would be refused again. The relay's message says why; a reload tries once more.
      if (event.code === 4001 || event.code === 1008 || event.code === 1009) {
        document.body.dataset.closed = String(event.code);
        return;
      }
      status("Connection lost: reconnecting to your seat…");
      setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 8000);
    });
  }

  function send(message) {
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(message));
      return true;
    }
    showRefusal("Not connected to the referee: your move was not sent.");
    return false;
  }

  function receive(message) {
    if (message.type === "view") {
      view = message;
      draw();
    } else if (message.type === "log") {
      appendLog(message.lines);
    } else if (message.type === "rejection") {
      const rule = message.rule ? message.rule + ": " : "";
      showRefusal("The referee refused that (" + message.reason + "): " + rule + message.message);
    } else if (message.type === "result") {
      finished = true;
      document.body.dataset.over = "true";
      $("prompt").dataset.kind = "";
      status("Match over. " + message.text);
      $("prompt-text").textContent = "Match over. " + message.text;
      $("choices").replaceChildren();
    } else if (message.type === "error") {
      showRefusal(message.message);
      status(message.message);
    }
  }

  // ---------------------------------------------------------------- drawing

  function status(text) {
    $("status").textContent = text;
  }

  function showRefusal(text) {
    const box = $("refusal");
    box.textContent = text;
    box.hidden = false;
  }

  function clearRefusal() {
    $("refusal").hidden = true;
    $("refusal").textContent = "";
  }

  function request() {
    return view && view.requests && view.requests.length ? view.requests[0] : null;
  }

  function cardLabel(card) {
    return card.label;
  }

  function cardElement(card, tag) {
    const el = document.createElement(tag || "span");
    el.className = "card suit-" + (card.suit || "special").toLowerCase();
    const rank = document.createElement("span");
    rank.className = "rank";
    rank.textContent = card.suit ? card.rank : card.label;
    el.append(rank);
    if (card.suit) {
      const suit = document.createElement("span");
      suit.className = "suit";
      suit.textContent = card.suit;
      el.append(suit);
    }
    el.title = cardLabel(card);
    return el;
  }

  function draw() {
    if (!view || view.seat === null || view.seat === undefined) return;
    const me = view.seats ? view.seats[view.seat] : null;
    $("me").textContent = me ? "(seat " + view.seat + ", team " + "AB"[view.team] + ")" : "";
    if (!finished) status("Round " + (view.round || 1) + (view.phase ? ", " + view.phase.replace("_", " ") : ""));
    drawSeats();
    drawTrick();
    drawHand();
    drawSheet();
    drawPrompt();
    drawClock();
  }

  function drawSeats() {
    if (!view.seats) return;
    for (const seat of view.seats) {
      if (seat.place === "you") continue;
      const box = $("seat-" + seat.place);
      if (!box) continue;
      box.replaceChildren();
      const name = document.createElement("h3");
      name.textContent = seat.name + (seat.team === view.team ? " · partner" : " · opponent");
      const facts = document.createElement("p");
      const parts = [seat.cards + (seat.cards === 1 ? " card" : " cards")];
      if (seat.call !== "none") parts.push(seat.call === "grand_tichu" ? "GRAND TICHU" : "TICHU");
      if (seat.out) parts.push("out");
      if (seat.passed) parts.push("passed");
      if (seat.turn) parts.push("to play");
      if (!seat.connected) parts.push("away");
      facts.textContent = parts.join(" · ");
      box.classList.toggle("turn", seat.turn);
      box.append(name, facts);
    }
    const mine = view.seats[view.seat];
    const calls = [];
    if (mine.call !== "none") calls.push(mine.call === "grand_tichu" ? "you called GRAND TICHU" : "you called TICHU");
    if (mine.out) calls.push("you are out");
    $("my-calls").textContent = calls.join(", ");
  }

  function drawTrick() {
    $("wish").textContent = view.wish ? "Wish: " + view.wish + " (a " + view.wish + " must be played when it can be)" : "";
    const list = $("trick-plays");
    list.replaceChildren();
    if (!view.trick || view.trick.length === 0) {
      const empty = document.createElement("li");
      empty.textContent = view.phase === "play" ? "No cards on the table." : "";
      list.append(empty);
      return;
    }
    view.trick.forEach((play, index) => {
      const item = document.createElement("li");
      if (index === view.trick.length - 1) item.className = "top";
      const who = document.createElement("span");
      who.className = "who";
      who.textContent = play.name + ": ";
      item.append(who);
      for (const card of play.cards) item.append(cardElement(card));
      list.append(item);
    });
  }

  function handCards() {
    const given = new Set(Object.values(exchange));
    return (view.hand || []).filter((card) => !given.has(card.card));
  }

  function drawHand() {
    const hand = $("hand");
    const cards = handCards();
    const present = new Set(cards.map((c) => c.card));
    selected = new Set([...selected].filter((c) => present.has(c)));
    hand.replaceChildren();
    focusIndex = Math.min(focusIndex, Math.max(0, cards.length - 1));
    cards.forEach((card, index) => {
      const button = cardElement(card, "button");
      button.type = "button";
      button.dataset.card = card.card;
      button.setAttribute("aria-pressed", selected.has(card.card) ? "true" : "false");
      button.setAttribute("aria-label", card.label);
      button.tabIndex = index === focusIndex ? 0 : -1;
      button.addEventListener("click", () => {
        focusIndex = index;
        toggle(card.card);
      });
      hand.append(button);
    });
    updateButtons();
  }

  function drawSheet() {
    const body = $("scores").querySelector("tbody");
    body.replaceChildren();
    const us = view.team;
    (view.history || []).forEach((round, index) => {
      const row = document.createElement("tr");
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = String(index + 1);
      const a = document.createElement("td");
      a.textContent = String(round[us]);
      const b = document.createElement("td");
      b.textContent = String(round[1 - us]);
      row.append(th, a, b);
      body.append(row);
    });
    $("team-us").textContent = "Us (team " + "AB"[us] + ")";
    $("team-them").textContent = "Them (team " + "AB"[1 - us] + ")";
    $("total-us").textContent = String(view.scores ? view.scores[us] : 0);
    $("total-them").textContent = String(view.scores ? view.scores[1 - us] : 0);
  }

  function appendLog(lines) {
    const log = $("log");
    for (const line of lines) {
      const item = document.createElement("li");
      item.textContent = line;
      log.append(item);
    }
    while (log.children.length > 200) log.firstChild.remove();
    log.scrollTop = log.scrollHeight;
  }

  function seatName(seat) {
    return view.seats && view.seats[seat] ? view.seats[seat].name : "seat " + seat;
  }

  function choiceButton(label, onClick, index) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "choice";
    const key = document.createElement("kbd");
    key.textContent = String(index + 1);
    button.append(key, " " + label);
    button.addEventListener("click", onClick);
    return button;
  }

  function offer(actions, labelOf) {
    // Numbered buttons, one per action (keys 1-9 pick them).
    choiceList = actions;
    const box = $("choices");
    box.replaceChildren();
    actions.forEach((action, index) => {
      box.append(choiceButton(labelOf(action), () => act(action.action), index));
    });
  }

  function drawPrompt() {
    const req = request();
    const text = $("prompt-text");
    $("prompt").dataset.kind = req && !finished ? req.kind : "";
    $("prompt").dataset.request = req && !finished ? String(req.id) : "";
    $("choices").replaceChildren();
    choiceList = [];
    $("decline").hidden = true;
    $("tichu").hidden = !(view.can_call_tichu && !finished);
    if (finished) return;
    if (!req) {
      exchange = {};
      text.textContent = view.gift_pending !== null && view.gift_pending !== undefined && view.gift_pending !== view.seat
        ? seatName(view.gift_pending) + " is giving the Dragon trick away…"
        : "Waiting for the others…";
      return;
    }
    if (req.kind !== "exchange") exchange = {};
    if (req.kind === "grand_tichu") {
      text.textContent = "You hold your first cards. Call Grand Tichu (200 points if you go out first)?";
      offer(req.legal, (a) => (a.action === "grand_tichu" ? "Call Grand Tichu" : "No Grand Tichu"));
    } else if (req.kind === "tichu_step") {
      text.textContent = "Call Tichu now, before the exchange?";
      offer(req.legal, (a) => (a.action === "tichu" ? "Call Tichu" : "No Tichu"));
    } else if (req.kind === "exchange") {
      drawExchange(req);
    } else if (req.kind === "play") {
      const lead = !view.trick || view.trick.length === 0;
      const canPass = req.legal.some((a) => a.action === "pass");
      text.textContent = (lead ? "Your lead" : "Your turn") + ": select cards and play them" + (canPass ? ", or pass." : ".");
    } else if (req.kind === "bomb_window") {
      text.textContent = "Bomb window: you may bomb now, out of turn (B), or let it go (N).";
      $("decline").hidden = false;
    } else if (req.kind === "dragon_gift") {
      text.textContent = "You won the trick with the Dragon: give it to an opponent.";
      offer(req.legal, (a) => "Give it to " + seatName(Number(a.action.split(" ")[1])));
    }
  }

  function drawExchange(req) {
    const text = $("prompt-text");
    const box = $("choices");
    text.textContent = "Exchange: select one card, then press the player it goes to (one card for each).";
    req.exchange_to.forEach((seat, index) => {
      const given = exchange[seat];
      const label = "To " + seatName(seat) + (given ? ": " + labelOfCard(given) : "");
      box.append(
        choiceButton(label, () => {
          if (exchange[seat]) {
            delete exchange[seat];
          } else if (selected.size === 1) {
            exchange[seat] = [...selected][0];
            selected.clear();
          } else {
            showRefusal("Select exactly one card for " + seatName(seat) + " first.");
          }
          draw();
        }, index)
      );
    });
    choiceList = null; // numbers pick recipients here, through the buttons
    const done = req.exchange_to.every((seat) => exchange[seat]);
    const submit = document.createElement("button");
    submit.type = "button";
    submit.id = "send-exchange";
    submit.textContent = "Send the exchange";
    submit.disabled = !done;
    submit.addEventListener("click", () => {
      const parts = req.exchange_to.map((seat) => seat + ":" + exchange[seat]);
      if (act("exchange " + parts.join(" "))) exchange = {};
    });
    box.append(submit);
  }

  function labelOfCard(notation) {
    const card = (view.hand || []).find((c) => c.card === notation);
    return card ? card.label : notation;
  }

  // ---------------------------------------------------------------- choosing

  function sameCards(action) {
    if (action.cards.length !== selected.size) return false;
    return action.cards.every((c) => selected.has(c));
  }

  function matching() {
    const req = request();
    if (!req || (req.kind !== "play" && req.kind !== "bomb_window")) return [];
    return req.legal.filter((a) => a.cards.length > 0 && sameCards(a));
  }

  function bombs() {
    const req = request();
    if (!req) return [];
    return req.legal.filter((a) => a.bomb);
  }

  function updateButtons() {
    const req = request();
    const playing = req && (req.kind === "play" || req.kind === "bomb_window");
    $("play").disabled = !(playing && matching().length > 0 && req.kind === "play");
    $("pass").disabled = !(req && req.kind === "play" && req.legal.some((a) => a.action === "pass"));
    $("bomb").disabled = !(playing && bombs().length > 0);
  }

  function toggle(card) {
    if (selected.has(card)) selected.delete(card);
    else selected.add(card);
    clearRefusal();
    drawHand();
    const buttons = $("hand").querySelectorAll("button");
    if (buttons[focusIndex]) buttons[focusIndex].focus();
  }

  function act(action) {
    const req = request();
    clearRefusal();
    const sent = send({ type: "act", request: req ? req.id : null, action: action });
    if (sent) {
      selected.clear();
      $("choices").replaceChildren();
      choiceList = [];
    }
    return sent;
  }

  function play() {
    const found = matching();
    if (found.length === 0) {
      showRefusal(selected.size ? "Those cards are not a play you can make now." : "Select the cards to play first.");
      return;
    }
    if (found.length === 1) {
      act(found[0].action);
      return;
    }
    // Several readings of the same cards (the Phoenix) or several wishes (the Mah Jong).
    const mj = found.some((a) => "wish" in a);
    $("prompt-text").textContent = mj ? "Which rank do you wish for?" : "Which reading of your cards?";
    offer(found, (a) => a.label);
  }

  function bomb() {
    const all = bombs();
    if (all.length === 0) return;
    const chosen = all.filter((a) => sameCards(a));
    if (chosen.length === 1) {
      act(chosen[0].action);
    } else if (all.length === 1) {
      act(all[0].action);
    } else {
      $("prompt-text").textContent = "Which bomb?";
      offer(all, (a) => a.label);
    }
  }

  function pass() {
    const req = request();
    if (req && req.legal.some((a) => a.action === "pass")) act("pass");
  }

  function decline() {
    const req = request();
    if (req && req.kind === "bomb_window") act("decline");
  }

  // ---------------------------------------------------------------- the clock

  function drawClock() {
    const req = request();
    if (clockTimer) clearInterval(clockTimer);
    clockTimer = null;
    if (!req) {
      $("clock").textContent = "";
      return;
    }
    if (req.no_limit) {
      $("clock").textContent = "No time limit";
      return;
    }
    clockEnd = Date.now() + req.deadline_ms;
    const tick = () => {
      const left = Math.max(0, clockEnd - Date.now());
      $("clock").textContent = "Time left: " + Math.ceil(left / 1000) + " s";
      $("clock").classList.toggle("short", left < 10000);
    };
    tick();
    clockTimer = setInterval(tick, 500);
  }

  // ---------------------------------------------------------------- keys

  function onKey(event) {
    if (event.target instanceof HTMLInputElement || event.altKey || event.ctrlKey || event.metaKey) return;
    const cards = $("hand").querySelectorAll("button");
    const key = event.key;
    if (key === "ArrowRight" || key === "ArrowLeft") {
      if (cards.length === 0) return;
      focusIndex = (focusIndex + (key === "ArrowRight" ? 1 : cards.length - 1)) % cards.length;
      cards.forEach((b, i) => (b.tabIndex = i === focusIndex ? 0 : -1));
      cards[focusIndex].focus();
      event.preventDefault();
    } else if (key === " " && document.activeElement && document.activeElement.dataset.card) {
      toggle(document.activeElement.dataset.card);
      event.preventDefault();
    } else if (key === "Enter" && !(document.activeElement instanceof HTMLButtonElement && !document.activeElement.dataset.card)) {
      play();
      event.preventDefault();
    } else if (key === "p" || key === "P") {
      pass();
    } else if (key === "b" || key === "B") {
      bomb();
    } else if (key === "n" || key === "N") {
      decline();
    } else if (key === "t" || key === "T") {
      if (view && view.can_call_tichu) send({ type: "tichu" });
    } else if (key === "Escape") {
      selected.clear();
      clearRefusal();
      draw();
    } else if (/^[1-9]$/.test(key)) {
      const buttons = $("choices").querySelectorAll("button.choice");
      const button = buttons[Number(key) - 1];
      if (button) button.click();
    }
  }

  function start() {
    $("play").addEventListener("click", play);
    $("pass").addEventListener("click", pass);
    $("bomb").addEventListener("click", bomb);
    $("decline").addEventListener("click", decline);
    $("tichu").addEventListener("click", () => send({ type: "tichu" }));
    $("clear").addEventListener("click", () => {
      selected.clear();
      clearRefusal();
      draw();
    });
    $("typed").addEventListener("submit", (event) => {
      event.preventDefault();
      const input = $("typed-action");
      if (input.value.trim()) act(input.value.trim());
      input.value = "";
    });
    document.addEventListener("keydown", onKey);
    connect();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
