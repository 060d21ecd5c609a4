#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, when they are missing.
# Safe to run again; needs root (or sudo) only when something is missing.
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
command -v tmux >/dev/null 2>&1 || need+=(tmux) # pseudo-terminal tests of `rl-design init`
# `nginx -t` and a running nginx check the generated gateway config (nginx lives in /usr/sbin)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v promtool >/dev/null 2>&1 || need+=(prometheus) # promtool checks the generated alerting rules
# the exporters the alert rules read besides the generated code: redis_exporter for the store's keys and
# memory, mtail for the nginx edge rules' refusals (monitoring/nginx-ratelimit.mtail)
command -v prometheus-redis-exporter >/dev/null 2>&1 || command -v redis_exporter >/dev/null 2>&1 || need+=(prometheus-redis-exporter)
command -v mtail >/dev/null 2>&1 || need+=(mtail)
[ -x /usr/bin/chromium ] || need+=(chromium fonts-dejavu-core) # browser tests of the HTML output (test/browser)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless) # the Nu HTML Checker (vnu-jar)
if ((${#need[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
echo "setup: system packages present"
