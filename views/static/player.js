// The timed quiz player's countdown and autosave (the form#player of plugins/quiz/views/player.tsx). Nothing here is
// needed for the quiz to work: without it the learner answers and submits the form, and the server keeps the time.
// With it:
// - the answers are saved a moment after each change, and every 15 s anyway, which also keeps this browser's
//   30-second lock on the quiz; a 409 (the quiz is open in another browser) is said on the page, and saving
//   resumes by itself once the other browser lets go;
// - the countdown runs from the seconds the server said were left (not from this computer's clock), says "5
//   minutes left" and "1 minute left" to screen readers, and submits the form at zero;
// - leaving the page with unsaved answers sends them (sendBeacon).
// A page script (rendered at the end of the body): a boosted navigation runs it again, so it starts once and then
// looks for a player on every htmx:load.
(function () {
  if (window.quizPlayerLoaded) return
  window.quizPlayerLoaded = true

  var SAVE_DELAY_MS = 800
  var HEARTBEAT_MS = 15000
  var RETRY_MS = 5000

  function pad(n) { return (n < 10 ? '0' : '') + n }
  function clock(seconds) {
    var s = Math.max(0, Math.floor(seconds))
    var h = Math.floor(s / 3600)
    var m = Math.floor((s % 3600) / 60)
    return h > 0 ? h + ':' + pad(m) + ':' + pad(s % 60) : m + ':' + pad(s % 60)
  }
  function timeOfDay() {
    var d = new Date()
    return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds())
  }

  function start() {
    var form = document.getElementById('player')
    if (!form || !form.dataset.progress || form.dataset.playerReady) return
    form.dataset.playerReady = '1'
    var url = form.dataset.progress
    var status = document.getElementById('save-state')
    var lockedBox = document.getElementById('player-locked')
    var timer = document.getElementById('timer')
    var alertBox = document.getElementById('time-alert')
    var questions = form.querySelectorAll('fieldset.question')
    var currentIdx = 0
    var dirty = false
    var saving = false
    var finished = false
    var saveTimer = null
    var lastSaved = Date.now()
    var endsAt = timer ? Date.now() + Number(timer.dataset.remaining) * 1000 : null
    var warned = {}

    function say(text) { if (status) status.textContent = text }
    function answered() { return form.querySelectorAll('input[type=radio]:checked').length }
    function body() {
      var data = new URLSearchParams(new FormData(form))
      data.set('current_idx', String(currentIdx))
      return data
    }
    function setLocked(on) {
      if (!lockedBox) return
      if (!on) { lockedBox.innerHTML = ''; lockedBox.className = ''; return }
      if (lockedBox.className) return
      lockedBox.className = 'flash warning'
      lockedBox.setAttribute('role', 'alert')
      lockedBox.innerHTML = '<p><strong>This quiz is open on another device or browser.</strong></p>' +
        '<p>Your answers on this page are not being saved. Close the quiz there: this page starts saving again within ' +
        '30 seconds. Or submit from here when you are done.</p>'
    }
    function schedule(ms) {
      clearTimeout(saveTimer)
      saveTimer = setTimeout(save, ms)
    }
    function save() {
      if (finished || !document.body.contains(form)) return stop()
      if (saving) return schedule(SAVE_DELAY_MS)
      saving = true
      var sentDirty = dirty
      dirty = false
      fetch(url, { method: 'POST', body: body(), credentials: 'same-origin' })
        .then(function (res) {
          if (res.status === 204) {
            lastSaved = Date.now()
            setLocked(false)
            say(answered() + ' of ' + questions.length + ' answered, saved at ' + timeOfDay() + '.')
            return
          }
          if (sentDirty) dirty = true
          if (res.redirected) { say('Your session has ended: sign in again in another tab, then your answers save again.'); return }
          return res.text().then(function (text) {
            if (res.status === 409 && /attempt_completed|already submitted/.test(text)) { finished = true; location.reload(); return }
            if (res.status === 409) { setLocked(true); say('Not saved: the quiz is open elsewhere.'); return }
            say('Not saved (the server answered ' + res.status + '); trying again.')
          })
        })
        .catch(function () {
          if (sentDirty) dirty = true
          say('Not saved: no connection. Trying again; your answers stay on this page.')
        })
        .then(function () {
          saving = false
          schedule(dirty ? RETRY_MS : HEARTBEAT_MS)
        })
    }

    form.addEventListener('change', function (event) {
      var fieldset = event.target.closest && event.target.closest('fieldset.question')
      if (fieldset) currentIdx = Array.prototype.indexOf.call(questions, fieldset)
      dirty = true
      say('Saving…')
      schedule(SAVE_DELAY_MS)
    })
    form.addEventListener('submit', function () {
      finished = true
      stop()
    })
    function leave() {
      if (!finished && dirty && navigator.sendBeacon) navigator.sendBeacon(url, body())
    }
    window.addEventListener('pagehide', leave)
    document.addEventListener('htmx:beforeSwap', function once(event) {
      if (event.detail && event.detail.target === document.body) { leave(); document.removeEventListener('htmx:beforeSwap', once) }
    })

    var ticker = null
    function tick() {
      if (!document.body.contains(form)) return stop()
      var left = Math.max(0, Math.round((endsAt - Date.now()) / 1000))
      timer.textContent = clock(left)
      if (left <= 300 && left > 60 && !warned[300]) { warned[300] = true; if (alertBox) alertBox.textContent = '5 minutes left.' }
      if (left <= 60 && left > 0 && !warned[60]) { warned[60] = true; if (alertBox) alertBox.textContent = '1 minute left.' }
      if (left === 0 && !finished) {
        finished = true
        stop()
        if (alertBox) alertBox.textContent = 'Time is up: your answers are being submitted.'
        say('Time is up: submitting your answers…')
        if (form.requestSubmit) form.requestSubmit(); else form.submit()
      }
    }
    function stop() {
      clearTimeout(saveTimer)
      if (ticker) clearInterval(ticker)
      ticker = null
    }
    if (timer && endsAt !== null) {
      ticker = setInterval(tick, 250)
      tick()
    }
    schedule(HEARTBEAT_MS - (Date.now() - lastSaved))
  }

  document.addEventListener('htmx:load', start)
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start)
  else start()
})()
