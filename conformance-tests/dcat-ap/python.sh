#!/usr/bin/env bash
# Runs a script of this directory with a Python that has pyshacl/rdflib (pinned in
# requirements.txt): the acceptance venv ($CATALOG_VENV, default ~/.cache/catalog-venv) or
# $SHACL_VENV, made and filled on first use.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${SHACL_VENV:-${CATALOG_VENV:-$HOME/.cache/catalog-venv}}"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import pyshacl' 2>/dev/null; then
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q -r "$HERE/requirements.txt" >&2
fi
exec "$VENV/bin/python" "$@"
