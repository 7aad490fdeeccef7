// Response bodies that leave in a few send()s. Bun (1.4.5) writes a response that completes after an `await` (every
// answer that reads the database) and does not fit uWebSockets' 16 KB cork buffer one fragment per send(): the status
// line, each header's name, `: `, value and line end, then the body (oven-sh/bun#41341). With the nine security
// headers every response carries, that is some 40 sends and about 300 us of CPU more for a 25 KB page. A body handed
// to Bun as a stream of one chunk leaves corked, as a chunked response (no Content-Length): 50-60 us for 25 KB
// against 400, and fewer at every size above the cork buffer, but about 20 us more below it
// (scripts/bench/README.md, "A large body as a one-chunk stream"). So only bodies near the buffer's size or above
// go as a stream; binary downloads keep their Content-Length (players and download managers use it).

/** Body bytes from which a response leaves as a one-chunk stream: the cork buffer less room for the headers. */
export const ONE_SEND_BYTES = 12 * 1024

const encoder = new TextEncoder()

/**
 * The body of a text response: the text when it is short, else its UTF-8 bytes, as a one-chunk stream from
 * ONE_SEND_BYTES on. The response must name its content type (a body of bytes gets none by default).
 */
export function textBody(text: string): string | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> {
  // A UTF-16 unit is one to three UTF-8 bytes: a text that cannot reach the limit is not encoded.
  if (text.length * 3 < ONE_SEND_BYTES) return text
  const bytes = encoder.encode(text)
  return bytes.byteLength < ONE_SEND_BYTES ? bytes : oneChunk(bytes)
}

function oneChunk(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes)
      controller.close()
    },
  })
}
