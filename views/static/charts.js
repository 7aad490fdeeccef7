// What the uPlot chart scripts share (progress-chart.js: the learner's scores over time; admin-charts.js: the admin
// console's log charts), as window.appCharts: the page's colours and axis style (light or dark scheme), the time
// axis in the tables' words, and the life of a chart on the page: drawn once per element, following the element's
// width, drawn again in the other scheme's colours when it changes, and dropped when a navigation or a swap takes it
// off the page. Loaded before the page's own script; a boosted navigation runs it again, which keeps the first run.
(function () {
  if (window.appCharts) return

  // Line colours with at least 3:1 contrast on the page background (--bg) of each scheme.
  var LIGHT = ['#1d6fa5', '#b3261e', '#1e7b34', '#8a4f00', '#6f42c1', '#00727a', '#b0306a', '#4d5562']
  var DARK = ['#8cc4f2', '#ff8f86', '#7fd18b', '#f2c46d', '#c5a3ff', '#5fd3d0', '#ff8fc8', '#c3c9d2']
  var DAY_S = 86400
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
  /** The charts on the page, of every kind: { element, chart, kind, plot }; the ones taken off are dropped on the next draw. */
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

  /** The page's colours now (app.css sets them per scheme): text, grid, the line palette, the font, the axis style. */
  function colours() {
    var root = getComputedStyle(document.documentElement)
    var body = getComputedStyle(document.body)
    var fg = root.getPropertyValue('--fg').trim() || body.color
    var bg = luminance(root.getPropertyValue('--bg').trim() || body.backgroundColor)
    var dark = bg === null ? Boolean(darkScheme && darkScheme.matches) : bg < 0.2
    var grid = dark ? 'rgba(255,255,255,0.14)' : 'rgba(0,0,0,0.12)'
    var fontFamily = body.fontFamily || 'sans-serif'
    var font = '12px ' + fontFamily
    var axis = { stroke: fg, font: font, labelFont: 'bold ' + font, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } }
    return { fg: fg, grid: grid, lines: dark ? DARK : LIGHT, font: fontFamily, axis: axis }
  }

  /** The element's width; a height from kind.height { min, max, ratio } of it. */
  function size(element, kind) {
    var width = Math.max(160, Math.floor(element.clientWidth))
    return { width: width, height: Math.round(Math.max(kind.height.min, Math.min(kind.height.max, width * kind.height.ratio))) }
  }

  /** uPlot's options: what every chart has, then the kind's own (scales, series, axes) in the colours of now. */
  function options(entry) {
    var dims = size(entry.element, entry.kind)
    return Object.assign({
      width: dims.width,
      height: dims.height,
      // UTC, like the dates in the tables
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC') },
      cursor: { drag: { x: false, y: false, setScale: false } },
      legend: { show: true, live: true },
    }, entry.kind.options(entry.chart, colours()))
  }

  function plot(entry) {
    return new uPlot(options(entry), entry.kind.columns(entry.chart), entry.element)
  }

  /** The JSON block with this id, parsed; null when it is missing or cannot be read (the figure keeps its text). */
  function read(id) {
    var source = id ? document.getElementById(id) : null
    if (!source) return null
    try {
      return JSON.parse(source.textContent || '')
    } catch (e) {
      return null
    }
  }

  /** Draws a chart into the element (its text goes); kind: { height, options(chart, colours), columns(chart) }. */
  function draw(element, chart, kind) {
    element.textContent = ''
    var entry = { element: element, chart: chart, kind: kind, plot: null }
    entry.plot = plot(entry)
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

  function resized() {
    drawn.forEach(function (entry) {
      if (!entry.element.isConnected) return
      var dims = size(entry.element, entry.kind)
      if (dims.width !== entry.plot.width) entry.plot.setSize(dims)
    })
  }

  /** The scheme changed: the same charts again in its colours. */
  function recolour() {
    prune()
    drawn.forEach(function (entry) {
      entry.plot.destroy()
      entry.element.textContent = ''
      entry.plot = plot(entry)
    })
  }

  /**
   * A page script's drawing (drawNew: its charts not drawn yet) as it runs: after dropping the charts taken off the
   * page, and once uPlot is there. The page script keeps it for its own second run and hands it to start().
   */
  function drawer(drawNew) {
    return function drawAll() {
      // uPlot's script (just before) may still be loading after a boosted navigation: draw once it has run.
      if (typeof uPlot !== 'function') {
        var lib = document.querySelector('script[src$="uPlot.iife.min.js"]')
        if (lib) lib.addEventListener('load', drawAll, { once: true })
        return
      }
      prune()
      drawNew()
    }
  }

  /** Runs drawAll after every htmx swap (a boosted navigation included) and now, or once the page is parsed. */
  function start(drawAll) {
    document.addEventListener('htmx:load', drawAll)
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawAll)
    else drawAll()
  }

  window.appCharts = { DAY_S: DAY_S, TIME_TICKS: TIME_TICKS, read: read, draw: draw, drawer: drawer, start: start }
  if (darkScheme && darkScheme.addEventListener) darkScheme.addEventListener('change', recolour)
})()
