#!/usr/bin/env bash
# The whole test suite, on a fresh machine or a developer's: installs what the tests need,
# then runs every test of every crate. This is the README's test command and what CI runs.
#
# The Redis conformance tests start their own redis-server processes (standalone and a
# 3-master cluster) on free loopback ports; they need Debian's redis-server binary. The
# console test drives Debian's chromium over its DevTools protocol. The OpenAPI fuzz run
# (scripts/openapi-fuzz.sh) needs schemathesis from PyPI; the RESP door's tests drive
# redis-cli (redis-tools, which redis-server brings), redis-py (PyPI) and Node.js's ioredis and
# node-redis (npm, pinned in tests/resp-clients/package-lock.json). The game clients' tests
# build the TypeScript client (TypeScript and Node.js's types, pinned in
# clients/typescript/package-lock.json) and the C# one (Debian's mono-devel: mcs, mono). The
# deployment files' test runs systemd-analyze (Debian's systemd). This script installs what is missing (Debian
# packages as root or through sudo; schemathesis with pip; the Node.js packages with npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo is missing: install Rust from your distribution or rustup first" >&2
    exit 1
fi

PACKAGES=()
if [ -z "${PHOTOFINISH_REDIS_SERVER:-}" ] && ! command -v redis-server >/dev/null 2>&1; then
    PACKAGES+=(redis-server) # it starts a system redis on 6379; the tests never use it
fi
if [ -z "${PHOTOFINISH_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
    PACKAGES+=(chromium)
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    PACKAGES+=(nodejs npm)
fi
if ! command -v mcs >/dev/null 2>&1 || ! command -v mono >/dev/null 2>&1; then
    PACKAGES+=(mono-devel) # the C# client's compiler and runtime
fi
if ! command -v systemd-analyze >/dev/null 2>&1; then
    PACKAGES+=(systemd) # systemd-analyze verifies deploy/photofinish.service
fi
if [ ${#PACKAGES[@]} -gt 0 ]; then
    echo "installing Debian packages: ${PACKAGES[*]}" >&2
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${PACKAGES[@]}" >/dev/null
fi
if ! command -v st >/dev/null 2>&1; then
    echo "installing schemathesis with pip" >&2
    python3 -m pip install -q 'schemathesis==4.32.5' 'hypothesis<6.170.10'
fi
if ! python3 -c 'import redis' >/dev/null 2>&1; then
    echo "installing redis-py with pip (the RESP door's redis-py test)" >&2
    python3 -m pip install -q 'redis>=5'
fi

if [ ! -d tests/resp-clients/node_modules/ioredis ] || [ ! -d tests/resp-clients/node_modules/redis ] \
    || [ tests/resp-clients/package-lock.json -nt tests/resp-clients/node_modules ]; then
    echo "installing ioredis and node-redis with npm ci (the RESP door's Node.js test)" >&2
    (cd tests/resp-clients && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ ! -d clients/typescript/node_modules/typescript ] \
    || [ clients/typescript/package-lock.json -nt clients/typescript/node_modules ]; then
    echo "installing the TypeScript client's dev dependencies with npm ci" >&2
    (cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error)
fi

cargo test --workspace --locked
cargo build -p photofinish --locked
./scripts/openapi-fuzz.sh
