// Swagger UI renders the server list as a <select> in an empty <label>: no name a screen reader can say (axe-core:
// select-name). Each select it renders without a label of its own words gets one: its title, else what it chooses.
const nameSelects = () => {
  for (const select of document.querySelectorAll('#swagger-ui select:not([aria-label]):not([aria-labelledby])')) {
    // a label's own words, without those of the options it wraps
    if ([...(select.labels ?? [])].some((label) => label.textContent.replace(select.textContent, '').trim() !== '')) continue
    select.setAttribute('aria-label', select.title || (select.id === 'servers' ? 'Server' : 'Choose a value'))
  }
}
new MutationObserver(nameSelects).observe(document.documentElement, { childList: true, subtree: true })
nameSelects()
