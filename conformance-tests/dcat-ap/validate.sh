#!/usr/bin/env bash
# Validate RDF (a file, an http(s) URL, or '-' for stdin) against the official SEMIC DCAT-AP SHACL shapes.
# Prints "violations: N" last; exit 0 when there is no sh:Violation, 1 when there are, 2 on usage/fetch/parse errors.
# Usage: validate.sh [-s 3-core|3-full|3-recommended|2-core|...] [-k] [-v] [-f FORMAT] INPUT
# First run installs pyshacl/rdflib (pinned in requirements.txt) into the acceptance venv
# ($CATALOG_VENV, default ~/.cache/catalog-venv) or $SHACL_VENV.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$HERE/python.sh" "$HERE/validate.py" "$@"
