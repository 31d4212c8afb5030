// A bot's page in the arena: its rating (mu, with mu ± sigma) after each rated pair, drawn with
// uPlot from the page's JSON. The page reads in full without it: the chart only adds a picture.
"use strict";

(function () {
  const page = document.getElementById("arena-bot");
  const box = document.getElementById("rating-chart");
  if (!page || !box || typeof uPlot === "undefined") return;
  fetch(page.dataset.api, { headers: { Accept: "application/json" } })
    .then((response) => (response.ok ? response.json() : null))
    .then((bot) => {
      if (!bot || bot.history.length < 2) return;
      const xs = bot.history.map((_, i) => i + 1);
      const mu = bot.history.map((h) => h.mu);
      const low = bot.history.map((h) => h.mu - h.sigma);
      const high = bot.history.map((h) => h.mu + h.sigma);
      const width = Math.max(260, Math.min(box.clientWidth || 600, 900));
      new uPlot(
        {
          title: "mu after each rated pair (band: ± sigma)",
          width: width,
          height: 220,
          scales: { x: { time: false } },
          axes: [{ label: "rated pair" }, { label: "mu" }],
          series: [
            {},
            { label: "mu", stroke: "#1c4f9c", width: 2 },
            { label: "mu − sigma", stroke: "#9aa7b8" },
            { label: "mu + sigma", stroke: "#9aa7b8" },
          ],
        },
        [xs, mu, low, high],
        box,
      );
      page.dataset.chart = "drawn";
    });
})();
