#!/usr/bin/env bash
# Makes the Python package's tests runnable (packages/cuda/test/python.test.ts fails without them):
# a python3 with pytest, looked for as that test does (python3 on PATH, then /usr/bin/python3), and
# a C compiler (the tests build the layout library and a probe of the C headers with it).
# - Both there: does nothing (fast, idempotent).
# - Else, as root with apt-get: installs what is missing from the distribution (python3-pytest,
#   which serves /usr/bin/python3; gcc and libc6-dev), running apt-get update only when needed.
# - Else pytest with pip into python3 on PATH, when a package index answers.
# - Else it says what to do and exits non-zero.
set -euo pipefail

say() { echo "setup-python: $*"; }

# The first interpreter with pytest, as python.test.ts picks it; or nothing.
python_with_pytest() {
  local py
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import pytest' >/dev/null 2>&1; then
      echo "$py"
      return 0
    fi
  done
  return 1
}

have_cc() {
  local c
  for c in "${CC:-}" cc gcc; do
    [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && return 0
  done
  return 1
}

report() {
  local py
  py=$(python_with_pytest) || return 1
  have_cc || return 1
  say "pytest $("$py" -c 'import pytest; print(pytest.__version__)') in $py ($(command -v "$py")); C compiler present"
}

report && exit 0

missing=()
python_with_pytest >/dev/null || missing+=(python3-pytest)
have_cc || missing+=(gcc libc6-dev)

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  say "installing ${missing[*]} with apt-get"
  # A fresh image has no package lists; stale ones fail the install: update, then once more.
  compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null || apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}" ||
    { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; }
elif ! python_with_pytest >/dev/null && command -v python3 >/dev/null 2>&1 &&
  python3 -m pip --version >/dev/null 2>&1; then
  say "installing pytest with pip into $(command -v python3) (not root, or no apt-get)"
  python3 -m pip install -q --disable-pip-version-check --retries 1 --timeout 20 pytest ||
    say "pip could not install pytest (no package index reachable, or an externally managed python)"
fi

report && exit 0
python_with_pytest >/dev/null ||
  say "no python3 with pytest: run this script as root on Debian (apt-get install python3-pytest), or python3 -m pip install pytest"
have_cc || say "no C compiler: install gcc (or set CC); the Python tests build the layout library and a header probe with it"
exit 1
