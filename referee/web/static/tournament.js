// The tournament page, refreshed from /api/tournament every few seconds; names as text only.
"use strict";

(function () {
  const REFRESH_MS = 3000;

  function cells(values) {
    const row = document.createElement("tr");
    for (const value of values) {
      const cell = document.createElement("td");
      if (value instanceof Node) cell.append(value);
      else cell.textContent = String(value);
      row.append(cell);
    }
    return row;
  }

  function render(data) {
    const p = data.progress;
    document.getElementById("progress").textContent =
      `${p.finished} of ${p.games} games finished, ${p.running} running` +
      (p.skipped ? `, ${p.skipped} skipped` : "") + `; ${p.hands} hands.`;
    document.querySelector("#standings tbody").replaceChildren(
      ...data.standings.map((row) =>
        cells([row.rank, row.team, row.players.join(", "), row.games, `${row.wins}-${row.draws}-${row.losses}`,
          row.score_percent === null ? "-" : row.score_percent, row.elo])),
    );
    const incidents = document.getElementById("incidents");
    incidents.replaceChildren(...(data.incidents.length ? data.incidents : ["None."]).map((line) => {
      const item = document.createElement("li");
      item.textContent = line;
      return item;
    }));
    document.querySelector("#games tbody").replaceChildren(
      ...data.games.map((game) => {
        let name = game.game_id;
        if (game.url) {
          name = document.createElement("a");
          name.href = game.url;
          name.textContent = game.game_id;
        }
        const row = cells([name, game.pairing, game.board, game.table, game.teams.join(" v "),
          game.status + (game.forfeit ? " (forfeit)" : ""), game.scores ? game.scores.join(" : ") : ""]);
        row.dataset.game = game.game_id;
        return row;
      }),
    );
  }

  async function refresh() {
    try {
      const response = await fetch("/api/tournament", { cache: "no-store" });
      if (response.ok) render(await response.json());
    } catch (error) {
      // The run has ended or the network is down: the page keeps what it has.
    }
  }

  setInterval(refresh, REFRESH_MS);
})();
