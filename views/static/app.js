// Small page behaviour that is not htmx: nothing here is needed for a page to work without JavaScript.
document.addEventListener('htmx:responseError', function (event) {
  var box = document.getElementById('flash')
  if (box) { box.className = 'flash error'; box.textContent = 'The request failed (' + event.detail.xhr.status + '). Please try again.' }
})
