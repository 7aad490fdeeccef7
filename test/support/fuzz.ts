// Requests for the OpenAPI fuzzer (test/fuzz-openapi.test.ts), made from the services' own documents: fast-check
// arbitraries of what an operation's schemas accept, and of the ways clients get it wrong (wrong types, missing
// or extra fields, huge or hostile text, out-of-range numbers, ids that are not numbers, broken JSON, wrong
// content types). Hosts in generated URLs never resolve or are refused, so nothing leaves the machine.
import fc from 'fast-check'

export interface Schema {
  type?: string | string[]
  format?: string
  enum?: unknown[]
  const?: unknown
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  patternProperties?: Record<string, Schema>
  maxProperties?: number
  items?: Schema
  minItems?: number
  maxItems?: number
  anyOf?: Schema[]
  oneOf?: Schema[]
  description?: string
}

/**
 * Values to offer for fields of a given name, besides what the schema says: values the server holds (the AI
 * gateway's model), which no schema can list.
 */
export type Hints = Record<string, string[]>

export interface Param { name: string; in: string; required?: boolean; schema?: Schema }

export interface Operation {
  service: 'clinical' | 'quiz'
  method: string
  /** The documented path, `{name}` for each path parameter. */
  path: string
  /** `METHOD /path`, as the test names operations. */
  key: string
  params: Param[]
  /** The body schema of each documented content type. */
  bodies: Record<string, Schema>
  bodyLimit: number | null
}

interface DocOperation {
  parameters?: Param[]
  requestBody?: { content?: Record<string, { schema?: Schema }> }
  'x-body-limit'?: number | { bytes: number }
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete']

/** Every operation of an OpenAPI document. */
export function readOperations(doc: { paths: Record<string, Record<string, DocOperation>> }, service: Operation['service']): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).filter(([method]) => METHODS.includes(method)).map(([method, op]) => {
      const limit = op['x-body-limit']
      return {
        service, method: method.toUpperCase(), path, key: `${method.toUpperCase()} ${path}`,
        params: op.parameters ?? [],
        bodies: Object.fromEntries(Object.entries(op.requestBody?.content ?? {}).map(([type, c]) => [type, c.schema ?? {}])),
        bodyLimit: typeof limit === 'number' ? limit : (limit?.bytes ?? null),
      }
    }))
}

// ---- values a schema accepts ----------------------------------------------------------------------------------

/** Generated text stays short (fast requests); long values come from the boundary and huge-string cases. */
const TEXT_MAX = 80
const INT32_MAX = 2_147_483_647

const typesOf = (s: Schema): string[] => (s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type])

/** anyOf branches inherit the bounds their parent states (a numeric id is `{minimum, anyOf: [string, integer]}`). */
function branches(s: Schema): Schema[] {
  const { anyOf, oneOf, ...parent } = s
  return (anyOf ?? oneOf ?? []).map((b) => ({ ...parent, ...b }))
}

/** URLs whose hosts fail to resolve or are refused as private: a request to them never leaves the machine. */
const urlArb = fc.tuple(
  fc.constantFrom('https://', 'http://'),
  fc.constantFrom('gateway.invalid', 'nextcloud.example.invalid', '127.0.0.1', 'localhost', '[::1]', '10.0.0.1', '169.254.169.254'),
  fc.constantFrom('', ':1', ':8080', ':65535'),
  fc.stringMatching(/^(\/[a-z0-9._-]{0,12}){0,3}$/),
).map(([scheme, host, port, path]) => `${scheme}${host}${port}${path}`)

const emailArb = fc.tuple(fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,15}$/), fc.constantFrom('example.test', 'example.org', 'EXAMPLE.test'))
  .map(([local, domain]) => `${local}@${domain}`)

function intArb(s: Schema): fc.Arbitrary<number> {
  const min = s.minimum ?? -INT32_MAX - 1
  const max = s.maximum ?? INT32_MAX
  if (min > max) return fc.constant(min)
  // small ids name the rows the test made; the edges are where limits are checked
  const low = s.minimum === undefined ? Math.max(min, -3) : min
  const near = (span: number) => fc.integer({ min: low, max: Math.min(max, low + span) })
  return fc.oneof(
    { weight: 4, arbitrary: near(5) }, { weight: 2, arbitrary: near(50) },
    { weight: 1, arbitrary: fc.integer({ min, max }) }, { weight: 1, arbitrary: fc.constantFrom(min, max) },
  )
}

function textArb(min: number, max: number): fc.Arbitrary<string> {
  const cap = Math.max(min, Math.min(max, TEXT_MAX))
  const fits = (x: string) => x.length >= min && x.length <= max
  const arbs: Array<fc.WeightedArbitrary<string>> = [
    { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: cap }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: cap }).filter(fits) },
  ]
  // the longest text allowed, where an off-by-one in a limit shows
  if (max <= 100_000) arbs.push({ weight: 1, arbitrary: fc.constantFrom('a', 'é', ' ').map((c) => c.repeat(max)) })
  if (min > 0) arbs.push({ weight: 1, arbitrary: fc.constant('b'.repeat(min)) })
  return fc.oneof(...arbs)
}

/** Values a field's description names in backticks (`note_style`, `draft`): often the only ones its rules accept. */
function namedValues(s: Schema, fits: (x: string) => boolean): string[] {
  const named = [...(s.description ?? '').matchAll(/`([^`\s]{1,100})`/g)].map((m) => m[1]!)
  return [...new Set(named)].filter((v) => fits(v) && (!s.pattern || new RegExp(s.pattern).test(v)))
}

function stringArb(s: Schema, hints: string[] = []): fc.Arbitrary<string> {
  const fits = (x: string) => x.length >= (s.minLength ?? 0) && x.length <= (s.maxLength ?? 10_000)
  const known = [...hints, ...namedValues(s, fits)]
  return known.length > 0 ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: schemaStringArb(s) }) : schemaStringArb(s)
}

function schemaStringArb(s: Schema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0
  const max = s.maxLength ?? 10_000
  const fits = (x: string) => x.length >= min && x.length <= max
  switch (s.format) {
    case 'email': return emailArb.filter(fits)
    case 'uuid': return fc.uuid()
    case 'date-time': return fc.date({ min: new Date('1900-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }).map((d) => d.toISOString())
    case 'date': return fc.date({ min: new Date('1900-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10))
    case 'uri': return urlArb.filter(fits)
    case 'integer': return intArb(s).map(String)
    case 'binary': return fc.string({ maxLength: 40 })
  }
  if (s.pattern?.includes('https?://')) return urlArb.filter(fits)
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).filter(fits)
  return textArb(min, max)
}

/** Any JSON value, for a schema that says nothing of its type. */
const anyJson = fc.jsonValue({ maxDepth: 2 })

/** A value the schema accepts (as far as the schema tells: rules the services check themselves may still refuse it). */
export function valueArb(s: Schema | undefined, hints: Hints = {}, name = ''): fc.Arbitrary<unknown> {
  if (!s) return anyJson
  if (s.const !== undefined) return fc.constant(s.const)
  if (s.enum) return fc.constantFrom(...s.enum)
  if (s.anyOf || s.oneOf) return fc.oneof(...branches(s).map((b) => valueArb(b, hints, name)))
  const types = typesOf(s)
  if (types.length === 0) return s.properties || s.patternProperties ? objectArb(s, hints) : anyJson
  return fc.oneof(...types.map((type) => valueOfType(s, type, hints, name)))
}

function valueOfType(s: Schema, type: string, hints: Hints, name: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null': return fc.constant(null)
    case 'boolean': return fc.boolean()
    case 'integer': return intArb(s)
    case 'number': return fc.oneof(intArb(s), fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true }))
    case 'string': return stringArb(s, Object.hasOwn(hints, name) ? hints[name] : [])
    case 'array': {
      const min = s.minItems ?? 0
      const items = valueArb(s.items, hints, name)
      const few = fc.array(items, { minLength: min, maxLength: Math.max(min, Math.min(s.maxItems ?? 4, 4)) })
      return s.maxItems !== undefined && s.maxItems > 4 && s.maxItems <= 500
        ? fc.oneof({ weight: 5, arbitrary: few }, { weight: 1, arbitrary: fc.array(items, { minLength: s.maxItems, maxLength: s.maxItems }) })
        : few
    }
    case 'object': return objectArb(s, hints)
    default: return anyJson
  }
}

function objectArb(s: Schema, hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const props = s.properties ?? {}
  const required = (s.required ?? []).filter((k) => k in props)
  const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, p]) => [k, valueArb(p, hints, k)])), { requiredKeys: required })
  const patterns = Object.entries(s.patternProperties ?? {})
  if (patterns.length === 0) return record
  const [pattern, valueSchema] = patterns[0]!
  const keys = fc.stringMatching(new RegExp(pattern)).filter((k) => k.length <= 60 && !(k in props))
  const extra = fc.dictionary(keys, valueArb(valueSchema, hints), { maxKeys: Math.min(s.maxProperties ?? 5, 5) })
  return fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...r }))
}

// ---- hostile values ------------------------------------------------------------------------------------------

/** Text no field should store as given, or should store only as plain text. */
const HOSTILE_TEXT = [
  '', ' ', '\t\n', '\u0000', 'a\u0000b', '\u0001\u0002\u001b[31m\u007f', '\ud800', 'a\udfffb', '\u202eevil', '\ufeffbom', '\u200b',
  'e\u0301\u0301\u0301', '🙂'.repeat(20), '\r\nBcc: victim@example.test', '<script>alert(1)</script>', "1' or '1'='1' --",
  '${7*7}{{7*7}}', '../../etc/passwd', '%00', '%E0%A4%A', 'null', 'undefined', 'NaN', '-Infinity', '[object Object]', '__proto__',
  'true', '0', '-1', '1e309', '0x1F', ' 1 ', 'ｔｅｓｔ', 'İıß', '\\', '"', '\'', '{"a":1}',
]
const hostileTextArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 40 }) },
)

/** Numbers past every range a field states; a marker stands for what JSON.stringify cannot write (1e999). */
const INFINITE = '__fuzz_infinity__'
const hostileNumberArb = fc.oneof(
  fc.constantFrom(-1, 0, -0, 0.5, 1.5, -2_147_483_649, 2_147_483_648, 2 ** 53 + 2, -(2 ** 53) - 2, 1e21, 1e308, -1e308, 5e-324, INFINITE),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -(2 ** 31), max: -1 }),
)

/** Path segments that name no row: not numbers, out of range, broken percent-encoding, traversal. */
const BAD_SEGMENTS = [
  '0', '-1', 'abc', '1.5', '1e3', '0x1f', '%201', '1%20', '+1', '00001', '2147483648', '9007199254740993', '99999999999999999999999',
  'NaN', 'Infinity', '-0', '%00', '%2e%2e', '..', '%2F', 'null', 'true', '%5B%5D', "1'%20or%20'1'='1", '%F0%9F%99%82', 'x'.repeat(500),
  '%FF', '%E0%A4%A', '%', '1;drop', '1%0A',
]

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v)

/** Whether the schema takes a value of this JSON type (an integer is a number too). */
function takes(s: Schema, type: string): boolean {
  if (s.anyOf || s.oneOf) return branches(s).some((b) => takes(b, type))
  if (s.const !== undefined || s.enum) return false
  const types = typesOf(s)
  if (types.length === 0) return !(s.properties || s.patternProperties) || type === 'object'
  return types.includes(type) || (type === 'integer' && types.includes('number'))
}

/** A value of a JSON type the schema does not take; undefined when it takes every type. */
function wrongTypeArb(s: Schema): fc.Arbitrary<unknown> | undefined {
  const candidates: Array<[string, fc.Arbitrary<unknown>]> = [
    ['null', fc.constant(null)], ['boolean', fc.boolean()], ['integer', fc.integer()], ['number', fc.double({ noNaN: true, noDefaultInfinity: true })],
    ['string', fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('1', '1.5', 'true', 'null'))],
    ['array', fc.oneof(fc.constant([]), fc.array(anyJson, { maxLength: 3 }))],
    ['object', fc.oneof(fc.constant({}), fc.dictionary(fc.string({ maxLength: 5 }), anyJson, { maxKeys: 3 }))],
  ]
  const wrong = candidates.filter(([type]) => !takes(s, type))
  return wrong.length > 0 ? fc.oneof(...wrong.map(([, a]) => a)) : undefined
}

// ---- request parts and their rendering -----------------------------------------------------------------------

export interface FileSpec { file: true; name: string; type: string; bytes: Uint8Array }

export type Body =
  | { kind: 'json'; value: unknown }
  | { kind: 'form'; fields: Array<[string, string]> }
  | { kind: 'multipart'; fields: Array<[string, string | FileSpec]> }
  | { kind: 'raw'; data: string | Uint8Array; type: string | null }

export interface Parts {
  path: Record<string, string>
  query: Array<[string, string]>
  /** A raw query string, instead of `query`, for percent-encoding no URLSearchParams would write. */
  rawQuery?: string
  headers: Record<string, string>
  body: Body | null
  /** `valid`, or the mutation that made it: what a failure report names. */
  mutation: string
}

export interface FuzzRequest {
  method: string
  url: string
  headers: Record<string, string>
  body?: string | Uint8Array<ArrayBuffer> | FormData
  mutation: string
  /** Method, URL and a short view of the body, for failure reports. */
  label: string
}

const MAGIC: Record<string, number[]> = {
  pdf: [0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x34, 0x0a],
  png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  wav: [0x52, 0x49, 0x46, 0x46, 0x24, 0, 0, 0, 0x57, 0x41, 0x56, 0x45, 0x66, 0x6d, 0x74, 0x20],
  zip: [0x50, 0x4b, 0x03, 0x04],
  mp3: [0x49, 0x44, 0x33, 0x03, 0, 0, 0, 0, 0, 0],
  ole: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1],
  gif: [0x47, 0x49, 0x46, 0x38, 0x39, 0x61],
  webm: [0x1a, 0x45, 0xdf, 0xa3],
  text: [0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x0a],
}

/** A WAV file a decoder reads: 16-bit mono PCM at 8 kHz with these samples. */
function wav(samples: Uint8Array): Uint8Array {
  const header = new DataView(new ArrayBuffer(44))
  const ascii = (at: number, text: string) => [...text].forEach((c, i) => header.setUint8(at + i, c.charCodeAt(0)))
  ascii(0, 'RIFF'); header.setUint32(4, 36 + samples.length, true); ascii(8, 'WAVEfmt ')
  header.setUint32(16, 16, true); header.setUint16(20, 1, true); header.setUint16(22, 1, true)
  header.setUint32(24, 8000, true); header.setUint32(28, 16_000, true); header.setUint16(32, 2, true); header.setUint16(34, 16, true)
  ascii(36, 'data'); header.setUint32(40, samples.length, true)
  return new Uint8Array([...new Uint8Array(header.buffer), ...samples])
}

/** Files whose name, declared type and content agree, as a client that plays by the rules sends them. */
const consistentFileArb: fc.Arbitrary<FileSpec> = fc.tuple(
  fc.constantFrom('pdf', 'png', 'txt', 'csv', 'wav'),
  fc.stringMatching(/^[a-z][a-z0-9 _-]{0,15}$/),
  fc.uint8Array({ minLength: 2, maxLength: 400 }),
  fc.string({ unit: 'grapheme-ascii', maxLength: 200 }),
).map(([kind, stem, bytes, text]) => {
  const file = (ext: string, type: string, content: Uint8Array) => ({ file: true as const, name: `${stem}.${ext}`, type, bytes: content })
  switch (kind) {
    case 'pdf': return file('pdf', 'application/pdf', new TextEncoder().encode(`%PDF-1.4\n1 0 obj<<>>endobj\n${text}\n%%EOF\n`))
    case 'png': return file('png', 'image/png', new Uint8Array([...MAGIC.png!, ...bytes]))
    case 'txt': return file('txt', 'text/plain', new TextEncoder().encode(text || 'text'))
    case 'csv': return file('csv', 'text/csv', new TextEncoder().encode(`a,b\n${text.replaceAll('\n', ' ')},1\n`))
    default: return file('wav', 'audio/wav', wav(bytes.slice(0, bytes.length & ~1)))
  }
})

/** A file whose name, declared type and leading bytes agree or disagree, with random bytes after them. */
const mixedFileArb: fc.Arbitrary<FileSpec> = fc.record({
  stem: fc.oneof(fc.constantFrom('notes', 'scan', '../../etc/passwd', 'a'.repeat(300), 'ünï cødé', '.hidden', 'x\u0000y', ''), fc.string({ maxLength: 12 })),
  ext: fc.constantFrom('.pdf', '.png', '.jpg', '.wav', '.mp3', '.webm', '.docx', '.doc', '.txt', '.csv', '.md', '.json', '.exe', '.pdf.exe', ''),
  type: fc.constantFrom(
    'application/pdf', 'image/png', 'audio/wav', 'audio/mpeg', 'audio/webm', 'text/plain', 'text/csv', 'application/octet-stream', '',
    'text/html', 'application/zip',
  ),
  magic: fc.constantFrom(...Object.keys(MAGIC), 'none'),
  rest: fc.uint8Array({ maxLength: 600 }),
}).map(({ stem, ext, type, magic, rest }) => ({ file: true as const, name: stem + ext, type, bytes: new Uint8Array([...(MAGIC[magic] ?? []), ...rest]) }))

const fileArb: fc.Arbitrary<FileSpec> = fc.oneof(consistentFileArb, mixedFileArb)

const isFileSchema = (s: Schema | undefined): boolean =>
  !!s && (s.format === 'binary' || (typesOf(s).includes('array') && s.items?.format === 'binary'))

/** A value as form fields carry it: text (files apart). */
function formText(v: unknown): string[] {
  if (v === null || v === undefined) return []
  if (Array.isArray(v)) return v.flatMap((x) => (typeof x === 'object' && x !== null ? [JSON.stringify(x)] : formText(x)))
  if (typeof v === 'object') return [JSON.stringify(v)]
  return [String(v)]
}

function encodeBody(body: Body): { body?: string | Uint8Array<ArrayBuffer> | FormData; type?: string } {
  switch (body.kind) {
    case 'json': {
      const text = JSON.stringify(body.value) ?? ''
      return { body: text.replaceAll(`"${INFINITE}"`, '1e999'), type: 'application/json' }
    }
    case 'form': {
      const form = new URLSearchParams()
      for (const [k, v] of body.fields) form.append(k, v)
      return { body: form.toString(), type: 'application/x-www-form-urlencoded' }
    }
    case 'multipart': {
      const form = new FormData()
      for (const [k, v] of body.fields) {
        if (typeof v === 'string') form.append(k, v)
        else form.append(k, new File([v.bytes as Uint8Array<ArrayBuffer>], v.name, { type: v.type }))
      }
      return { body: form }
    }
    case 'raw': return { body: typeof body.data === 'string' ? body.data : new Uint8Array(body.data), type: body.type ?? undefined }
  }
}

export function render(op: Operation, parts: Parts): FuzzRequest {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => parts.path[name] ?? '1')
  const query = parts.rawQuery ?? new URLSearchParams(parts.query).toString()
  const url = query ? `${path}?${query}` : path
  const headers = { ...parts.headers }
  let body: FuzzRequest['body']
  if (parts.body && op.method !== 'GET') {
    const encoded = encodeBody(parts.body)
    body = encoded.body
    if (encoded.type && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = encoded.type
  }
  const shown = body === undefined ? '' : typeof body === 'string' ? body : body instanceof FormData ? `[form ${[...body.keys()].join(',')}]` : `[${body.length} bytes]`
  return { method: op.method, url, headers, body, mutation: parts.mutation, label: `${op.method} ${url.slice(0, 300)} ${shown.slice(0, 1000)}`.trim() }
}

// ---- valid requests ------------------------------------------------------------------------------------------

const pathParams = (op: Operation) => op.params.filter((p) => p.in === 'path')
/** A path segment: percent-encoded, an unpaired surrogate (which no URL can carry) replaced first. */
const encodeSegment = (text: string) => encodeURIComponent(text.toWellFormed())

function pathArb(op: Operation, hints: Hints): fc.Arbitrary<Record<string, string>> {
  const segment = (p: Param) => valueArb(p.schema, hints, p.name).map((v) => encodeSegment(formText(v)[0] ?? 'x') || 'x')
  return fc.record(Object.fromEntries(pathParams(op).map((p) => [p.name, segment(p)])))
}

function queryArb(op: Operation, hints: Hints): fc.Arbitrary<Array<[string, string]>> {
  const params = op.params.filter((p) => p.in === 'query')
  const record = fc.record(Object.fromEntries(params.map((p) => [p.name, valueArb(p.schema, hints, p.name)])), {
    requiredKeys: params.filter((p) => p.required).map((p) => p.name),
  })
  return record.map((r) => Object.entries(r).flatMap(([k, v]) => formText(v).map((t): [string, string] => [k, t])))
}

function headerArb(op: Operation): fc.Arbitrary<Record<string, string>> {
  const params = op.params.filter((p) => p.in === 'header')
  // a header value is visible ASCII without surrounding white space, or the request cannot be built
  const value = (p: Param) => stringArb(p.schema ?? {}).filter((v) => /^[\x20-\x7e]*$/.test(v) && v.trim() === v)
  return fc.record(Object.fromEntries(params.map((p) => [p.name, value(p)])), { requiredKeys: [] }).map((r) => r as Record<string, string>)
}

const jsonSchemaOf = (op: Operation) => op.bodies['application/json']

function formFieldsArb(schema: Schema, withFiles: boolean, hints: Hints): fc.Arbitrary<Array<[string, string | FileSpec]>> {
  const props = schema.properties ?? {}
  const required = new Set(schema.required ?? [])
  const entries = Object.entries(props).map(([k, s]) => {
    const files = withFiles ? fc.array(fileArb, { minLength: 1, maxLength: typesOf(s).includes('array') ? 3 : 1 }) : fc.constant([])
    const arb: fc.Arbitrary<Array<[string, string | FileSpec]>> = isFileSchema(s)
      ? files.map((fs) => fs.map((f): [string, FileSpec] => [k, f]))
      : valueArb(s, hints, k).map((v) => formText(v).map((t): [string, string] => [k, t]))
    return required.has(k) ? arb : fc.option(arb, { nil: [] as Array<[string, string | FileSpec]> })
  })
  return fc.tuple(...entries).map((lists) => lists.flat())
}

function validBodyArb(op: Operation, hints: Hints): fc.Arbitrary<Body | null> {
  const options: Array<fc.WeightedArbitrary<Body | null>> = []
  const multipart = op.bodies['multipart/form-data']
  // an upload is a form: its JSON variant (when documented) can only be refused
  const upload = Object.values(multipart?.properties ?? {}).some(isFileSchema)
  const json = jsonSchemaOf(op)
  if (json) options.push({ weight: upload ? 1 : 6, arbitrary: valueArb(json, hints).map((value): Body => ({ kind: 'json', value })) })
  const urlencoded = op.bodies['application/x-www-form-urlencoded']
  if (urlencoded?.properties) {
    options.push({ weight: 1, arbitrary: formFieldsArb(urlencoded, false, hints).map((fields): Body => ({ kind: 'form', fields: fields as Array<[string, string]> })) })
  }
  if (multipart?.properties) {
    options.push({ weight: json && !upload ? 1 : 6, arbitrary: formFieldsArb(multipart, true, hints).map((fields): Body => ({ kind: 'multipart', fields })) })
  }
  return options.length > 0 ? fc.oneof(...options) : fc.constant(null)
}

function validPartsArb(op: Operation, hints: Hints): fc.Arbitrary<Parts> {
  return fc.record({ path: pathArb(op, hints), query: queryArb(op, hints), headers: headerArb(op), body: validBodyArb(op, hints) })
    .map((p): Parts => ({ ...p, mutation: 'valid' }))
}

// ---- mutations -----------------------------------------------------------------------------------------------

type Path = Array<string | number>
interface Field { path: Path; schema: Schema | undefined }

/** The schema that describes a value among anyOf branches (the first branch that takes its type). */
function resolve(s: Schema | undefined, v: unknown): Schema | undefined {
  if (!s || !(s.anyOf || s.oneOf)) return s
  return branches(s).find((b) => takes(b, jsonType(v))) ?? branches(s)[0]
}

/** Every field of a generated value with its schema, nested objects and first array items included. */
function fieldsOf(s: Schema | undefined, v: unknown, path: Path = []): Field[] {
  const schema = resolve(s, v)
  if (Array.isArray(v)) return v.length > 0 ? [{ path: [...path, 0], schema: schema?.items }, ...fieldsOf(schema?.items, v[0], [...path, 0])] : []
  if (v === null || typeof v !== 'object') return []
  return Object.entries(v).flatMap(([k, x]) => {
    const child = schema?.properties?.[k] ?? Object.values(schema?.patternProperties ?? {})[0]
    return [{ path: [...path, k], schema: child }, ...fieldsOf(child, x, [...path, k])]
  })
}

function clone<T>(v: T): T {
  return structuredClone(v)
}

function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value
  const copy = clone(root) as Record<string | number, unknown>
  let node = copy
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>
  Object.defineProperty(node, path[path.length - 1]!, { value, enumerable: true, writable: true, configurable: true })
  return copy
}

function deleteAt(root: unknown, path: Path): unknown {
  const copy = clone(root) as Record<string | number, unknown>
  let node = copy
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>
  const last = path[path.length - 1]!
  if (Array.isArray(node)) node.splice(Number(last), 1)
  else delete node[last]
  return copy
}

/** Required fields of a generated value (at any depth), which a mutation may drop. */
function requiredFields(s: Schema | undefined, v: unknown): Path[] {
  return fieldsOf(s, v).flatMap(({ path }) => {
    const parentPath = path.slice(0, -1)
    const parentSchema = parentPath.length === 0 ? resolve(s, v) : fieldsOf(s, v).find((f) => f.path.join('\u0001') === parentPath.join('\u0001'))?.schema
    return typeof path[path.length - 1] === 'string' && resolve(parentSchema, null)?.required?.includes(path[path.length - 1] as string) ? [path] : []
  })
}

/** A mutation of a valid request: a name and the parts it makes. */
type Mutator = (op: Operation, valid: Parts) => fc.Arbitrary<Parts> | null

const withBody = (valid: Parts, body: Body | null, mutation: string): Parts => ({ ...valid, body, mutation })

/** Picks one field of the valid JSON body (or the body itself when it has none) and replaces it. */
function jsonFieldMutation(name: string, replacement: (f: Field, op: Operation) => fc.Arbitrary<unknown> | undefined): Mutator {
  return (op, valid) => {
    const schema = jsonSchemaOf(op)
    if (!schema || valid.body?.kind !== 'json') return null
    const value = valid.body.value
    const fields = fieldsOf(schema, value)
    const targets = fields.length > 0 ? fields : [{ path: [], schema }]
    return fc.constantFrom(...targets).chain((f) => {
      const arb = replacement(f, op)
      if (!arb) return fc.constant(withBody(valid, { kind: 'json', value: null }, `${name}: body null`))
      return arb.map((x) => withBody(valid, { kind: 'json', value: setAt(value, f.path, x) }, `${name} at ${f.path.join('.') || 'body'}`))
    })
  }
}

const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'id', 'user_id', 'userId', 'role', 'is_admin', 'success', 'created_at', 'email_verified', 'totp_enabled']

const JSON_MUTATORS: Record<string, Mutator> = {
  wrongType: jsonFieldMutation('wrong type', (f) => wrongTypeArb(f.schema ?? {})),
  hostileText: jsonFieldMutation('hostile text', () => hostileTextArb),
  hostileNumber: jsonFieldMutation('hostile number', () => hostileNumberArb),
  // one past the field's limit, and past the operation's body limit
  hugeString: jsonFieldMutation('huge string', (f, op) => fc.tuple(
    fc.constantFrom('x', 'é', '🙂', ' ', '\u0000'),
    fc.constantFrom((f.schema?.maxLength ?? 255) + 1, 70_000, (op.bodyLimit ?? 1_000_000) + 1),
  ).map(([c, n]) => c.repeat(Math.ceil(n / c.length)))),
  missingRequired: (op, valid) => {
    const schema = jsonSchemaOf(op)
    if (!schema || valid.body?.kind !== 'json') return null
    const value = valid.body.value
    const required = requiredFields(schema, value)
    const all = fieldsOf(schema, value).map((f) => f.path)
    const targets = required.length > 0 ? required : all
    if (targets.length === 0) return fc.constant(withBody(valid, { kind: 'json', value: {} }, 'empty object'))
    return fc.subarray(targets, { minLength: 1 }).map((paths) =>
      withBody(valid, { kind: 'json', value: [...paths].reverse().reduce((v, p) => deleteAt(v, p), value) }, `missing ${paths.map((p) => p.join('.')).join(', ')}`))
  },
  extraFields: (op, valid) => {
    if (!jsonSchemaOf(op) || valid.body?.kind !== 'json') return null
    const value = valid.body.value
    const objects: Path[] = [[], ...fieldsOf(jsonSchemaOf(op), value).filter((f) => {
      let node: unknown = value
      for (const k of f.path) node = (node as Record<string | number, unknown>)[k]
      return node !== null && typeof node === 'object' && !Array.isArray(node)
    }).map((f) => f.path)]
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null
    const key = fc.oneof(fc.constantFrom(...EXTRA_KEYS), fc.string({ maxLength: 20 }))
    return fc.tuple(fc.constantFrom(...objects), fc.array(fc.tuple(key, anyJson), { minLength: 1, maxLength: 3 })).map(([at, extra]) => {
      const mutated = extra.reduce((v, [k, x]) => setAt(v, [...at, k], x), value as unknown)
      return withBody(valid, { kind: 'json', value: mutated }, `extra ${extra.map(([k]) => k).join(', ')} at ${at.join('.') || 'body'}`)
    })
  },
  notAnObject: (op, valid) => !jsonSchemaOf(op) ? null : fc.constantFrom(null, [], [{}], 'text', 0, -1, true, [1, 2, 3])
    .map((value) => withBody(valid, { kind: 'json', value }, `body ${JSON.stringify(value)}`)),
}

/** JSON texts that do not parse, or parse to something odd (duplicate keys, 1e999, deep nesting). */
const MALFORMED_JSON = [
  '', '{', '}', '[', '{"a":', '{"a":1,}', '{a:1}', "{'a':1}", 'nul', 'tru', '"unterminated', '{"a":"\\u00"}', '{"a":"\\x41"}', '\u0000', '{"a":1}garbage',
  '{"__proto__":{"role":"admin"}}', '{"constructor":{"prototype":{"role":"admin"}}}', '1e999', '-1e999', '{"a":1,"a":"2"}', '[' .repeat(5000) + ']'.repeat(5000),
  '{"a":'.repeat(3000) + '1' + '}'.repeat(3000), '\ufeff{}', '{"a":"\ud800"}', '{"a":"\\ud800"}', '{"a":"\\u0000"}', ' '.repeat(70_000), '0'.repeat(400),
]

const CONTENT_TYPES = [
  'text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data', 'multipart/form-data; boundary=zzz',
  'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/octet-stream', 'application/merge-patch+json',
  'application/JSON', 'text/json', 'image/png', '', ';;;', 'application/x-www-form-urlencoded; charset=utf-7',
]

const RAW_MUTATORS: Record<string, Mutator> = {
  malformedJson: (op, valid) => op.method === 'GET' ? null : fc.oneof(
    fc.constantFrom(...MALFORMED_JSON),
    // a valid body cut short
    fc.nat().map((n) => {
      const text = valid.body?.kind === 'json' ? JSON.stringify(valid.body.value) ?? '' : '{"a":1}'
      return text.slice(0, Math.max(1, n % Math.max(1, text.length)))
    }),
  ).map((data) => withBody(valid, { kind: 'raw', data, type: 'application/json' }, `malformed json ${JSON.stringify(data.slice(0, 30))}`)),
  invalidUtf8: (op, valid) => op.method === 'GET' ? null : fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) =>
    // {"a":" then bytes no UTF-8 decoder accepts
    withBody(valid, { kind: 'raw', data: new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, ...bytes, 0x22, 0x7d]), type: 'application/json' }, 'invalid utf-8')),
  wrongContentType: (op, valid) => op.method === 'GET' ? null : fc.tuple(fc.constantFrom(...CONTENT_TYPES), fc.boolean()).map(([type, asJson]) => {
    const text = valid.body?.kind === 'json' ? JSON.stringify(valid.body.value) ?? '' : asJson ? '{"a":1}' : 'a=1&b=2'
    return withBody(valid, { kind: 'raw', data: text, type }, `content-type ${JSON.stringify(type)}`)
  }),
  noBody: (op, valid) => op.method === 'GET' || !valid.body ? null : fc.constantFrom('application/json', null, 'multipart/form-data', 'application/x-www-form-urlencoded')
    .map((type) => withBody(valid, { kind: 'raw', data: '', type }, `empty body as ${type}`)),
  form: (op, valid) => {
    const schema = op.bodies['application/x-www-form-urlencoded'] ?? op.bodies['multipart/form-data']
    if (!schema?.properties) return null
    const names = Object.keys(schema.properties)
    const asMultipart = !op.bodies['application/x-www-form-urlencoded']
    const name = fc.oneof(fc.constantFrom(...names), fc.constantFrom('a[b]', '__proto__', ''), fc.string({ maxLength: 8 }))
    const field = fc.tuple(name, fc.oneof(hostileTextArb, fc.constant('x'.repeat(70_000))))
    return fc.array(field, { maxLength: 6 }).map((fields): Parts => asMultipart
      ? withBody(valid, { kind: 'multipart', fields }, 'hostile multipart fields')
      : withBody(valid, { kind: 'form', fields }, 'hostile form fields'))
  },
  files: (op, valid) => {
    const schema = op.bodies['multipart/form-data']
    if (!schema?.properties || !Object.values(schema.properties).some(isFileSchema)) return null
    const names = Object.keys(schema.properties)
    const value = fc.oneof(fileArb.map((f): string | FileSpec => f), hostileTextArb)
    return fc.array(fc.tuple(fc.constantFrom(...names, 'other'), value), { maxLength: 6 })
      .map((fields) => withBody(valid, { kind: 'multipart', fields }, 'files in the wrong fields or missing'))
  },
}

const PARAM_MUTATORS: Record<string, Mutator> = {
  badPathSegment: (op, valid) => {
    const names = pathParams(op).map((p) => p.name)
    if (names.length === 0) return null
    const segment = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...BAD_SEGMENTS) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map(encodeSegment) },
    )
    return fc.tuple(fc.constantFrom(...names), segment)
      .map(([name, segment]) => ({ ...valid, path: { ...valid.path, [name]: segment }, mutation: `path ${name}=${segment.slice(0, 40)}` }))
  },
  badQuery: (op, valid) => {
    const names = op.params.filter((p) => p.in === 'query').map((p) => p.name)
    const unknown = fc.string({ maxLength: 10 })
    const name = names.length > 0 ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: unknown }) : unknown
    return fc.tuple(name, fc.array(fc.oneof(hostileTextArb, fc.constant('x'.repeat(10_000)), hostileNumberArb.map(String)), { minLength: 1, maxLength: 3 }))
      .map(([n, values]) => ({
        ...valid,
        query: [...valid.query.filter(([k]) => k !== n), ...values.map((v): [string, string] => [n, v])],
        mutation: `query ${n}=${JSON.stringify(values).slice(0, 60)}`,
      }))
  },
  rawQuery: (op, valid) => {
    const names = op.params.filter((p) => p.in === 'query').map((p) => p.name)
    if (names.length === 0) return null
    return fc.tuple(fc.constantFrom(...names), fc.constantFrom('%', '%E0%A4%A', '%FF', '%00', '%u0041', '=', '&&', '%2', '[]', '[0]=1'))
      .map(([n, v]) => ({ ...valid, rawQuery: v.startsWith('[') ? `${n}${v}` : `${n}=${v}`, mutation: `raw query ${n}=${v}` }))
  },
  badHeader: (op, valid) => {
    const names = op.params.filter((p) => p.in === 'header').map((p) => p.name)
    if (names.length === 0) return null
    return fc.tuple(fc.constantFrom(...names), fc.oneof(fc.constantFrom('', ' ', 'x'.repeat(5000), 'null', '\t'), fc.string({ unit: 'grapheme-ascii', maxLength: 30 })))
      .map(([n, v]) => ({ ...valid, headers: { ...valid.headers, [n]: v }, mutation: `header ${n}=${v.slice(0, 30)}` }))
  },
}

/** Request headers the handlers read besides the body: the answer format asked for and the client kind. */
const HEADER_VALUES: Record<string, string[]> = {
  accept: ['text/event-stream', 'text/html', '*/*', '', 'application/xml', 'text/event-stream, application/json;q=0.1'],
  'x-client': ['web', 'mobile', 'WEB', '', 'desktop', 'x'.repeat(300)],
  origin: ['https://evil.example', 'null', 'http://localhost'],
  'x-quiz-session': ['', 'x'.repeat(300), 'a\tb'],
}

const HEADER_MUTATORS: Record<string, Mutator> = {
  oddHeaders: (_op, valid) => fc.constantFrom(...Object.entries(HEADER_VALUES).flatMap(([name, values]) => values.map((v): [string, string] => [name, v])))
    .map(([name, value]) => ({ ...valid, headers: { ...valid.headers, [name]: value }, mutation: `header ${name}: ${value.slice(0, 40)}` })),
}

const MUTATORS: Record<string, Mutator> = { ...JSON_MUTATORS, ...RAW_MUTATORS, ...PARAM_MUTATORS, ...HEADER_MUTATORS }

/**
 * Requests of one operation: valid ones (as far as the schemas tell) and mutations of them, about one in four
 * valid so that the handlers run, not only validation.
 */
export function requestArb(op: Operation, hints: Hints = {}): fc.Arbitrary<Parts> {
  return validPartsArb(op, hints).chain((valid) => {
    const mutations = Object.values(MUTATORS).map((m) => m(op, valid)).filter((a): a is fc.Arbitrary<Parts> => a !== null)
    return fc.oneof({ weight: Math.ceil(mutations.length / 3), arbitrary: fc.constant(valid) }, ...mutations.map((arbitrary) => ({ weight: 1, arbitrary })))
  })
}

/** Authorization and cookie headers an anonymous client might send: none, or tokens that prove nothing. */
export const anonymousHeadersArb: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Record<string, string>>(
      { authorization: 'Bearer' }, { authorization: 'Bearer ' }, { authorization: 'Bearer null' }, { authorization: 'Basic YWRtaW46YWRtaW4=' },
      { authorization: `Bearer ${'a'.repeat(5000)}` }, { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIiwicm9sZSI6ImFkbWluIn0.' },
      { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOjF9.AAAA' }, { cookie: 'app_auth=garbage' }, { cookie: 'app_auth=' },
      { cookie: 'app_auth=eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.', 'sec-fetch-site': 'same-origin' }, { cookie: `app_auth=${'%'.repeat(100)}` },
    ),
  },
)
