// Slide decks as PowerPoint files (pptxgenjs): one slide per Marp slide, with its title, bullet lists, text and
// speaker notes. (Interface fixed here; body being written.)

/** The download's file name: the title made safe, `.pptx`. */
export function pptxFileName(title: string): string {
  return `${title.replace(/[^\w .-]+/g, '').trim() || 'slides'}.pptx`
}

/** A .pptx file of the deck. */
export async function buildPptx(_markdown: string, _title: string): Promise<Uint8Array> {
  throw new Error('not implemented')
}
