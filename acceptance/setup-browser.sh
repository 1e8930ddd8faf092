#!/usr/bin/env bash
# Installs what the browser test (acceptance/web_browser.py) needs, once:
# - Debian's chromium and chromium-driver (the same version; nothing downloads a browser of its
#   own), with apt-get (as root, or through sudo);
# - axe-core, pinned, from the npm registry into $CATALOG_AXE_DIR (default
#   $HOME/.cache/catalog-axe), injected into each page by the test.
# Selenium comes from PyPI with acceptance/requirements.txt. Nothing is skipped: a failure here
# fails the test run.
set -euo pipefail
AXE_VERSION=4.14.1
AXE_DIR="${CATALOG_AXE_DIR:-$HOME/.cache/catalog-axe}"

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
if [ "${#need[@]}" -gt 0 ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
    echo "setup-browser: installing ${need[*]} with apt-get"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ ! -f "$AXE_DIR/node_modules/axe-core/axe.min.js" ] \
    || ! grep -q "\"version\": \"$AXE_VERSION\"" "$AXE_DIR/node_modules/axe-core/package.json"; then
    command -v npm >/dev/null 2>&1 || {
        echo "setup-browser: FAILED: npm is needed to install axe-core (install Node.js)" >&2
        exit 1
    }
    echo "setup-browser: installing axe-core@$AXE_VERSION into $AXE_DIR"
    mkdir -p "$AXE_DIR"
    npm install --prefix "$AXE_DIR" --no-audit --no-fund --silent "axe-core@$AXE_VERSION"
fi
echo "$AXE_DIR/node_modules/axe-core/axe.min.js"
