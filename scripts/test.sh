#!/usr/bin/env bash
# The whole test suite, on a fresh machine or a developer's: installs what the tests need,
# then runs every test of every crate. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo is missing: install Rust from your distribution or rustup first" >&2
    exit 1
fi

cargo test --workspace --locked
