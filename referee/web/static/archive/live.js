"use strict";
// A tournament's pages while it runs: the store's version is polled, and when it changes the
// page's live part is fetched again and swapped in (the same HTML the server renders); the
// charts are drawn from the JSON the page embeds.
(() => {
  const POLL_MS = 2000;
  const COLOURS = ["#1d4ed8", "#b91c1c", "#047857", "#7c3aed", "#b45309", "#0f766e", "#be185d", "#374151"];
  const charts = [];

  function drawCharts(root) {
    while (charts.length) charts.pop().destroy();
    const source = root.querySelector("[data-chart-data]");
    if (!source || typeof uPlot === "undefined") return;
    const data = JSON.parse(source.textContent);
    for (const box of root.querySelectorAll("[data-chart]")) {
      const kind = box.dataset.chart;
      const s = data[kind];
      if (!s || !s.x.length) { box.textContent = "no completed result yet"; continue; }
      const series = [{label: data.unit}];
      const values = [s.x];
      s.labels.forEach((label, i) => {
        series.push({label, stroke: COLOURS[i % COLOURS.length], width: 2});
        values.push(s.series[i]);
      });
      if (kind === "llr") {
        for (const [label, bound] of [["H0 bound", data.bounds[0]], ["H1 bound", data.bounds[1]]]) {
          series.push({label, stroke: "#6b7280", dash: [6, 4], width: 1});
          values.push(s.x.map(() => bound));
        }
      }
      const width = Math.max(260, Math.min(box.clientWidth || 600, 900));
      charts.push(new uPlot({
        width, height: 220, scales: {x: {time: false}},
        axes: [{label: data.unit, stroke: "#374151", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]},
          {label: kind === "llr" ? "LLR" : "Elo", stroke: "#374151"}],
        series,
      }, values, box));
    }
  }

  function localTimes(root) {
    for (const t of root.querySelectorAll("time[data-epoch]")) {
      const when = new Date(Number(t.dataset.epoch) * 1000);
      t.textContent = when.toLocaleString();
      t.dateTime = when.toISOString();
    }
  }

  async function poll(live) {
    try {
      const response = await fetch(live.dataset.versionUrl, {cache: "no-store"});
      const {version} = await response.json();
      if (version !== live.dataset.version) {
        const page = await fetch(location.href, {cache: "no-store"});
        const doc = new DOMParser().parseFromString(await page.text(), "text/html");
        const fresh = doc.querySelector("[data-live]");
        if (fresh) {
          const focused = document.activeElement && document.activeElement.name;
          live.innerHTML = fresh.innerHTML;
          live.dataset.version = fresh.dataset.version;
          drawCharts(live);
          localTimes(live);
          if (focused) { const again = live.querySelector(`[name="${focused}"]`); if (again) again.focus(); }
          document.documentElement.dataset.refreshed = String(Number(document.documentElement.dataset.refreshed || 0) + 1);
        }
      }
    } catch (error) {
      // The server may be gone (the run ended): keep the page as it is, and try again later.
    }
    setTimeout(() => poll(live), POLL_MS);
  }

  const live = document.querySelector("[data-live]");
  if (live) {
    drawCharts(live);
    localTimes(live);
    setTimeout(() => poll(live), POLL_MS);
  }
  document.documentElement.dataset.ready = "true";
})();
