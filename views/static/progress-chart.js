// The learner's scores over time on "My progress" (/quiz/progress), drawn with uPlot (loaded just before this file)
// from the page's <script type="application/json" id="progress-data"> block: x = when each completed attempt was
// finished (UTC, as in the tables), y = its percentage (0 to 100), one line per quiz. The page works without it: the
// figure then shows its line of text and the tables below list every score.
// The page puts this script next to the figure, so it runs on a full load and again each time an htmx boosted
// navigation swaps the page in; the second and later runs only draw what is new. A chart is drawn once per element,
// follows the width of the page, and takes the colours of the light or the dark scheme (redrawn when it changes).
(function () {
  if (window.progressChart) {
    window.progressChart.drawAll()
    return
  }

  // Line colours with at least 3:1 contrast on the page background (--bg) of each scheme; the dash patterns tell
  // neighbouring lines apart without colour (the key shows solid or dashed).
  var LIGHT = ['#1d6fa5', '#b3261e', '#1e7b34', '#8a4f00', '#6f42c1', '#00727a', '#b0306a', '#4d5562']
  var DARK = ['#8cc4f2', '#ff8f86', '#7fd18b', '#f2c46d', '#c5a3ff', '#5fd3d0', '#ff8fc8', '#c3c9d2']
  var DASHES = [[], [8, 4], [], [2, 3], [], [8, 4], [], [2, 3]]
  var DAY_S = 86400
  /** Longer quiz titles are cut in the key (the tables below have them whole). */
  var KEY_TITLE_MAX = 40
  // The time axis in the tables' words: days as "3 Jan", times on the 24-hour clock (uPlot's default is US style).
  // Per tick spacing: the label, then what is added under the first tick of a new year, month, day, hour, minute.
  var TIME_TICKS = [
    [DAY_S * 365, '{YYYY}', null, null, null, null, null, null, 1],
    [DAY_S * 28, '{MMM}', '\n{YYYY}', null, null, null, null, null, 1],
    [DAY_S, '{D} {MMM}', '\n{YYYY}', null, null, null, null, null, 1],
    [3600, '{HH}:{mm}', '\n{D} {MMM} {YYYY}', null, '\n{D} {MMM}', null, null, null, 1],
    [60, '{HH}:{mm}', '\n{D} {MMM} {YYYY}', null, '\n{D} {MMM}', null, null, null, 1],
    [1, '{HH}:{mm}:{ss}', '\n{D} {MMM} {YYYY}', null, '\n{D} {MMM}', null, null, null, 1],
  ]
  /** The charts on the page: { element, plot, chart }; the ones a navigation removed are dropped on the next draw. */
  var drawn = []
  var observer = typeof ResizeObserver === 'function' ? new ResizeObserver(resized) : null
  var darkScheme = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null

  /** rgb(21, 23, 27) or #15171b -> relative luminance (0 black to 1 white); null when it cannot be read. */
  function luminance(colour) {
    var m = /^rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(colour)
    var hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(colour)
    var rgb = m ? [m[1], m[2], m[3]].map(Number) : hex ? [hex[1], hex[2], hex[3]].map(function (h) { return parseInt(h, 16) }) : null
    if (!rgb) return null
    var c = rgb.map(function (v) {
      v /= 255
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4)
    })
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
  }

  /** The page's colours now (app.css sets them per scheme): text, grid, the line palette, the font. */
  function colours() {
    var root = getComputedStyle(document.documentElement)
    var body = getComputedStyle(document.body)
    var fg = root.getPropertyValue('--fg').trim() || body.color
    var bg = luminance(root.getPropertyValue('--bg').trim() || body.backgroundColor)
    var dark = bg === null ? Boolean(darkScheme && darkScheme.matches) : bg < 0.2
    return { fg: fg, grid: dark ? 'rgba(255,255,255,0.14)' : 'rgba(0,0,0,0.12)', lines: dark ? DARK : LIGHT, font: body.fontFamily || 'sans-serif' }
  }

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

  function size(element) {
    var width = Math.max(160, Math.floor(element.clientWidth))
    return { width: width, height: Math.round(Math.max(200, Math.min(340, width * 0.5))) }
  }

  function options(element, chart) {
    var c = colours()
    var font = '12px ' + c.font
    var axis = { stroke: c.fg, font: font, labelFont: 'bold ' + font, grid: { stroke: c.grid, width: 1 }, ticks: { stroke: c.grid, width: 1 } }
    var dims = size(element)
    return {
      width: dims.width,
      height: dims.height,
      // UTC, like the dates in the tables below
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC') },
      cursor: { drag: { x: false, y: false, setScale: false } },
      legend: { show: true, live: true },
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
        Object.assign({}, axis, { label: 'Completed (UTC)', values: TIME_TICKS }),
        Object.assign({}, axis, { label: 'Score', values: function (u, ticks) { return ticks.map(function (v) { return v + '%' }) } }),
      ],
    }
  }

  function draw(element) {
    var source = document.getElementById('progress-data')
    if (!source || typeof uPlot !== 'function') return
    var chart
    try {
      chart = JSON.parse(source.textContent || '')
    } catch (e) {
      return // the figure keeps its line of text; the tables have every score
    }
    if (!chart || !chart.quizzes || chart.quizzes.length === 0) return
    element.textContent = ''
    var entry = { element: element, chart: chart, plot: new uPlot(options(element, chart), columns(chart), element) }
    element.setAttribute('data-drawn', 'true')
    drawn.push(entry)
    if (observer) observer.observe(element)
  }

  /** Forgets the charts a navigation took off the page. */
  function prune() {
    drawn = drawn.filter(function (entry) {
      if (entry.element.isConnected) return true
      if (observer) observer.unobserve(entry.element)
      entry.plot.destroy()
      return false
    })
  }

  function drawAll() {
    prune()
    var element = document.getElementById('progress-chart')
    if (element && element.getAttribute('data-drawn') !== 'true') draw(element)
  }

  function resized() {
    drawn.forEach(function (entry) {
      if (!entry.element.isConnected) return
      var dims = size(entry.element)
      if (dims.width !== entry.plot.width) entry.plot.setSize(dims)
    })
  }

  /** The scheme changed: the same charts again in its colours. */
  function recolour() {
    prune()
    drawn.forEach(function (entry) {
      entry.plot.destroy()
      entry.element.textContent = ''
      entry.plot = new uPlot(options(entry.element, entry.chart), columns(entry.chart), entry.element)
    })
  }

  window.progressChart = { drawAll: drawAll }
  if (darkScheme && darkScheme.addEventListener) darkScheme.addEventListener('change', recolour)
  document.addEventListener('htmx:load', drawAll)
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawAll)
  else drawAll()
})()
