#!/usr/bin/env python3
"""DCAT-AP check of a deployment: its catalog and N of its datasets, in each RDF format.

Fetches `/catalog.<ext>` (the first page) and `/dataset/<name>.<ext>` for the first N datasets
`package_search` lists, in Turtle, RDF/XML and JSON-LD (`--formats`), validates every document
with the official SEMIC DCAT-AP SHACL shapes vendored beside this script (the shape sets of
validate.py, `3-core` by default), and reports the violations per document: focus node, path,
message. Reads only (GET requests), at most `--rate` a second.

Exit status: 0 = no violation anywhere, 1 = at least one, 2 = usage, fetch or parse errors
(a document that cannot be fetched or parsed is reported and counts as an error).

    check_deployment.sh https://data.example.org --datasets 20 --json dcat-ap.json
"""
import argparse
import collections
import json
import os
import sys
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import validate as v  # noqa: E402  (the shape sets and input handling of validate.py)

FORMATS = {"ttl": "turtle", "rdf": "xml", "jsonld": "json-ld", "n3": "n3"}


class Fetcher:
    def __init__(self, base, rate, max_requests):
        self.base = base.rstrip("/")
        self.gap = 1.0 / rate if rate > 0 else 0.0
        self.max_requests = max_requests
        self.sent = 0
        self.last = 0.0

    def get(self, path, accept="*/*"):
        if self.sent >= self.max_requests:
            raise RuntimeError("the request budget (--max-requests) is spent")
        wait = self.last + self.gap - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self.last = time.monotonic()
        self.sent += 1
        req = urllib.request.Request(self.base + path, headers={
            "Accept": accept, "User-Agent": "catalog-conformance-dcat-ap"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.read()


def violations(data, fmt, base, shapes, ignore_class):
    """(triples, [violation]) of one document: focus, path, message, constraint."""
    from rdflib import Graph
    from pyshacl import validate
    g = Graph()
    g.parse(data=data, format=fmt, publicID=base)
    _, results_graph, _ = validate(g, shacl_graph=shapes, abort_on_first=False,
                                   allow_warnings=True, advanced=True)
    found = [{k: r[k] for k in ("focus", "path", "message", "constraint")}
             for r in v.results(results_graph, ignore_class) if r["severity"] == "Violation"]
    return len(g), sorted(found, key=lambda r: (r["focus"], r["path"], r["message"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base_url", help="the deployment's root, e.g. https://data.example.org")
    ap.add_argument("--datasets", type=int, default=10, help="how many datasets (default 10)")
    ap.add_argument("--formats", default="ttl,rdf,jsonld",
                    help="comma-separated: %s (default ttl,rdf,jsonld)" % ",".join(FORMATS))
    ap.add_argument("-s", "--shapes", default="3-core",
                    help="shape set(s) of validate.py, comma separated (default 3-core)")
    ap.add_argument("-k", "--ignore-class-constraints", action="store_true",
                    help="do not count 'Value does not have class X' results")
    ap.add_argument("--fq", default=None,
                    help="only datasets matching this filter query (package_search fq, also "
                         "given to /catalog.<ext>), e.g. organization:city-of-x")
    ap.add_argument("--profiles", default=None,
                    help="ask for these DCAT profiles (?profiles=...), e.g. euro_dcat_ap_2")
    ap.add_argument("--rate", type=float, default=5.0, help="requests a second (default 5)")
    ap.add_argument("--max-requests", type=int, default=500, help="at most (default 500)")
    ap.add_argument("--json", help="also write the report as JSON to this file")
    args = ap.parse_args()
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    for f in formats:
        if f not in FORMATS:
            print("error: unknown format %r" % f, file=sys.stderr)
            return 2
    try:
        shapes = v.load_shapes(v.shape_set_files(
            [s.strip() for s in args.shapes.split(",") if s.strip()]))
    except KeyError as e:
        print("error: unknown shape set %s" % e, file=sys.stderr)
        return 2
    except ImportError as e:
        print("error: %s (run check_deployment.sh, which installs pyshacl)" % e, file=sys.stderr)
        return 2
    fetch = Fetcher(args.base_url, args.rate, args.max_requests)
    query = "?" + urllib.parse.urlencode({"profiles": args.profiles}) if args.profiles else ""
    catalog_params = {k: val for k, val in (("fq", args.fq), ("profiles", args.profiles)) if val}
    catalog_query = "?" + urllib.parse.urlencode(catalog_params) if catalog_params else ""

    documents = []
    errors = 0

    def check(label, path, fmt):
        nonlocal errors
        doc = {"document": label, "url": fetch.base + path}
        try:
            data = fetch.get(path)
            n, found = violations(data, FORMATS[fmt], fetch.base + path, shapes,
                                  args.ignore_class_constraints)
            doc.update({"triples": n, "violations": found})
        except Exception as e:  # noqa: BLE001 - any fetch or parse error is reported
            errors += 1
            doc["error"] = str(e)
        documents.append(doc)

    names = []
    try:
        search = {"rows": args.datasets, "sort": "metadata_modified desc", "fl": "name"}
        if args.fq:
            search["fq"] = args.fq
        found = json.loads(fetch.get("/api/3/action/package_search?"
                                     + urllib.parse.urlencode(search)))
        names = [d["name"] for d in found["result"]["results"]][:args.datasets]
    except Exception as e:  # noqa: BLE001
        errors += 1
        documents.append({"document": "package_search", "error": str(e)})
    for fmt in formats:
        check("catalog.%s" % fmt, "/catalog.%s%s" % (fmt, catalog_query), fmt)
    for name in names:
        for fmt in formats:
            check("%s.%s" % (name, fmt),
                  "/dataset/%s.%s%s" % (urllib.parse.quote(name), fmt, query), fmt)

    total = sum(len(d.get("violations", [])) for d in documents)
    for d in documents:
        if "error" in d:
            print("ERROR  %s: %s" % (d["document"], d["error"]))
        elif d["violations"]:
            print("FAIL   %s: %d violations" % (d["document"], len(d["violations"])))
            for r in d["violations"]:
                print("         %s %s: %s [%s]" % (r["focus"], r["path"], r["message"],
                                                   r["constraint"]))
        else:
            print("ok     %s (%d triples)" % (d["document"], d["triples"]))
    by_doc = collections.Counter(d["document"] for d in documents if d.get("violations"))
    print("shapes: %s; documents: %d; with violations: %d; violations: %d; errors: %d; "
          "requests: %d" % (args.shapes, len(documents), len(by_doc), total, errors, fetch.sent))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"base_url": fetch.base, "shapes": args.shapes, "formats": formats,
                       "datasets": names, "violations": total, "errors": errors,
                       "documents": documents}, f, indent=2)
    if errors:
        return 2
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
