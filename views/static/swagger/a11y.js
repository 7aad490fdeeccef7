// Swagger UI renders the server list as a <select> in an empty <label>: no name a screen reader can say (axe-core:
// select-name). Each select it renders without a named label gets one: its title, or the heading of its block.
const nameSelects = () => {
  for (const select of document.querySelectorAll('#swagger-ui select:not([aria-label]):not([aria-labelledby])')) {
    // a label's own words, without those of the options it wraps
    if ([...(select.labels ?? [])].some((label) => label.textContent.replace(select.textContent, '').trim() !== '')) continue
    const block = select.closest('.servers, .content-type-wrapper, .parameters-col_description, .response-control-media-type')
    const heading = select.id === 'servers' ? 'Server' : block?.querySelector('label, .servers-title, h4')?.textContent?.trim()
    select.setAttribute('aria-label', select.title || heading || 'Choose a value')
  }
}
new MutationObserver(nameSelects).observe(document.documentElement, { childList: true, subtree: true })
nameSelects()
