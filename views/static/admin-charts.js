// The admin console's log charts (/admin/logs), drawn with uPlot (loaded just before this file): each element with
// data-chart="<id>" is drawn from the <script type="application/json" id="<id>"> block it names: { scale ('day' or
// 'time'), x (UTC seconds), unit ('count', 'ms' or 'percent'), yLabel, series: [{ label, values }] }. The page
// works without it: each figure keeps its line of text and its summary, and the tables hold the same figures.
// Loaded at the end of the body, so it runs on a full load and again when a boosted navigation swaps the page in; the
// later runs only draw what is new, as do htmx swaps (the API window). A chart is drawn once per element, follows
// the width of the page, and takes the colours of the light or the dark scheme (redrawn when it changes).
(function () {
  if (window.adminCharts) {
    window.adminCharts.drawAll()
    return
  }

  // Line colours with at least 3:1 contrast on the page background (--bg) of each scheme; the dash patterns tell
  // neighbouring lines apart without colour (the key shows each line's label).
  var LIGHT = ['#1d6fa5', '#b3261e', '#1e7b34', '#8a4f00', '#6f42c1', '#00727a', '#b0306a', '#4d5562']
  var DARK = ['#8cc4f2', '#ff8f86', '#7fd18b', '#f2c46d', '#c5a3ff', '#5fd3d0', '#ff8fc8', '#c3c9d2']
  var DASHES = [[], [8, 4], [2, 3], [8, 3, 2, 3], [], [8, 4], [2, 3], [8, 3, 2, 3]]
  var DAY_S = 86400
  // The time axis in the tables' words: days as "3 Jan", times on the 24-hour clock (uPlot's default is US style).
  var TIME_TICKS = [
    [DAY_S * 28, '{MMM}', '\n{YYYY}', null, null, null, null, null, 1],
    [DAY_S, '{D} {MMM}', '\n{YYYY}', null, null, null, null, null, 1],
    [3600, '{HH}:{mm}', '\n{D} {MMM} {YYYY}', null, '\n{D} {MMM}', null, null, null, 1],
    [60, '{HH}:{mm}', '\n{D} {MMM} {YYYY}', null, '\n{D} {MMM}', null, null, null, 1],
  ]
  /** Tick steps of whole numbers (counts never get a tick at 0.5). */
  var WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7]
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

  function format(unit, v) {
    if (v === null || v === undefined) return '–'
    var n = Math.round(v * 100) / 100
    if (unit === 'ms') return n.toLocaleString('en-GB') + ' ms'
    if (unit === 'percent') return n.toLocaleString('en-GB') + '%'
    return n.toLocaleString('en-GB')
  }

  function size(element) {
    var width = Math.max(160, Math.floor(element.clientWidth))
    return { width: width, height: Math.round(Math.max(180, Math.min(280, width * 0.45))) }
  }

  function options(element, chart) {
    var c = colours()
    var font = '12px ' + c.font
    var axis = { stroke: c.fg, font: font, labelFont: 'bold ' + font, grid: { stroke: c.grid, width: 1 }, ticks: { stroke: c.grid, width: 1 } }
    var dims = size(element)
    return {
      width: dims.width,
      height: dims.height,
      // UTC, like the dates in the tables
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC') },
      cursor: { drag: { x: false, y: false, setScale: false } },
      legend: { show: true, live: true },
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
        Object.assign({}, axis, { values: TIME_TICKS }),
        Object.assign({}, axis, chart.unit === 'count' ? { incrs: WHOLE } : {}, {
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

  function draw(element) {
    var source = document.getElementById(element.getAttribute('data-chart') || '')
    if (!source) return
    var chart
    try {
      chart = JSON.parse(source.textContent || '')
    } catch (e) {
      return // the figure keeps its line of text; the table has the figures
    }
    if (!chart || !chart.x || chart.x.length === 0 || !chart.series || chart.series.length === 0) return
    element.textContent = ''
    var entry = { element: element, chart: chart, plot: new uPlot(options(element, chart), columns(chart), element) }
    element.setAttribute('data-drawn', 'true')
    drawn.push(entry)
    if (observer) observer.observe(element)
  }

  /** Forgets the charts a navigation or a swap took off the page. */
  function prune() {
    drawn = drawn.filter(function (entry) {
      if (entry.element.isConnected) return true
      if (observer) observer.unobserve(entry.element)
      entry.plot.destroy()
      return false
    })
  }

  function drawAll() {
    // After a boosted navigation the two scripts load side by side: wait for uPlot when it is not there yet.
    if (typeof uPlot !== 'function') {
      var lib = document.querySelector('script[src$="uPlot.iife.min.js"]')
      if (lib) lib.addEventListener('load', drawAll, { once: true })
      return
    }
    prune()
    var elements = document.querySelectorAll('[data-chart]')
    for (var i = 0; i < elements.length; i++) {
      if (elements[i].getAttribute('data-drawn') !== 'true') draw(elements[i])
    }
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

  window.adminCharts = { drawAll: drawAll }
  if (darkScheme && darkScheme.addEventListener) darkScheme.addEventListener('change', recolour)
  document.addEventListener('htmx:load', drawAll)
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawAll)
  else drawAll()
})()
