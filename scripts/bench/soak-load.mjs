// The load half of scripts/bench/soak.ts, run under Node: one autocannon instance per kind of request, all at once,
// so each kind has its own latency histogram. Reads the plan (JSON) from the file named by argv[2] and prints one
// JSON line of results per kind when the time is up.
//
// A plan: { url, durationS, kinds: [{ name, connections, method, path, headers, body, rotate }] }. `rotate` lists
// variants (path, headers, body merged over the kind's own) used one after another, and every request carries a
// fresh X-Forwarded-For: each stands for a different client, as behind a school's or a clinic's proxy.
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'))
let client = 0
const nextAddress = () => {
  client++
  return `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}`
}

function run(kind) {
  let turn = 0
  return new Promise((resolve, reject) => {
    autocannon({
      url: plan.url,
      connections: kind.connections,
      duration: plan.durationS,
      timeout: 30,
      requests: [{
        method: kind.method,
        path: kind.path,
        setupRequest(req) {
          const variant = kind.rotate?.length ? kind.rotate[turn++ % kind.rotate.length] : {}
          return {
            ...req,
            path: variant.path ?? kind.path,
            headers: { ...kind.headers, ...variant.headers, 'x-forwarded-for': nextAddress() },
            body: variant.body ?? kind.body,
          }
        },
      }],
    }, (err, result) => (err ? reject(err) : resolve(result)))
  })
}

const results = await Promise.all(plan.kinds.map(async (kind) => {
  const r = await run(kind)
  return {
    name: kind.name,
    requests: r.requests.total,
    rps: r.requests.average,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: r.statusCodeStats,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    max: r.latency.max,
  }
}))
for (const r of results) console.log(JSON.stringify(r))
