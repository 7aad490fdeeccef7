// The slides page of the learning hub (plugins/learning/views/reader.tsx): one slide at a time instead of all of
// them one under the other (which is what the page shows without JavaScript). With it:
// - the Previous, Next and Full screen buttons and a "Slide 3 of 12" counter (an aria-live region) appear;
// - keys: ArrowRight, PageDown, Space and ArrowDown go to the next slide; ArrowLeft, PageUp and ArrowUp to the
//   previous one; Home and End to the first and the last; F toggles full screen (the Fullscreen API on the deck);
// - keys typed into a form control, or with Ctrl, Alt or Meta held, are left to the browser.
// A page script (rendered at the end of the body): a boosted navigation runs it again, so it sets up its listeners
// once and then looks for a deck at once and on every htmx:load. A page without a deck is left alone.
(function () {
  if (window.learningSlides) {
    window.learningSlides.start()
    return
  }

  var NEXT_KEYS = { ArrowRight: 1, PageDown: 1, ' ': 1, Spacebar: 1, ArrowDown: 1 }
  var PREVIOUS_KEYS = { ArrowLeft: 1, PageUp: 1, ArrowUp: 1 }

  function slidesOf(deck) {
    var box = deck.querySelector('.marpit')
    if (!box) return []
    return Array.prototype.filter.call(box.children, function (el) { return el.tagName.toLowerCase() === 'svg' })
  }

  function fullscreenElement() {
    return document.fullscreenElement || document.webkitFullscreenElement || null
  }

  /** Shows slide n (0-based, clamped) of a deck and says which one it is. */
  function show(deck, n) {
    var slides = slidesOf(deck)
    if (slides.length === 0) return
    var index = Math.max(0, Math.min(slides.length - 1, n))
    deck.dataset.current = String(index)
    slides.forEach(function (svg, i) {
      if (i === index) svg.classList.add('is-current')
      else svg.classList.remove('is-current')
    })
    var count = deck.querySelector('.learn-deck-count')
    if (count) count.textContent = 'Slide ' + (index + 1) + ' of ' + slides.length
    var prev = deck.querySelector('[data-deck="prev"]')
    var next = deck.querySelector('[data-deck="next"]')
    if (prev) prev.disabled = index === 0
    if (next) next.disabled = index === slides.length - 1
  }

  function move(deck, by) {
    show(deck, Number(deck.dataset.current || 0) + by)
  }

  function toggleFullscreen(deck) {
    try {
      if (fullscreenElement()) {
        var exit = document.exitFullscreen || document.webkitExitFullscreen
        if (exit) Promise.resolve(exit.call(document)).catch(function () {})
      } else {
        var enter = deck.requestFullscreen || deck.webkitRequestFullscreen
        if (enter) Promise.resolve(enter.call(deck)).catch(function () {})
      }
    } catch (e) {}
  }

  function fullscreenChanged() {
    var deck = currentDeck()
    if (!deck) return
    var button = deck.querySelector('[data-deck="fullscreen"]')
    var on = fullscreenElement() === deck
    if (button) {
      button.textContent = on ? 'Exit full screen' : 'Full screen'
      button.setAttribute('aria-pressed', on ? 'true' : 'false')
    }
  }

  function currentDeck() {
    return document.querySelector('.learn-deck.is-paged')
  }

  function setUp(deck) {
    if (deck.dataset.slidesReady) return
    if (slidesOf(deck).length === 0) return
    deck.dataset.slidesReady = '1'
    deck.classList.add('is-paged')
    var bar = deck.querySelector('.learn-deck-bar')
    if (bar) bar.hidden = false
    var keys = document.querySelector('.learn-deck-keys')
    if (keys) keys.hidden = false
    var full = deck.querySelector('[data-deck="fullscreen"]')
    var canFullscreen = document.fullscreenEnabled || document.webkitFullscreenEnabled
    if (full) {
      if (canFullscreen) full.setAttribute('aria-pressed', 'false')
      else full.hidden = true
    }
    deck.addEventListener('click', function (event) {
      var button = event.target instanceof Element ? event.target.closest('[data-deck]') : null
      if (!button || !deck.contains(button)) return
      var action = button.getAttribute('data-deck')
      if (action === 'prev') move(deck, -1)
      else if (action === 'next') move(deck, 1)
      else if (action === 'fullscreen') toggleFullscreen(deck)
    })
    show(deck, 0)
  }

  function start() {
    var decks = document.querySelectorAll('.learn-deck')
    for (var i = 0; i < decks.length; i++) setUp(decks[i])
  }

  /** Form controls, links and buttons keep their own keys (Space presses a button, arrows move in a field). */
  function ownKeys(target, key) {
    if (!(target instanceof Element)) return false
    if (target.isContentEditable) return true
    var tag = target.tagName.toLowerCase()
    if (tag === 'input' || tag === 'textarea' || tag === 'select') return true
    return (tag === 'button' || tag === 'a') && (key === ' ' || key === 'Spacebar' || key === 'Enter')
  }

  document.addEventListener('keydown', function (event) {
    var deck = currentDeck()
    if (!deck || event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey) return
    if (ownKeys(event.target, event.key)) return
    var key = event.key
    if (NEXT_KEYS[key]) move(deck, 1)
    else if (PREVIOUS_KEYS[key]) move(deck, -1)
    else if (key === 'Home') show(deck, 0)
    else if (key === 'End') show(deck, slidesOf(deck).length - 1)
    else if (key === 'f' || key === 'F') toggleFullscreen(deck)
    else return
    event.preventDefault()
  })
  document.addEventListener('fullscreenchange', fullscreenChanged)
  document.addEventListener('webkitfullscreenchange', fullscreenChanged)
  document.addEventListener('htmx:load', start)

  window.learningSlides = { start: start }
  start()
})()
