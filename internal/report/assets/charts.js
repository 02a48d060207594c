// index.html's diagnosis charts: one uPlot per <div data-chart>, all on the same x (seconds into the
// load), the cursor and the zoom shared, so that a knee in one chart lines up with its cause in another.
// The data is the page's JSON block #lt-series, which index.go writes; the page's
// Content-Security-Policy admits this script by its hash, so it runs only as rendered.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("lt-series").textContent);
  const height = 220;
  // The same width for every y axis: plots start at the same x, so a time lines up across charts.
  const yAxisWidth = 72;
  const palette = ["#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#1b7c83", "#953800", "#6e7781", "#4c2889"];
  const num = (v) => v == null ? "–" : Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
  const plots = [];
  let syncing = false;

  for (const chart of data.charts) {
    const el = document.getElementById("chart-" + chart.id);
    if (!el) continue;
    try {
      const series = [{ label: "s into the load", value: (u, v) => v == null ? "–" : v + " s" }];
      for (const [i, line] of chart.lines.entries()) {
        series.push({ label: line.name, stroke: palette[i % palette.length], width: 1.5, value: (u, v) => num(v) });
      }
      const plot = new uPlot({
        width: el.clientWidth || 800,
        height: height,
        scales: {
          x: { time: false },
          // Every quantity here counts up from nothing: a baseline at zero keeps a small wobble small.
          y: { range: (u, min, max) => [0, max > 0 ? max * 1.08 : 1] },
        },
        axes: [
          { label: "seconds into the load" },
          { label: chart.unit, size: yAxisWidth },
        ],
        series: series,
        cursor: { sync: { key: "lt-diagnosis", setSeries: false }, drag: { x: true, y: false } },
        hooks: {
          setScale: [(u, key) => {
            if (key !== "x" || syncing) return;
            syncing = true;
            for (const other of plots) {
              if (other !== u) other.setScale("x", { min: u.scales.x.min, max: u.scales.x.max });
            }
            syncing = false;
          }],
        },
      }, [data.t].concat(chart.lines.map((l) => l.values)), el);
      plots.push(plot);
    } catch (e) {
      console.error("chart " + chart.id + ": " + e);
    }
  }

  let pending = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => {
      for (const p of plots) p.setSize({ width: p.root.parentNode.clientWidth, height: height });
    });
  });
})();
