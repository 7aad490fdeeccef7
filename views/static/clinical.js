// The clinical pages' sign-out across tabs (spec 2, Logout and clients). Pages work without it: the sign-out
// form is a plain post. With it:
// - signing out posts the form, then announces {type: 'logout'} on the BroadcastChannel 'app-auth', clears the
//   service-worker caches and goes to the sign-in page (the announcement follows the server's answer, so a
//   sibling tab that reloads cannot find the session still alive);
// - a sibling tab that hears the announcement drops its signed-in page and goes to the sign-in page;
// - a 401 on an authenticated call (an htmx request, or fetch() of an /api/ URL other than the login) is a
//   sign-out too: announced, caches cleared, sign-in page.
// Loaded with `defer` from the page head, so it runs once per page load and survives hx-boost body swaps.
(function () {
  var script = document.currentScript
  var base = script ? new URL(script.src, location.href).pathname.replace(/\/static\/clinical\.js$/, '') : ''
  var signInUrl = base + '/?signed-out=1'
  var loginApi = base + '/api/auth/login'
  var channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('app-auth') : null
  var nativeFetch = window.fetch
  var leaving = false

  /** A signed-in page carries the sign-out form. */
  function signedInPage() {
    return document.querySelector('form[data-app-logout]') !== null
  }

  function clearCaches() {
    if (!('caches' in window)) return Promise.resolve()
    return caches.keys()
      .then(function (keys) { return Promise.all(keys.map(function (key) { return caches.delete(key) })) })
      .catch(function () {})
  }

  /** Drops what the page shows and replaces it with the sign-in page (no history entry for the old page). */
  function leave() {
    if (leaving) return
    leaving = true
    document.body.replaceChildren()
    location.replace(signInUrl)
  }

  /** The sign-out of this tab: tell the others, clear the caches, leave (a signed-out page stays where it is). */
  function signOut(always) {
    var wasSignedIn = signedInPage()
    if (channel) channel.postMessage({ type: 'logout' })
    return clearCaches().then(function () {
      if (always || wasSignedIn) leave()
    })
  }

  if (channel) {
    channel.addEventListener('message', function (event) {
      if (event.data && event.data.type === 'logout' && signedInPage()) leave()
    })
  }

  // The sign-out form: ended on the server first, then announced. Captured before htmx's boost sees it.
  document.addEventListener('submit', function (event) {
    var form = event.target
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute('data-app-logout')) return
    event.preventDefault()
    event.stopPropagation()
    nativeFetch.call(window, form.action, { method: 'POST', credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function () { return signOut(true) }, function () { form.submit() })
  }, true)

  // htmx requests answered 401: the session ended elsewhere (signed out, revoked, idle).
  document.addEventListener('htmx:responseError', function (event) {
    var xhr = event.detail && event.detail.xhr
    if (xhr && xhr.status === 401) signOut(false)
  })

  function authenticatedApiCall(input) {
    var url
    try {
      url = new URL(typeof input === 'string' || input instanceof URL ? String(input) : input.url, location.href)
    } catch (e) {
      return false
    }
    return url.origin === location.origin && url.pathname.indexOf(base + '/api/') === 0 && url.pathname !== loginApi
  }

  if (typeof nativeFetch === 'function') {
    window.fetch = function (input, init) {
      return nativeFetch.call(window, input, init).then(function (response) {
        if (response.status === 401 && authenticatedApiCall(input)) signOut(false)
        return response
      })
    }
  }
})()
