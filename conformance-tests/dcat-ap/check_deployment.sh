#!/usr/bin/env bash
# DCAT-AP check of a deployment: /catalog.<ext> and N datasets' /dataset/<name>.<ext> in Turtle,
# RDF/XML and JSON-LD, validated with the official SEMIC shapes; violations listed per document.
# Usage: check_deployment.sh BASE_URL [--datasets N] [--formats ttl,rdf,jsonld] [-s 3-core] [-k]
#        [--fq FQ] [--profiles P] [--rate R] [--max-requests N] [--json FILE]
# Exit 0 no violation, 1 violations, 2 errors. First run installs pyshacl/rdflib (pinned in
# requirements.txt) into the acceptance venv ($CATALOG_VENV, default ~/.cache/catalog-venv) or
# $SHACL_VENV.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$HERE/python.sh" "$HERE/check_deployment.py" "$@"
