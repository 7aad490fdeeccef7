#!/bin/sh
# The page tests (test/pages-browser.test.ts) drive Debian's chromium headless. Installs it when it is missing and
# this machine can (root with apt-get, as on a fresh Debian machine or in CI); otherwise says how, and the page
# tests fail with the same advice. Runs before every `npm test`.
[ -n "${CHROMIUM:-}" ] && [ -x "$CHROMIUM" ] && exit 0
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the page tests"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 && exit 0
fi
echo "chromium is missing: install the chromium package (or set CHROMIUM to a Chromium binary); the page tests need it" >&2
exit 0
