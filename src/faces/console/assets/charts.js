// The console's charts of the last hour, drawn with uPlot (served by this server as /console/uplot.js,
// a classic script that defines the global uPlot before this module runs). Data only: every label is
// ours, and uPlot renders on canvas and with textContent.

const CHARTS = [
  {
    title: 'Tasks finished per minute',
    unit: 'tasks',
    series: (s) => [
      ['completed', s.finished.completed, '#15803d'],
      ['failed', s.finished.failed, '#b91c1c'],
      ['canceled', s.finished.canceled, '#a16207'],
      ['rejected', s.finished.rejected, '#7e22ce'],
    ],
  },
  {
    title: 'Queue depth (tasks waiting for a runner)',
    unit: 'tasks',
    series: (s) => [['queued', s.queued, '#2563eb']],
  },
  {
    title: 'Run time of the tasks finished, percentiles',
    unit: 's',
    series: (s) => [
      ['p50', seconds(s.duration.p50), '#15803d'],
      ['p90', seconds(s.duration.p90), '#a16207'],
      ['p99', seconds(s.duration.p99), '#b91c1c'],
    ],
  },
  {
    title: 'Webhook deliveries: success rate',
    unit: '%',
    series: (s) => [['delivered %', s.push.successRate, '#15803d']],
    range: [0, 100],
  },
];

const seconds = (values) => values.map((v) => (v === null ? null : v / 1000));
const plots = new Map();

/** Draws (or redraws) the charts into `container` from the server's series. */
export function drawCharts(container, s) {
  const uPlot = globalThis.uPlot;
  if (!uPlot) {
    container.textContent = 'The charts could not be drawn (uPlot did not load).';
    return;
  }
  const width = Math.max(280, Math.min(560, container.clientWidth - 16));
  for (const chart of CHARTS) {
    const series = chart.series(s);
    const data = [s.minutes, ...series.map(([, values]) => values)];
    let plot = plots.get(chart.title);
    if (plot?.root.isConnected) {
      plot.setData(data);
      continue;
    }
    const figure = document.createElement('figure');
    const caption = document.createElement('figcaption');
    caption.textContent = chart.title;
    figure.append(caption);
    container.append(figure);
    plot = new uPlot(
      {
        width,
        height: 180,
        scales: { y: chart.range ? { range: chart.range } : {} },
        axes: [{}, { label: chart.unit, size: 56 }],
        series: [{}, ...series.map(([label, , stroke]) => ({ label, stroke, width: 2, spanGaps: false }))],
      },
      data,
      figure,
    );
    plots.set(chart.title, plot);
  }
}
