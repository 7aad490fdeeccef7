// The learner's scores over time on "My progress" (/quiz/progress), drawn with uPlot and charts.js (window.appCharts,
// both loaded just before this file) from the page's <script type="application/json" id="progress-data"> block:
// x = when each completed attempt was finished (UTC, as in the tables), y = its percentage (0 to 100), one line per
// quiz. The page works without it: the figure then shows its line of text and the tables below list every score.
// The page puts this script next to the figure, so it runs on a full load and again each time an htmx boosted
// navigation swaps the page in; the second and later runs only draw what is new (charts.js keeps the chart's size
// and colours up to date).
(function () {
  if (window.progressChart) {
    window.progressChart.drawAll()
    return
  }
  var charts = window.appCharts
  if (!charts) return // without charts.js the figure keeps its line of text

  // The dash patterns tell neighbouring lines apart without colour (the key shows solid or dashed).
  var DASHES = [[], [8, 4], [], [2, 3], [], [8, 4], [], [2, 3]]
  var DAY_S = charts.DAY_S
  /** Longer quiz titles are cut in the key (the tables below have them whole). */
  var KEY_TITLE_MAX = 40

  /** uPlot's aligned columns: every completion time once (seconds), and per quiz its percentage there or null. */
  function columns(chart) {
    var times = []
    var byQuiz = chart.quizzes.map(function (quiz) {
      var at = {}
      quiz.points.forEach(function (p) {
        var t = Date.parse(p.date) / 1000
        while (at[t] !== undefined) t += 0.001 // two attempts of one quiz in the same millisecond stay two points
        at[t] = p.percentage
        times.push(t)
      })
      return at
    })
    times = times.sort(function (a, b) { return a - b }).filter(function (t, i, all) { return i === 0 || t !== all[i - 1] })
    return [times].concat(byQuiz.map(function (at) {
      return times.map(function (t) { return at[t] === undefined ? null : at[t] })
    }))
  }

  function options(chart, c) {
    return {
      scales: {
        x: {
          time: true,
          // a single day of attempts gets a day either side, so its points are not drawn on the edges
          range: function (u, min, max) { return max - min < DAY_S ? [min - DAY_S, max + DAY_S] : [min, max] },
        },
        // a little room past 0% and 100%, so the points there are drawn whole
        y: { range: [-3, 103] },
      },
      series: [{ label: 'Completed', value: '{YYYY}-{MM}-{DD} {HH}:{mm} UTC' }].concat(chart.quizzes.map(function (quiz, i) {
        var stroke = c.lines[i % c.lines.length]
        return {
          label: quiz.title.length > KEY_TITLE_MAX ? quiz.title.slice(0, KEY_TITLE_MAX - 1).trimEnd() + '…' : quiz.title,
          stroke: stroke,
          width: 2,
          dash: DASHES[i % DASHES.length],
          spanGaps: true,
          points: { show: true, size: 7, stroke: stroke, fill: stroke },
          value: function (u, v) { return v === null || v === undefined ? '–' : Math.round(v * 10) / 10 + '%' },
        }
      })),
      axes: [
        Object.assign({}, c.axis, { label: 'Completed (UTC)', values: charts.TIME_TICKS }),
        Object.assign({}, c.axis, { label: 'Score', values: function (u, ticks) { return ticks.map(function (v) { return v + '%' }) } }),
      ],
    }
  }

  var SCORES = { height: { min: 200, max: 340, ratio: 0.5 }, options: options, columns: columns }

  function drawNew() {
    var element = document.getElementById('progress-chart')
    if (!element || element.getAttribute('data-drawn') === 'true') return
    var chart = charts.read('progress-data')
    if (chart && chart.quizzes && chart.quizzes.length > 0) charts.draw(element, chart, SCORES)
  }

  window.progressChart = { drawAll: charts.drawer(drawNew) }
  charts.start(window.progressChart.drawAll)
})()
