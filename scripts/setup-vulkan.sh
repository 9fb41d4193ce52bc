#!/usr/bin/env bash
# Installs the software Vulkan driver (Mesa's lavapipe) that Dawn needs on machines without a GPU.
#
# Dawn needs a recent lavapipe: Debian bookworm's Mesa 22 is too old, its backports Mesa 25.x works.
# - If a lavapipe ICD from Mesa >= 25 is installed already, this does nothing (fast, idempotent).
# - Else, as root with apt: adds the backports suite of the distribution's own apt source (same
#   URIs and keyring as the existing source file, suite "<codename>-backports"), then installs
#   mesa-vulkan-drivers and libvulkan1 from it.
# - Else it says what to do and exits non-zero.
set -euo pipefail

MIN_MESA_MAJOR=25
BACKPORTS_FILE=/etc/apt/sources.list.d/switchyard-backports.sources

say() { echo "setup-vulkan: $*"; }

# The Mesa major version of the installed Vulkan drivers, or empty.
mesa_major() {
  command -v dpkg-query >/dev/null 2>&1 || return 0
  local v
  v=$(dpkg-query -W -f='${Status} ${Version}\n' mesa-vulkan-drivers 2>/dev/null | awk '/install ok installed/ {print $4}' || true)
  [ -n "$v" ] && echo "${v%%.*}" | sed 's/^[0-9]*://'
  return 0
}

lavapipe_icd() {
  ls /usr/share/vulkan/icd.d/lvp_icd*.json /etc/vulkan/icd.d/lvp_icd*.json 2>/dev/null | head -n 1
}

have_lavapipe() {
  local icd major
  icd=$(lavapipe_icd)
  [ -n "$icd" ] || return 1
  major=$(mesa_major)
  if [ -z "$major" ]; then
    say "found $icd but cannot tell its Mesa version (no dpkg); assuming it is recent enough"
    return 0
  fi
  # grep without -q reads all of ldconfig's output (no SIGPIPE under pipefail)
  [ "$major" -ge "$MIN_MESA_MAJOR" ] && ldconfig -p 2>/dev/null | grep 'libvulkan\.so\.1 ' >/dev/null
}

if have_lavapipe; then
  say "lavapipe (Mesa $(mesa_major)) is installed: $(lavapipe_icd)"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  say "no lavapipe from Mesa >= $MIN_MESA_MAJOR, and not root, so nothing can be installed."
  say "Ask an administrator to install mesa-vulkan-drivers and libvulkan1 (Mesa >= $MIN_MESA_MAJOR;"
  say "on Debian bookworm from bookworm-backports), or rerun this script as root (sudo bash $0)."
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  say "no lavapipe from Mesa >= $MIN_MESA_MAJOR, and no apt-get here."
  say "Install Mesa's Vulkan software driver (lavapipe, Mesa >= $MIN_MESA_MAJOR) and the Vulkan loader"
  say "(libvulkan.so.1) with this system's package manager, then rerun this script to check."
  exit 1
fi

codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ -z "$codename" ]; then
  say "cannot read VERSION_CODENAME from /etc/os-release; install mesa-vulkan-drivers (Mesa >= $MIN_MESA_MAJOR) by hand"
  exit 1
fi
suite="$codename-backports"

# The URIs (and keyring) of the apt source that serves the release itself, never a host name of our own.
uris=""
signed_by=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  # deb822: take the first stanza whose Suites list the release codename.
  read -r uris signed_by < <(awk -v want="$codename" '
    BEGIN { RS = ""; FS = "\n" }
    {
      u = ""; s = ""; k = ""; match_suite = 0
      for (i = 1; i <= NF; i++) {
        line = $i
        if (line ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", line); u = line }
        else if (line ~ /^Suites:/) {
          sub(/^Suites:[ \t]*/, "", line); n = split(line, parts, /[ \t]+/)
          for (j = 1; j <= n; j++) if (parts[j] == want) match_suite = 1
        }
        else if (line ~ /^Signed-By:/) { sub(/^Signed-By:[ \t]*/, "", line); k = line }
      }
      if (match_suite && u != "") { print u "\t" k; exit }
    }' /etc/apt/sources.list.d/debian.sources | tr '\t' ' ')
fi
if [ -z "$uris" ] && [ -f /etc/apt/sources.list ]; then
  # one-line format: deb [options] URI suite components...
  uris=$(awk -v want="$codename" '$1 == "deb" {
      i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
      if ($(i + 1) == want) { print $i; exit }
    }' /etc/apt/sources.list)
fi
if [ -z "$uris" ]; then
  say "found no apt source for suite $codename in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list;"
  say "add the $suite suite of your mirror yourself, then: apt-get install -t $suite mesa-vulkan-drivers libvulkan1"
  exit 1
fi

if ! grep -rqs "^Suites:.*\b$suite\b\|^deb .*\b$suite\b" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  say "adding suite $suite from $uris to $BACKPORTS_FILE"
  {
    echo "Types: deb"
    echo "URIs: $uris"
    echo "Suites: $suite"
    echo "Components: main"
    # Only the first word: a keyring path (an inline key block would span lines).
    [ -n "$signed_by" ] && echo "Signed-By: ${signed_by%% *}"
  } >"$BACKPORTS_FILE"
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends -t "$suite" mesa-vulkan-drivers libvulkan1

if have_lavapipe; then
  say "installed lavapipe (Mesa $(mesa_major)): $(lavapipe_icd)"
else
  say "installed mesa-vulkan-drivers from $suite, but no lavapipe from Mesa >= $MIN_MESA_MAJOR is present; check apt's output above"
  exit 1
fi
