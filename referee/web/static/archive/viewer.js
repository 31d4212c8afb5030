"use strict";
// The replay viewer of the archive: a game page (one table) or a duplicate pair (two tables that
// step together). Its data comes from /api/.../steps (referee/web/steps.py): the rules engine
// derived every state on the server, this script only draws them.
(() => {
  const S = {round: 0, dealer: 1, phase: 2, turn: 3, wish: 4, gift: 5, hands: 6, unseen: 7, calls: 8,
    out: 9, trick: 10, top: 11, passed: 12, points: 13, scores: 14, window: 15, exchange: 16, received: 17};
  const T = {version: 0, state: 1, private: 2, tMs: 3, round: 4, tricks: 5, seat: 6, type: 7, text: 8};
  const SUITS = {j: "\u25C6", s: "\u2660", p: "\u2665", t: "\u2605"};
  const SUIT_NAMES = {j: "jade", s: "swords", p: "pagodas", t: "stars"};
  const CALLS = ["", "Tichu", "Grand Tichu"];
  const TEAM_COLOURS = ["#1d4ed8", "#b91c1c"];
  const esc = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

  // One table's viewer: draws step `index` of its data into the parts under `root`.
  function createViewer(root, data) {
    const match = data.match;
    const players = match.players;
    const steps = data.steps;
    const states = [data.states[0]];
    for (let i = 1; i < data.states.length; i++) {
      if (match.public) { states.push(data.states[i]); continue; }
      const state = states[i - 1].slice();
      for (const [field, value] of data.states[i]) state[field] = value;
      states.push(state);
    }
    const part = (name) => root.querySelector(`[data-part="${name}"]`);
    const folded = new Set(data.folded);
    let current = 0;
    let view = null; // null: every hand; a seat: what that seat saw
    let chart = null;

    function cardsOf(hex) {
      const out = [];
      for (let i = 0; i < hex.length; i++) {
        const nibble = parseInt(hex[hex.length - 1 - i], 16);
        for (let b = 0; b < 4; b++) if (nibble & (1 << b)) out.push(data.cards[i * 4 + b]);
      }
      return out;
    }
    function cardHtml(name, extra) {
      const suit = name.slice(-1);
      const special = !(SUITS[suit] && name.length <= 3);
      const face = special ? esc(name) : `${esc(name.slice(0, -1))}<i aria-hidden="true">${SUITS[suit]}</i>`;
      const label = special ? name : `${name.slice(0, -1)} of ${SUIT_NAMES[suit]}`;
      const cls = special ? "sp" : `s-${suit}`;
      return `<span class="card ${cls}${extra ? " " + extra : ""}" data-card="${esc(name)}" title="${esc(label)}">` +
        `${face}${special ? "" : `<span class="sr"> of ${SUIT_NAMES[suit]}</span>`}</span>`;
    }
    const cardsHtml = (names, extra) => names.map((n) => cardHtml(n, extra)).join("");
    const canSee = (seat) => !match.public && (view === null || view === seat);
    const stateAt = (index) => states[steps[index][T.state]];
    const hidden = (step) => step[T.private] >= 0 && view !== null && step[T.private] !== view;
    const eventText = (step) => hidden(step) ? `(private to seat ${step[T.private]})` : step[T.text];
    const name = (seat) => match.names[seat] || `seat ${seat}`;

    function seatHtml(st, seat) {
      const hand = cardsOf(st[S.hands][seat]);
      const unseen = cardsOf(st[S.unseen][seat]);
      const place = st[S.out].indexOf(seat);
      const turn = st[S.turn] === seat && st[S.phase] === "play" && place < 0;
      const badges = [];
      if (st[S.calls][seat]) badges.push(`<span class="badge call">${CALLS[st[S.calls][seat]]}</span>`);
      if (place >= 0) badges.push(`<span class="badge">out ${place + 1}.</span>`);
      if (turn) badges.push('<span class="badge turn">to play</span>');
      if (st[S.gift] === seat) badges.push('<span class="badge turn">gives the Dragon</span>');
      if (st[S.passed] & (1 << seat)) badges.push('<span class="badge">passed</span>');
      let cards;
      if (match.public) {
        cards = '<span class="count">hand not shown (public view)</span>';
      } else if (canSee(seat)) {
        cards = cardsHtml(hand) + cardsHtml(view === null ? unseen : [], "unseen");
      } else {
        cards = `<span class="count" data-count="${hand.length}">${hand.length} card${hand.length === 1 ? "" : "s"}</span>`;
      }
      if (!match.public && unseen.length && !(canSee(seat) && view === null)) {
        cards += ` <span class="note">+${unseen.length} not yet seen</span>`;
      }
      let notes = "";
      if (canSee(seat) && st[S.exchange]) {
        const gave = st[S.exchange][seat];
        if (gave) notes += `<div class="note">passes ${gave.map(([to, c]) => `${cardHtml(data.cards[c])} to ${to}`).join(", ")}</div>`;
        const got = st[S.received][seat] || [];
        if (got.length) notes += `<div class="note">received ${got.map(([from, c]) => `${cardHtml(data.cards[c])} from ${from}`).join(", ")}</div>`;
      }
      const slot = players === 4 ? ` slot-${(seat - (view === null ? 0 : view) + 4) % 4}` : "";
      return `<div class="seat team-${seat % 2}${turn ? " turn" : ""}${place >= 0 ? " out" : ""}${slot}" data-seat="${seat}">` +
        `<div class="who"><span>seat ${seat}</span> <span class="name">${esc(name(seat))}</span>` +
        ` <span class="muted">team ${"AB"[seat % 2]} \u00B7 ${st[S.points][seat]} pts</span> ${badges.join("")}</div>` +
        `<div class="hand" data-hand="${seat}" data-size="${hand.length}">${cards}</div>${notes}</div>`;
    }

    function centreHtml(st, step) {
      const plays = st[S.trick].map(([seat, hex, what], i, all) =>
        `<div class="play${i === all.length - 1 ? " top" : ""}" data-trick-play="${seat}">seat ${seat}: ` +
        `${cardsHtml(cardsOf(hex))} <span class="note">${esc(what)}</span></div>`).join("");
      const wish = st[S.wish] ? `<div class="wish" data-wish="${esc(st[S.wish])}">wish: ${esc(st[S.wish])}</div>` : "";
      const win = st[S.window].length ? '<div class="phase">bomb window open</div>' : "";
      return `<div class="centre" data-centre><div class="phase">hand ${st[S.round] + 1} \u00B7 ` +
        `${esc(String(st[S.phase]).replace(/_/g, " "))} \u00B7 dealer seat ${st[S.dealer]}</div>${wish}${win}` +
        `<div data-trick>${plays || '<span class="note">no cards on the table</span>'}</div>` +
        `<div class="phase">A ${st[S.scores][0]} \u00B7 B ${st[S.scores][1]}</div>` +
        `<div class="phase caption">${esc(eventText(steps[step]))}</div></div>`;
    }

    function renderTable() {
      const st = stateAt(current);
      const seats = [];
      for (let seat = 0; seat < players; seat++) seats.push(seatHtml(st, seat));
      const layout = players === 4 ? "four" : "many";
      part("table").innerHTML = `<div class="felt ${layout}">${seats.join("")}${centreHtml(st, current)}</div>`;
    }

    // Every event is listed once; moving only changes which one is marked.
    function buildEvents() {
      const rows = steps.map((step, i) => {
        const cls = folded.has(i) ? ' class="folded"' : "";
        return `<li${cls} data-step="${i}"><button type="button" class="linkish" data-jump="${i}">` +
          `<span class="note">${(step[T.tMs] / 1000).toFixed(2)} s</span> <span data-text>${esc(eventText(step))}</span></button></li>`;
      });
      part("events").innerHTML = rows.join("");
    }
    function refreshEventTexts() {
      for (const li of part("events").children) {
        li.querySelector("[data-text]").textContent = eventText(steps[Number(li.dataset.step)]);
        li.classList.toggle("hidden-event", hidden(steps[Number(li.dataset.step)]));
      }
    }
    let marked = null;
    function markEvent() {
      const list = part("events");
      if (marked) marked.classList.remove("current");
      marked = list.children[current] || null;
      if (!marked) return;
      marked.classList.add("current");
      // Scroll the list only, never the page.
      const top = marked.offsetTop - list.offsetTop;
      if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - marked.offsetHeight) {
        list.scrollTop = Math.max(0, top - list.clientHeight / 2);
      }
    }

    function renderTricks() {
      const list = part("tricks");
      if (!list) return;
      const step = steps[current];
      const round = data.rounds[step[T.round]];
      const done = round ? round.tricks.slice(0, step[T.tricks]) : [];
      list.innerHTML = done.map((trick, i) => `<li data-trick-index="${i}">${esc(trick.plays.join("; "))} ` +
        `<span class="note">\u2192 ${esc(trick.end)}</span></li>`).join("") || '<li class="note">none finished yet</li>';
      list.scrollTop = list.scrollHeight;
    }

    const scored = () => data.rounds.filter((r) => r.score && r.score.step <= current).length;
    let scoresShown = -1;
    function renderScores() {
      const count = scored();
      const round = steps[current][T.round];
      const rows = data.rounds.map((r, i) => {
        const sc = r.score;
        const shown = sc && sc.step <= current;
        const mark = i === round ? ' class="current"' : "";
        const cells = shown
          ? `<td>${sc.card_points.join(" / ")}</td><td>${sc.call_points.join(" / ")}</td>` +
            `<td>${sc.round_points.join(" / ")}</td><td>${sc.totals[0]}</td><td>${sc.totals[1]}</td>`
          : '<td colspan="5" class="note">not scored yet</td>';
        return `<tr${mark} data-hand-row="${i}"><th scope="row"><button type="button" class="linkish" ` +
          `data-jump="${r.start}" title="go to the start of hand ${i + 1}">hand ${i + 1}</button></th>${cells}</tr>`;
      });
      part("scores").innerHTML = "<thead><tr><th scope=\"col\">hand</th><th scope=\"col\">cards A / B</th>" +
        "<th scope=\"col\">calls</th><th scope=\"col\">hand</th><th scope=\"col\">A</th><th scope=\"col\">B</th>" +
        `</tr></thead><tbody>${rows.join("")}</tbody>`;
      if (count !== scoresShown) {
        scoresShown = count;
        drawChart(count);
      }
    }

    function drawChart(count) {
      const box = part("chart");
      if (!box || typeof uPlot === "undefined") return;
      const all = data.rounds.filter((r) => r.score);
      const xs = [0, ...all.map((_, i) => i + 1)];
      const upTo = (team) => xs.map((x) => (x === 0 ? 0 : x <= count ? all[x - 1].score.totals[team] : null));
      const values = [xs, upTo(0), upTo(1)];
      if (chart) { chart.setData(values); return; }
      const width = Math.max(220, Math.min(box.clientWidth || 420, 640));
      chart = new uPlot({
        width, height: 170,
        scales: {x: {time: false, range: [0, Math.max(1, all.length)]}},
        axes: [{label: "hand", stroke: "#374151", incrs: [1, 2, 5, 10, 20, 50]}, {stroke: "#374151"}],
        series: [{label: "hand"},
          {label: "team A", stroke: TEAM_COLOURS[0], width: 2, spanGaps: false},
          {label: "team B", stroke: TEAM_COLOURS[1], width: 2, spanGaps: false}],
        legend: {show: true},
      }, values, box);
    }

    function renderTiming() {
      const box = part("move");
      if (!box) return;
      const version = steps[current][T.version];
      const move = data.moves[version];
      let text = match.public ? "decisions are not shown in a public view" : "the deal (no decision yet)";
      if (move) {
        const [seat, what, ms, bank, , secret] = move;
        const hide = secret && view !== null && view !== seat;
        text = `${seat >= 0 ? `seat ${seat}` : "the table"}: ${hide ? "(not shown in this seat's view)" : what}`;
        if (ms !== null && ms !== undefined) text += ` in ${ms} ms`;
        if (bank !== null && bank !== undefined) text += ` (bank ${(bank / 1000).toFixed(1)} s left)`;
      }
      box.innerHTML = `<p data-move="${version}">state ${version}: ${esc(text)}</p>`;
    }

    function renderSummaryOnce() {
      const table = part("summary");
      if (!table) return;
      const head = "<thead><tr><th scope=\"col\">seat</th><th scope=\"col\">decisions</th><th scope=\"col\">p50 ms</th>" +
        "<th scope=\"col\">p99 ms</th><th scope=\"col\">time-outs</th><th scope=\"col\">rejected</th>" +
        "<th scope=\"col\">Tichu called / won</th><th scope=\"col\">bombs</th><th scope=\"col\">points</th></tr></thead>";
      table.innerHTML = head + "<tbody>" + (data.summary || []).map((s) => `<tr><td>${s.seat} ${esc(s.bot_name || "")}</td>` +
        `<td>${s.decisions}</td><td>${s.think_ms_p50}</td><td>${s.think_ms_p99}</td><td>${s.timeouts}</td>` +
        `<td>${s.rejections}</td><td>${s.tichu_calls + s.grand_tichu_calls}/${s.tichu_won + s.grand_tichu_won}</td>` +
        `<td>${s.bombs_played}</td><td>${s.points_won}</td></tr>`).join("") + "</tbody>";
    }

    function render() {
      renderTable();
      markEvent();
      renderTricks();
      renderScores();
      renderTiming();
    }

    root.addEventListener("click", (event) => {
      const target = event.target.closest("[data-jump]");
      if (target && api.onJump) api.onJump(Number(target.dataset.jump));
    });

    buildEvents();
    renderSummaryOnce();
    const api = {
      data, steps, onJump: null,
      get step() { return current; },
      get seat() { return view; },
      go(index) { current = Math.max(0, Math.min(steps.length - 1, index)); render(); },
      setView(seat) {
        view = !match.public && seat !== null && seat >= 0 && seat < players ? seat : null;
        refreshEventTexts();
        render();
      },
      setFolded(fold) { part("events").classList.toggle("unfolded", !fold); },
      hands(seat) { return canSee(seat) ? cardsOf(stateAt(current)[S.hands][seat]) : null; },
      handSize(seat) { return cardsOf(stateAt(current)[S.hands][seat]).length; },
      roundStart(r) { const round = data.rounds[r]; return round ? round.start : null; },
    };
    return api;
  }

  // The controls of one page: play/pause, speed, slider, keys; `timeline` maps a position to
  // each viewer's step (one viewer: the steps not folded away; a pair: hand by hand together).
  function createControls(bar, viewers, makeTimeline) {
    const $ = (selector) => bar.querySelector(selector);
    let fold = true;
    let timeline = makeTimeline(fold);
    let position = 0;
    let playing = null;
    const speedOf = () => Number($("[data-speed]").value) || 1;

    function show() {
      const at = timeline.steps(position);
      viewers.forEach((v, i) => v.go(at[i]));
      $("[data-slider]").max = String(timeline.length - 1);
      $("[data-slider]").value = String(position);
      $("[data-position]").textContent = timeline.describe(position);
      const play = $("[data-go=play]");
      play.setAttribute("aria-pressed", String(playing !== null));
      play.textContent = playing !== null ? "\u23F8 pause" : "\u25B6 play";
      // One table: the address names its step (as `tichu replay html`'s did); a pair, the moment.
      const where = viewers.length === 1 ? `step=${viewers[0].step}` : `moment=${position}`;
      const hash = `#${where}${viewers[0].seat === null ? "" : `&seat=${viewers[0].seat}`}`;
      if (location.hash !== hash) history.replaceState(null, "", hash);
    }
    function go(next) {
      position = Math.max(0, Math.min(timeline.length - 1, next));
      show();
    }
    function stop() { if (playing !== null) { clearInterval(playing); playing = null; } }
    function toggle() {
      if (playing !== null) { stop(); show(); return; }
      if (position >= timeline.length - 1) position = 0;
      playing = setInterval(() => {
        if (position >= timeline.length - 1) { stop(); show(); return; }
        go(position + 1);
      }, 700 / speedOf());
      show();
    }
    function restartIfPlaying() { if (playing !== null) { stop(); toggle(); } }
    function jumpToStep(viewerIndex, step) {
      stop();
      go(timeline.positionOf(viewerIndex, step));
    }
    viewers.forEach((v, i) => { v.onJump = (step) => jumpToStep(i, step); });
    function goHand(delta) {
      const v = viewers[0];
      const round = v.steps[v.step][T.round];
      let target;
      if (delta < 0) {
        const start = v.roundStart(round);
        target = start !== null && v.step > start ? start : (v.roundStart(Math.max(0, round - 1)) ?? 0);
      } else {
        target = v.roundStart(round + 1);
        if (target === null) { go(timeline.length - 1); return; }
      }
      go(timeline.positionOf(0, target));
    }
    function setView(seat) {
      viewers.forEach((v) => v.setView(seat));
      for (const button of bar.querySelectorAll("[data-view]")) {
        const mine = button.dataset.view === "all" ? null : Number(button.dataset.view);
        button.setAttribute("aria-pressed", String(mine === viewers[0].seat));
      }
      show();
    }
    const players = viewers[0].data.match.players;
    if (!viewers[0].data.match.public) {
      const views = ['<button type="button" data-view="all" title="every hand (a)">all hands</button>'];
      for (let seat = 0; seat < players; seat++) {
        views.push(`<button type="button" data-view="${seat}" title="what seat ${seat} saw (${seat})">seat ${seat}</button>`);
      }
      $("[data-views]").innerHTML = `view: ${views.join(" ")}`;
    }
    bar.addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (!button) return;
      if (button.dataset.view !== undefined) { setView(button.dataset.view === "all" ? null : Number(button.dataset.view)); return; }
      const actions = {home: () => { stop(); go(0); }, end: () => { stop(); go(timeline.length - 1); },
        prev: () => { stop(); go(position - 1); }, next: () => { stop(); go(position + 1); }, play: toggle};
      if (actions[button.dataset.go]) actions[button.dataset.go]();
    });
    $("[data-slider]").addEventListener("input", (event) => { stop(); go(Number(event.target.value)); });
    $("[data-speed]").addEventListener("change", restartIfPlaying);
    $("[data-unfold]").addEventListener("change", (event) => {
      const keep = viewers.map((v) => v.step);
      fold = !event.target.checked;
      viewers.forEach((v) => v.setFolded(fold));
      timeline = makeTimeline(fold);
      go(timeline.positionOf(0, keep[0]));
    });
    const KEYS = {
      ArrowRight: () => { stop(); go(position + 1); }, ArrowLeft: () => { stop(); go(position - 1); },
      " ": toggle, Home: () => { stop(); go(0); }, End: () => { stop(); go(timeline.length - 1); },
      ArrowUp: () => { stop(); goHand(-1); }, PageUp: () => { stop(); goHand(-1); },
      ArrowDown: () => { stop(); goHand(1); }, PageDown: () => { stop(); goHand(1); },
      a: () => setView(null), A: () => setView(null),
    };
    document.addEventListener("keydown", (event) => {
      if (event.ctrlKey || event.altKey || event.metaKey) return;
      const tag = event.target && event.target.tagName;
      if (tag === "SELECT" || (tag === "INPUT" && event.target.type !== "range" && event.target.type !== "checkbox")) return;
      let action = KEYS[event.key];
      if (!action && /^[0-5]$/.test(event.key) && Number(event.key) < players) action = () => setView(Number(event.key));
      if (!action) return;
      event.preventDefault(); // one key press is one step, whatever has the focus
      action();
    }, true);
    function readHash() {
      const params = new URLSearchParams(location.hash.slice(1));
      const seat = params.get("seat");
      const wanted = seat === null || seat === "" ? null : Number(seat);
      setView(Number.isInteger(wanted) && wanted >= 0 && wanted < players ? wanted : null);
      const step = Number(params.get("step"));
      const moment = Number(params.get("moment"));
      if (params.has("step") && Number.isInteger(step)) go(timeline.positionOf(0, step));
      else go(Number.isInteger(moment) ? moment : 0);
    }
    window.addEventListener("hashchange", readHash);
    readHash();
    return {
      get position() { return position; },
      get length() { return timeline.length; },
      get playing() { return playing !== null; },
      get folded() { return fold; },
      go, toggle,
    };
  }

  // One table: the positions are the steps that are not folded away.
  function singleTimeline(viewer) {
    return (fold) => {
      const order = [];
      viewer.steps.forEach((_, i) => { if (!fold || !viewer.data.folded.includes(i)) order.push(i); });
      if (!order.length) order.push(0);
      return {
        length: order.length,
        steps: (p) => [order[p]],
        positionOf: (_, step) => {
          let best = 0;
          for (let p = 0; p < order.length && order[p] <= step; p++) best = p;
          return best;
        },
        describe: (p) => {
          const step = viewer.steps[order[p]];
          return `event ${p + 1} of ${order.length} \u00B7 hand ${step[T.round] + 1} \u00B7 ${(step[T.tMs] / 1000).toFixed(2)} s`;
        },
      };
    };
  }

  // Two tables of one board: hand by hand, each hand as long as the longer table's, so both
  // always show the same deal; within a hand each table advances through its own events.
  function pairTimeline(viewers) {
    return (fold) => {
      const perViewer = viewers.map((v) => {
        const hands = [];
        v.steps.forEach((step, i) => {
          if (fold && v.data.folded.includes(i)) return;
          const r = step[T.round];
          (hands[r] = hands[r] || []).push(i);
        });
        return hands;
      });
      const handCount = Math.max(...perViewer.map((h) => h.length));
      const slots = []; // [hand, offset]
      for (let r = 0; r < handCount; r++) {
        const size = Math.max(1, ...perViewer.map((h) => (h[r] || []).length));
        for (let k = 0; k < size; k++) slots.push([r, k]);
      }
      const stepOf = (vi, [r, k]) => {
        const hands = perViewer[vi];
        const own = hands[Math.min(r, hands.length - 1)] || [0];
        return own[Math.min(k, own.length - 1)];
      };
      return {
        length: slots.length,
        steps: (p) => viewers.map((_, vi) => stepOf(vi, slots[p])),
        positionOf: (vi, step) => {
          let best = 0;
          for (let p = 0; p < slots.length; p++) if (stepOf(vi, slots[p]) <= step) best = p;
          return best;
        },
        describe: (p) => `moment ${p + 1} of ${slots.length} \u00B7 hand ${slots[p][0] + 1}`,
      };
    };
  }

  async function load(url) {
    const response = await fetch(url, {headers: {accept: "application/json"}});
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
    return data;
  }

  function showVerification(box, data, title) {
    if (!box) return;
    const v = data.verification;
    const head = v.ok ? '<p class="ok" data-verified="true">\u2713 verifies</p>' : '<p class="bad" data-verified="false">\u2717 does not verify</p>';
    box.innerHTML = `<h2>${esc(title || "Verification")}</h2>${head}<ul>` +
      `<li><strong>hash chain:</strong> ${esc(v.chain)}</li><li><strong>signature:</strong> ${esc(v.signature)}</li>` +
      v.checks.map((c) => `<li>${esc(c)}</li>`).join("") + "</ul>";
  }

  function describeMatch(data) {
    const m = data.match;
    const names = m.names.map((n, seat) => `${seat}: ${n} (${"AB"[seat % 2]})`).join(", ");
    return `${m.created_at} \u00B7 ${names} \u00B7 ${m.result || "unfinished"}${m.truncated ? " \u00B7 last line cut off" : ""}`;
  }

  const state = {ready: false, viewers: [], controls: null, error: null};
  window.tichuViewer = {
    get ready() { return state.ready; },
    get error() { return state.error; },
    get step() { return state.viewers[0] ? state.viewers[0].step : null; },
    get steps() { return state.viewers.map((v) => v.step); },
    get stepCount() { return state.viewers[0] ? state.viewers[0].steps.length : 0; },
    get position() { return state.controls ? state.controls.position : null; },
    get length() { return state.controls ? state.controls.length : 0; },
    get playing() { return state.controls ? state.controls.playing : false; },
    get folded() { return state.controls ? state.controls.folded : true; },
    get seat() { return state.viewers[0] ? state.viewers[0].seat : null; },
    get round() { const v = state.viewers[0]; return v ? v.steps[v.step][T.round] : null; },
    typeAt(i, viewer = 0) { return state.viewers[viewer].steps[i][T.type]; },
    folds(viewer = 0) { return state.viewers[viewer].data.folded.slice(); },
    hands(seat, viewer = 0) { return state.viewers[viewer].hands(seat); },
    handSize(seat, viewer = 0) { return state.viewers[viewer].handSize(seat); },
  };

  async function start() {
    const single = document.querySelector("[data-game-page]");
    const pair = document.querySelector("[data-pair-page]");
    try {
      if (single) {
        const data = await load(single.dataset.steps);
        const viewer = createViewer(single.querySelector("[data-viewer]"), data);
        state.viewers = [viewer];
        showVerification(single.querySelector("[data-part=verification]"), data);
        document.querySelector("[data-meta]").textContent = describeMatch(data);
        if (data.match.why_public) single.querySelector("[data-notice]").textContent = data.match.why_public;
        state.controls = createControls(single.querySelector("[data-controls]"), [viewer], singleTimeline(viewer));
      } else if (pair) {
        const tables = [...pair.querySelectorAll("[data-table]")];
        const all = await Promise.all(tables.map((t) => load(t.dataset.steps)));
        state.viewers = all.map((data, i) => createViewer(tables[i].querySelector("[data-viewer]"), data));
        state.controls = createControls(pair.querySelector("[data-controls]"), state.viewers, pairTimeline(state.viewers));
      }
    } catch (error) {
      state.error = String(error);
      const where = document.querySelector("[data-notice]") || document.querySelector("main");
      if (where) where.insertAdjacentHTML("beforeend", `<p class="bad" role="alert">Cannot show this replay: ${esc(error.message || error)}</p>`);
    }
    state.ready = true;
    document.documentElement.dataset.ready = "true";
  }
  start();
})();
