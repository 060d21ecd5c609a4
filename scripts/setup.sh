#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, when they are missing.
# Safe to run again; needs root (or sudo) only when something is missing.
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
command -v tmux >/dev/null 2>&1 || need+=(tmux) # pseudo-terminal tests of `rl-design init`
if ((${#need[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
echo "setup: system packages present"
