#!/usr/bin/env bash
# The whole test suite, on a fresh machine or a developer's: installs what the tests need,
# then runs every test of every crate. This is the README's test command and what CI runs.
#
# The Redis conformance tests start their own redis-server processes (standalone and a
# 3-master cluster) on free loopback ports; they need Debian's redis-server binary, which
# this script installs when it is missing (as root, or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo is missing: install Rust from your distribution or rustup first" >&2
    exit 1
fi

if [ -z "${PHOTOFINISH_REDIS_SERVER:-}" ] && ! command -v redis-server >/dev/null 2>&1; then
    echo "redis-server is missing: installing Debian's redis-server package" >&2
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null
    # The package starts a system redis on 6379; the tests never use it.
fi

cargo test --workspace --locked
