// The admin console's log charts (/admin/logs), drawn with uPlot and charts.js (window.appCharts, both loaded just
// before this file): each element with data-chart="<id>" is drawn from the <script type="application/json" id="<id>">
// block it names: { scale ('day' or 'time'), x (UTC seconds), unit ('count', 'ms' or 'percent'), yLabel, series:
// [{ label, values }] }. The page works without it: each figure keeps its line of text and its summary, and the
// tables hold the same figures.
// Loaded at the end of the body, so it runs on a full load and again when a boosted navigation swaps the page in; the
// later runs only draw what is new, as do htmx swaps (the API window); charts.js keeps sizes and colours up to date.
(function () {
  if (window.adminCharts) {
    window.adminCharts.drawAll()
    return
  }
  var charts = window.appCharts
  if (!charts) return // without charts.js each figure keeps its line of text

  // The dash patterns tell neighbouring lines apart without colour (the key shows each line's label).
  var DASHES = [[], [8, 4], [2, 3], [8, 3, 2, 3], [], [8, 4], [2, 3], [8, 3, 2, 3]]
  /** Tick steps of whole numbers (counts never get a tick at 0.5). */
  var WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7]

  function format(unit, v) {
    if (v === null || v === undefined) return '–'
    var n = Math.round(v * 100) / 100
    if (unit === 'ms') return n.toLocaleString('en-GB') + ' ms'
    if (unit === 'percent') return n.toLocaleString('en-GB') + '%'
    return n.toLocaleString('en-GB')
  }

  function options(chart, c) {
    return {
      scales: {
        x: { time: true },
        // from 0, with room above the highest value; a rate never above 100%
        y: {
          range: function (u, min, max) {
            var top = Math.max(max || 0, chart.unit === 'ms' ? 1 : 4) * 1.1
            return [0, chart.unit === 'percent' ? Math.min(100, top) : top]
          },
        },
      },
      series: [{ label: chart.scale === 'day' ? 'Day' : 'Time', value: chart.scale === 'day' ? '{D} {MMM} {YYYY}' : '{D} {MMM} {HH}:{mm} UTC' }]
        .concat(chart.series.map(function (s, i) {
          var stroke = c.lines[i % c.lines.length]
          return {
            label: s.label,
            stroke: stroke,
            width: 2,
            dash: DASHES[i % DASHES.length],
            spanGaps: false,
            points: { show: true, size: 5, stroke: stroke, fill: stroke },
            value: function (u, v) { return format(chart.unit, v) },
          }
        })),
      axes: [
        Object.assign({}, c.axis, { values: charts.TIME_TICKS }),
        Object.assign({}, c.axis, chart.unit === 'count' ? { incrs: WHOLE } : {}, {
          label: chart.yLabel,
          size: valuesWidth,
          values: function (u, ticks) { return ticks.map(function (v) { return format(chart.unit, v) }) },
        }),
      ],
    }
  }

  /** The y axis as wide as its longest value (uPlot's fixed width would cut "1,250 ms"). */
  function valuesWidth(u, values, axisIdx, cycleNum) {
    var axis = u.axes[axisIdx]
    if (cycleNum > 1) return axis._size
    var width = axis.ticks.size + axis.gap
    var longest = (values || []).reduce(function (a, v) { return String(v).length > a.length ? String(v) : a }, '')
    if (longest !== '') {
      u.ctx.font = axis.font[0]
      width += u.ctx.measureText(longest).width / (window.devicePixelRatio || 1)
    }
    return Math.ceil(width)
  }

  function columns(chart) {
    return [chart.x].concat(chart.series.map(function (s) { return s.values }))
  }

  var LOG_CHART = { height: { min: 180, max: 280, ratio: 0.45 }, options: options, columns: columns }

  function drawNew() {
    var elements = document.querySelectorAll('[data-chart]')
    for (var i = 0; i < elements.length; i++) {
      if (elements[i].getAttribute('data-drawn') === 'true') continue
      var chart = charts.read(elements[i].getAttribute('data-chart'))
      if (chart && chart.x && chart.x.length > 0 && chart.series && chart.series.length > 0) charts.draw(elements[i], chart, LOG_CHART)
    }
  }

  window.adminCharts = { drawAll: charts.drawer(drawNew) }
  charts.start(window.adminCharts.drawAll)
})()
