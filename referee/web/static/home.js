// The home page's lists, refreshed from /api/matches every few seconds.
"use strict";

(function () {
  const REFRESH_MS = 3000;

  function cell(text) {
    const node = document.createElement("td");
    node.textContent = text;
    return node;
  }

  function row(match, finished) {
    const tr = document.createElement("tr");
    tr.dataset.match = match.match_id;
    const link = document.createElement("a");
    link.href = `/matches/${encodeURIComponent(match.match_id)}`;
    link.textContent = match.match_id;
    const first = document.createElement("td");
    first.append(link);
    tr.append(
      first,
      cell(match.players.filter((_, seat) => seat % 2 === 0).join(", ")),
      cell(match.players.filter((_, seat) => seat % 2 === 1).join(", ")),
      cell(`${match.scores[0]} : ${match.scores[1]}`),
      cell(String(match.round + 1)),
      cell(finished ? match.reason : match.status),
    );
    return tr;
  }

  function fill(id, matches, finished) {
    const table = document.getElementById(id);
    table.tBodies[0].replaceChildren(...matches.map((m) => row(m, finished)));
    table.hidden = matches.length === 0;
    document.getElementById(`${id}-empty`).hidden = matches.length > 0;
  }

  async function refresh() {
    try {
      const response = await fetch("/api/matches", { cache: "no-store" });
      if (response.ok) {
        const data = await response.json();
        fill("live", data.live, false);
        fill("finished", data.finished, true);
      }
    } catch (error) {
      // The referee is restarting, or the network is down: try again at the next tick.
    }
  }

  setInterval(refresh, REFRESH_MS);
})();
