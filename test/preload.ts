// Loaded once before the test files (bunfig.toml); `bun test` runs every file in this one process, so the hooks
// below are global: afterEach runs after every test of every file, afterAll once at the end of the run.
// Secrets never leave: every line of the app's loggers is captured (at the most verbose level) and checked against
// the secrets the tests know (test/support/secrets.ts); a test that made a secret leak fails, and so does the run.
// Lines reach stdout only at the LOG_LEVEL a developer sets to see them.
import { afterAll, afterEach } from 'bun:test'
import { captureLogs } from '../src/core/log'
import { captureLine, describeFindings, settleExchanges, takeFindings } from './support/secrets'

process.env.LOG_LEVEL ??= 'silent'
captureLogs((line) => captureLine(line, 'app'))

const failOnFindings = () => {
  const found = takeFindings()
  if (found.length > 0) throw new Error(describeFindings(found))
}

afterEach(async () => {
  await settleExchanges(250)
  failOnFindings()
})

afterAll(async () => {
  await settleExchanges()
  failOnFindings()
})
