#!/usr/bin/env python3
"""CKAN acceptance: the DCAT RDF endpoints (ckanext-dcat compatible), checked end to end.

Data is created with the real `ckanapi` client; every RDF answer is parsed with rdflib (an RDF
stack independent of the server's own) and DCAT-AP conformance is judged by pySHACL through the
vendored validator (conformance-tests/dcat-ap/validate.py) with the official SEMIC shapes.
Nothing here knows it is talking to `catalog` rather than CKAN with ckanext-dcat.

Environment: as ckanapi_foundation.py (CKAN_URL and the sysadmin, editor, member and outsider
tokens; CKAN_MEMBER_USER names the member's user, default `acceptance_member`). The site must:

* have the RDF endpoints on, with the default profile `euro_dcat_ap_3`;
* use CKAN_URL as its catalog URI (`site_url`, no `base_uri`), or set CKAN_DCAT_CATALOG_URI;
* serve 5 datasets per catalog page (CKAN_DCAT_PER_PAGE, default 5);
* have content negotiation on.

Every query of the catalog is restricted to tags this run creates (random suffix), except the
format round trip of the plain catalog, so other data on the site does not matter. The
scheming-style object fields (`contact`, `publisher`, `temporal_coverage`, ... as lists of
objects) are not covered: they need a scheming dataset schema. Exit status 1 if any check
failed.
"""

import json
import os
import re
import subprocess
import sys
import time
import uuid
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urljoin, urlsplit

import requests
from ckanapi import RemoteCKAN
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.compare import graph_diff, isomorphic, to_isomorphic
from rdflib.namespace import RDF, XSD

from harness import Report, run_sections

URL = os.environ["CKAN_URL"].rstrip("/")
CATALOG_URI = os.environ.get("CKAN_DCAT_CATALOG_URI", URL)
BASE = CATALOG_URI.rstrip("/")
PER_PAGE = int(os.environ.get("CKAN_DCAT_PER_PAGE", "5"))
SUFFIX = uuid.uuid4().hex[:8]
ORG = f"dcat-org-{SUFFIX}"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VALIDATE = os.path.join(ROOT, "conformance-tests", "dcat-ap", "validate.py")
TIMEOUT = 60

TOKENS = {role: os.environ[f"CKAN_{role.upper()}_TOKEN"]
          for role in ("sysadmin", "editor", "member", "outsider")}
sysadmin = RemoteCKAN(URL, apikey=TOKENS["sysadmin"])
MEMBER_USER = os.environ.get("CKAN_MEMBER_USER", "acceptance_member")

DCAT = Namespace("http://www.w3.org/ns/dcat#")
DCT = Namespace("http://purl.org/dc/terms/")
SCHEMA = Namespace("http://schema.org/")
HYDRA = Namespace("http://www.w3.org/ns/hydra/core#")

# extension -> (exact Content-Type, rdflib parser)
FORMATS = {
    "rdf": ("application/rdf+xml", "xml"),
    "xml": ("application/rdf+xml", "xml"),
    "ttl": ("text/turtle", "turtle"),
    "n3": ("text/n3", "n3"),
    "jsonld": ("application/ld+json", "json-ld"),
}
PARSER_OF_TYPE = {ct: p for ct, p in FORMATS.values()}

S = {}  # filled in as the run goes


R = Report()


# --- HTTP and RDF helpers ------------------------------------------------------------------
def get(path, params=None, accept=None, token=None):
    headers = {}
    if accept is not None:
        headers["Accept"] = accept
    if token is not None:
        headers["Authorization"] = token
    url = path if path.startswith("http") else URL + path
    return requests.get(url, params=params, headers=headers, timeout=TIMEOUT)


def ctype(r):
    return r.headers.get("Content-Type")


def parse(body, parser):
    g = Graph()
    g.parse(data=body, format=parser)
    return g


def fetch_rdf(name, path, ext, params=None, accept=None, token=None):
    """GETs an RDF document; checks 200, the exact Content-Type and that rdflib parses it.
    Returns (graph, raw bytes) or (None, None)."""
    want_type, parser = FORMATS[ext]
    r = get(path, params=params, accept=accept, token=token)
    if not R.check(f"{name}: 200", r.status_code == 200, (r.status_code, r.text[:300])):
        return None, None
    R.eq(f"{name}: Content-Type", ctype(r), want_type)
    try:
        g = parse(r.content, parser)
    except Exception as e:  # noqa: BLE001
        R.check(f"{name}: parses as {parser}", False, f"{type(e).__name__}: {e}; body {r.text[:300]}")
        return None, None
    R.check(f"{name}: parses as {parser} (non-empty)", len(g) > 0, len(g))
    return g, r.content


def check_isomorphic(name, a, b):
    if a is None or b is None:
        return R.check(name, False, "a graph is missing")
    if isomorphic(a, b):
        return R.check(name, True)
    _, only_a, only_b = graph_diff(to_isomorphic(a), to_isomorphic(b))
    fmt = lambda g: sorted(f"{s.n3()} {p.n3()} {o.n3()}" for s, p, o in g)[:15]  # noqa: E731
    return R.check(name, False, {"only in first": fmt(only_a), "only in second": fmt(only_b)})


def api_error(name, r, status, err_type, message_part=None):
    """Checks a CKAN-style JSON error answer."""
    R.eq(f"{name}: status", r.status_code, status)
    try:
        body = r.json()
    except ValueError:
        return R.check(f"{name}: JSON error body", False, (ctype(r), r.text[:300]))
    err = body.get("error") if isinstance(body, dict) else None
    R.check(f"{name}: success false", isinstance(body, dict) and body.get("success") is False, body)
    R.eq(f"{name}: error.__type", (err or {}).get("__type"), err_type)
    if message_part is not None:
        msg = (err or {}).get("message")
        R.check(f"{name}: message contains {message_part!r}", isinstance(msg, str) and message_part in msg, err)
    return True


def datasets_of(g):
    return set(g.subjects(RDF.type, DCAT.Dataset)) if g is not None else set()


def dataset_iri(ds):
    return URIRef(f"{BASE}/dataset/{ds['id']}")


def shacl(name, data, parser, shapes):
    """Runs the vendored validator on `data`; 0 sh:Violation results expected."""
    if data is None:
        return R.check(f"{name}: SHACL {shapes}", False, "no document")
    p = subprocess.run([sys.executable, VALIDATE, "-s", shapes, "-f", parser, "-v", "-"],
                       input=data, capture_output=True, timeout=600)
    out = p.stdout.decode("utf-8", "replace")
    m = re.search(r"^violations: (\d+)$", out, re.M)
    violations = int(m.group(1)) if m else None
    ok = p.returncode == 0 and violations == 0
    if not ok:
        lines = [ln for ln in out.splitlines() if ln.startswith("Violation")]
        print(f"    SHACL {shapes} on {name}: exit {p.returncode}, violations {violations}")
        for ln in lines[:40]:
            print("      " + ln)
        err = p.stderr.decode("utf-8", "replace").strip()
        if err and (p.returncode == 2 or not lines):
            print("      stderr: " + err[-1500:])
    return R.check(f"{name}: SHACL {shapes} 0 violations", ok,
                   f"exit {p.returncode}, violations {violations}")


def url_key(u):
    """A paging URL made comparable: (URL without query, sorted query pairs)."""
    s = str(u)
    return s.split("?", 1)[0], sorted(parse_qsl(urlsplit(s).query, keep_blank_values=True))


def page_url(path, params, page):
    return url_key(f"{BASE}{path}?" + "&".join(f"{k}={v}" for k, v in params) + f"&page={page}")


def create(**kw):
    kw.setdefault("owner_org", ORG)
    kw.setdefault("notes", f"Description of {kw.get('title', kw['name'])}.")
    return sysadmin.action.package_create(**kw)


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        if tag == "link":
            self.links.append(dict(attrs))


# --- the fully populated dataset ----------------------------------------------------------
EU = "http://publications.europa.eu/resource/authority"
IANA = "https://www.iana.org/assignments/media-types"
POLYGON = {"type": "Polygon", "coordinates": [[[1.1871, 41.0786], [1.1871, 41.1655],
                                              [1.3011, 41.1655], [1.3011, 41.0786],
                                              [1.1871, 41.0786]]]}


def full_dataset_dict():
    extras = {
        "identifier": f"urn:example:air-quality:{SUFFIX}",
        "version_notes": "Second release: station 12 recalibrated.",
        "frequency": f"{EU}/frequency/MONTHLY",
        "dcat_type": f"{EU}/dataset-type/STATISTICAL",
        "issued": "2024-01-15",
        "modified": "2024-06-30T12:00:00",
        "language": [f"{EU}/language/ENG", f"{EU}/language/CAT"],
        "theme": [f"{EU}/data-theme/ENVI", f"{EU}/data-theme/HEAL"],
        "conforms_to": ["https://example.org/standards/air-quality-1.0"],
        "documentation": ["https://example.org/docs/air-quality"],
        "related_resource": ["https://example.org/related/air-stations"],
        "has_version": ["https://example.org/dataset/air-quality-v3"],
        "is_version_of": ["https://example.org/dataset/air-quality"],
        "source": ["https://example.org/dataset/raw-air-readings"],
        "sample": ["https://example.org/samples/air-quality-sample.csv"],
        "alternate_identifier": [f"AQ-{SUFFIX}"],
        "access_rights": f"{EU}/access-right/PUBLIC",
        "provenance": "Collected by the city's automated measurement stations.",
        "contact_uri": "https://example.org/contacts/air-desk",
        "contact_name": "Air quality desk",
        "contact_email": "air@example.org",
        "publisher_uri": "https://example.org/agents/environment-agency",
        "publisher_name": "Environment Agency",
        "publisher_email": "info@environment.example.org",
        "publisher_url": "https://environment.example.org",
        "publisher_type": "http://purl.org/adms/publishertype/NationalAuthority",
        "publisher_identifier": "EA-001",
        "creator_uri": "https://example.org/agents/air-lab",
        "creator_name": "Air Laboratory",
        "creator_email": "lab@example.org",
        "creator_url": "https://lab.example.org",
        "creator_type": "http://purl.org/adms/publishertype/ResearchCentre",
        "creator_identifier": "LAB-7",
        "temporal_start": "2020-01-01",
        "temporal_end": "2023-12-31",
        "spatial_uri": f"{EU}/country/ESP",
        "spatial_text": "Tarragona",
        "spatial": json.dumps(POLYGON),
        "spatial_bbox": json.dumps(POLYGON),
        "spatial_centroid": json.dumps({"type": "Point", "coordinates": [1.2441, 41.1220]}),
        "temporal_resolution": "PT15M",
        "spatial_resolution_in_meters": "30",
        "is_referenced_by": ["https://doi.org/10.1234/air-quality-paper"],
        "applicable_legislation": ["http://data.europa.eu/eli/reg_impl/2023/138/oj"],
        "hvd_category": ["http://data.europa.eu/bna/c_dd313021"],
    }

    def resource(n, fmt, mt, body):
        return {
            "name": f"Air quality {n}",
            "description": f"Measurements, {fmt} edition.",
            "url": f"https://example.org/files/air-quality-{n}.{fmt.lower()}",
            "access_url": f"https://example.org/access/air-quality-{n}",
            "download_url": f"https://example.org/files/air-quality-{n}.{fmt.lower()}",
            "format": f"{EU}/file-type/{fmt}",
            "mimetype": f"{IANA}/{mt}",
            "size": 12345 * n,
            "hash": body,
            "hash_algorithm": "http://spdx.org/rdf/terms#checksumAlgorithm_sha1",
            "license": f"{EU}/licence/CC_BY_4_0",
            "status": "http://purl.org/adms/status/Completed",
            "rights": "https://example.org/rights/open",
            "issued": "2024-01-15",
            "modified": "2024-06-30T12:00:00",
            "language": json.dumps([f"{EU}/language/ENG"]),
            "conforms_to": json.dumps(["https://example.org/standards/air-quality-1.0"]),
            "documentation": json.dumps(["https://example.org/docs/air-quality-files"]),
            "availability": "http://data.europa.eu/r5r/availability/stable",
            "compress_format": f"{IANA}/application/gzip",
            "package_format": f"{IANA}/application/x-tar",
            "temporal_resolution": "PT1H",
            "spatial_resolution_in_meters": "30",
            "applicable_legislation": json.dumps(["http://data.europa.eu/eli/reg_impl/2023/138/oj"]),
            "access_services": json.dumps([{
                "uri": f"https://example.org/api/air-quality-{n}",
                "title": "Air quality API",
                "description": "Query the measurements.",
                "endpoint_url": [f"https://example.org/api/air-quality-{n}/v1"],
                "endpoint_description": f"https://example.org/api/air-quality-{n}/openapi.json",
                "license": f"{EU}/licence/CC_BY_4_0",
                "access_rights": f"{EU}/access-right/PUBLIC",
            }]),
        }

    return dict(
        name=f"dcat-full-{SUFFIX}",
        title=f"Air quality measurements {SUFFIX}",
        notes="Hourly air quality measurements (ozone, NO2, PM10) from the city stations.",
        url="https://example.org/air-quality",
        version="2.0.0",
        author="Jane Author",
        author_email="author@example.org",
        maintainer="Max Maintainer",
        maintainer_email="maintainer@example.org",
        license_id="cc-by",
        tags=[{"name": f"dcatfull{SUFFIX}"}, {"name": "air"}, {"name": "Environment"}],
        extras=[{"key": k, "value": json.dumps(v) if isinstance(v, list) else v}
                for k, v in extras.items()],
        resources=[
            resource(1, "CSV", "text/csv", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
            resource(2, "JSON", "application/json", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ],
    )


# --------------------------------------------------------------------------------------------
def section_setup():
    sysadmin.action.organization_create(name=ORG, title=f"DCAT agency {SUFFIX}",
                                        description="Publishes the DCAT acceptance data.")
    sysadmin.action.organization_member_create(id=ORG, username=MEMBER_USER, role="member")
    S["full"] = create(**full_dataset_dict())
    R.check("full dataset created", bool(S["full"].get("id")))
    S["private"] = create(name=f"dcat-private-{SUFFIX}", title=f"Private air data {SUFFIX}",
                          private=True, tags=[{"name": f"dcatq{SUFFIX}"}])


def section_dataset_formats():
    ds = S["full"]
    node = dataset_iri(ds)
    graphs = {}
    for ext in FORMATS:
        g, raw = fetch_rdf(f"dataset .{ext}", f"/dataset/{ds['id']}.{ext}", ext)
        graphs[ext] = g
        if ext == "ttl":
            S["full_ttl"] = raw
        if g is None:
            continue
        R.eq(f"dataset .{ext}: the dcat:Dataset nodes", datasets_of(g), {node})
        R.eq(f"dataset .{ext}: dct:title", [str(t) for t in g.objects(node, DCT.title)], [ds["title"]])
        R.eq(f"dataset .{ext}: dct:description",
             [str(t) for t in g.objects(node, DCT.description)], [ds["notes"]])
    for ext in FORMATS:
        if ext != "ttl":
            check_isomorphic(f"dataset .{ext} isomorphic to .ttl", graphs[ext], graphs["ttl"])
    g = graphs["ttl"]
    if g is not None:
        R.eq("dataset: one dcat:distribution per resource", len(set(g.objects(node, DCAT.distribution))), 2)
        R.eq("dataset: dcat:keyword = tags", sorted(str(k) for k in g.objects(node, DCAT.keyword)),
             sorted(t["name"] for t in ds["tags"]))
    S["full_graph"] = g
    g, _ = fetch_rdf("dataset by name .ttl", f"/dataset/{ds['name']}.ttl", "ttl")
    check_isomorphic("dataset by name isomorphic to by id", g, graphs["ttl"])


def section_shacl():
    ds = S["full"]
    shacl("dataset .ttl (euro_dcat_ap_3)", S.get("full_ttl"), "turtle", "3-core")
    _, raw = fetch_rdf("catalog .ttl of the full dataset", "/catalog.ttl", "ttl",
                       params={"fq": f"tags:dcatfull{SUFFIX}"})
    shacl("catalog .ttl (euro_dcat_ap_3)", raw, "turtle", "3-core")
    g, raw = fetch_rdf("dataset .ttl profiles=euro_dcat_ap_2", f"/dataset/{ds['id']}.ttl", "ttl",
                       params={"profiles": "euro_dcat_ap_2"})
    if g is not None:
        R.eq("euro_dcat_ap_2: the dcat:Dataset nodes", datasets_of(g), {dataset_iri(ds)})
    shacl("dataset .ttl (euro_dcat_ap_2)", raw, "turtle", "2-core")
    _, raw = fetch_rdf("catalog .ttl profiles=euro_dcat_ap_2", "/catalog.ttl", "ttl",
                       params={"fq": f"tags:dcatfull{SUFFIX}", "profiles": "euro_dcat_ap_2"})
    shacl("catalog .ttl (euro_dcat_ap_2)", raw, "turtle", "2-core")


def section_profiles():
    ds = S["full"]
    node = dataset_iri(ds)
    g, _ = fetch_rdf("profiles=euro_dcat_ap_3,schemaorg", f"/dataset/{ds['id']}.ttl", "ttl",
                     params={"profiles": "euro_dcat_ap_3,schemaorg"})
    if g is not None:
        types = set(g.objects(node, RDF.type))
        R.check("euro_dcat_ap_3,schemaorg: node is dcat:Dataset and schema:Dataset",
                {DCAT.Dataset, SCHEMA.Dataset} <= types, sorted(types))
    g, _ = fetch_rdf("profiles=schemaorg .jsonld", f"/dataset/{ds['id']}.jsonld", "jsonld",
                     params={"profiles": "schemaorg"})
    if g is not None:
        R.eq("schemaorg: the schema:Dataset nodes", set(g.subjects(RDF.type, SCHEMA.Dataset)), {node})
        R.eq("schemaorg: schema:name", [str(t) for t in g.objects(node, SCHEMA.name)], [ds["title"]])
        R.eq("schemaorg: schema:description", [str(t) for t in g.objects(node, SCHEMA.description)], [ds["notes"]])
    r = get(f"/dataset/{ds['id']}.ttl", params={"profiles": "nope"})
    api_error("dataset profiles=nope", r, 409, "Validation Error", "Unknown RDF profiles: nope")


def section_dataset_errors():
    r = get(f"/dataset/{uuid.uuid4()}.ttl")
    api_error("dataset random uuid", r, 404, "Not Found Error")
    r = get(f"/dataset/{S['full']['id']}.csv")
    R.eq("dataset unknown extension .csv: status", r.status_code, 404)
    priv = S["private"]
    r = get(f"/dataset/{priv['id']}.ttl")
    api_error("private dataset anonymous", r, 403, "Authorization Error")
    r = get(f"/dataset/{priv['id']}.ttl", token=TOKENS["outsider"])
    R.eq("private dataset outsider: status", r.status_code, 403)
    g, _ = fetch_rdf("private dataset as org member", f"/dataset/{priv['id']}.ttl", "ttl",
                     token=TOKENS["member"])
    if g is not None:
        R.eq("private dataset as member: the dcat:Dataset nodes", datasets_of(g), {dataset_iri(priv)})


def normalised(g, ext):
    """The graph with this format's catalog path replaced, so paging IRIs/literals compare."""
    def n(t):
        if isinstance(t, (URIRef, Literal)) and f"/catalog.{ext}" in str(t):
            s = str(t).replace(f"/catalog.{ext}", "/catalog.FORMAT")
            return URIRef(s) if isinstance(t, URIRef) else Literal(s, lang=t.language, datatype=t.datatype)
        return t
    out = Graph()
    for s, p, o in g:
        out.add((n(s), p, n(o)))
    return out


def section_catalog():
    graphs = {}
    for ext in FORMATS:
        g, _ = fetch_rdf(f"catalog .{ext}", f"/catalog.{ext}", ext)
        graphs[ext] = normalised(g, ext) if g is not None else None
        if g is not None:
            R.check(f"catalog .{ext}: catalog node is dcat:Catalog",
                    (URIRef(CATALOG_URI), RDF.type, DCAT.Catalog) in g,
                    sorted(g.subjects(RDF.type, DCAT.Catalog)))
    for ext in FORMATS:
        if ext != "ttl":
            check_isomorphic(f"catalog .{ext} isomorphic to .ttl", graphs[ext], graphs["ttl"])

    # Search: three public datasets and the private one under tag dcatq<suffix>.
    tq, te = f"dcatq{SUFFIX}", f"dcateco{SUFFIX}"
    a = create(name=f"dcat-first-{SUFFIX}", title=f"Fïrst catalog dataset {SUFFIX}",
               tags=[{"name": tq}, {"name": te}])
    time.sleep(1.2)
    b = create(name=f"dcat-second-{SUFFIX}", title=f"Second catalog dataset {SUFFIX}",
               tags=[{"name": tq}, {"name": te}])
    time.sleep(1.2)
    c = create(name=f"dcat-third-{SUFFIX}", title=f"Third catalog dataset {SUFFIX}",
               tags=[{"name": tq}])
    time.sleep(1.2)  # the modified_since check below is about filtering, not the current second
    want = lambda *ds: {dataset_iri(d) for d in ds}  # noqa: E731

    g, _ = fetch_rdf("catalog fq=tags (3 public + 1 private)", "/catalog.ttl", "ttl",
                     params={"fq": f"tags:{tq}"})
    R.eq("catalog fq=tags: datasets (private excluded)", datasets_of(g), want(a, b, c))
    if g is not None:
        R.eq("catalog fq=tags: catalog dcat:dataset links",
             set(g.objects(URIRef(CATALOG_URI), DCAT.dataset)), want(a, b, c))
    g, _ = fetch_rdf("catalog fq=tags (2)", "/catalog.ttl", "ttl", params={"fq": f"tags:{te}"})
    R.eq("catalog fq restricts", datasets_of(g), want(a, b))
    g, _ = fetch_rdf("catalog q=Fïrst", "/catalog.ttl", "ttl", params={"q": "Fïrst", "fq": f"tags:{tq}"})
    R.eq("catalog q=Fïrst (UTF-8) finds 1", datasets_of(g), want(a))
    b_show = sysadmin.action.package_show(id=b["id"])
    g, _ = fetch_rdf("catalog modified_since", "/catalog.ttl", "ttl",
                     params={"modified_since": b_show["metadata_modified"], "fq": f"tags:{tq}"})
    R.eq("catalog modified_since restricts", datasets_of(g), want(b, c))

    # A harvester asking for what changed since a moment ago: the dataset modified within the
    # current second is included (metadata_modified:[<D> TO NOW], NOW at full precision).
    while time.time() % 1 > 0.2:  # start early in a second, so create + request share it
        time.sleep(0.05)
    tn = f"dcatnow{SUFFIX}"
    d = create(name=f"dcat-now-{SUFFIX}", title=f"Just modified {SUFFIX}", tags=[{"name": tn}])
    g, _ = fetch_rdf("catalog modified_since a moment ago", "/catalog.ttl", "ttl",
                     params={"modified_since": d["metadata_modified"], "fq": f"tags:{tn}"})
    R.eq("catalog modified_since includes a dataset modified this second", datasets_of(g), want(d))

    for bad in ("a", "0", "-1"):
        api_error(f"catalog page={bad}", get("/catalog.ttl", params={"page": bad}), 409, "Validation Error")
    api_error("catalog modified_since=not-a-date", get("/catalog.ttl", params={"modified_since": "not-a-date"}),
              409, "Validation Error")
    api_error("catalog profiles=nope", get("/catalog.ttl", params={"profiles": "nope"}),
              409, "Validation Error", "Unknown RDF profiles: nope")


def paging_node(name, g, path, params, page):
    """The hydra:PagedCollection node of a catalog page; checks its IRI."""
    nodes = list(g.subjects(RDF.type, HYDRA.PagedCollection))
    if not R.check(f"{name}: one hydra:PagedCollection", len(nodes) == 1,
                   f"{len(nodes)} paging nodes, {len(datasets_of(g))} datasets, "
                   f"{len(g)} triples, hydra triples: {[t for t in g if str(t[1]).startswith(str(HYDRA))]}"):
        return None
    node = nodes[0]
    R.check(f"{name}: paging node IRI = current page URL",
            isinstance(node, URIRef) and url_key(node) == page_url(path, params, page), str(node))
    return node


def link(name, g, node, short, want):
    """Both hydra:<short>Page and hydra:<short> carry `want` (a url_key) or are both absent."""
    for pred in (HYDRA[short + "Page"], HYDRA[short]):
        vals = list(g.objects(node, pred))
        if want is None:
            R.eq(f"{name}: no hydra:{pred.split('#')[-1]}", vals, [])
        else:
            R.check(f"{name}: hydra:{pred.split('#')[-1]}",
                    len(vals) == 1 and isinstance(vals[0], Literal) and url_key(vals[0]) == want,
                    [str(v) for v in vals])


def section_paging():
    tag = f"dcatpage{SUFFIX}"
    made = []
    for i in range(12):
        made.append(create(name=f"dcat-page-{i:02d}-{SUFFIX}", title=f"Paged dataset {i} {SUFFIX}",
                           tags=[{"name": tag}]))
    newest_first = [dataset_iri(d) for d in reversed(made)]
    path, params = "/catalog.ttl", [("fq", f"tags:{tag}")]
    last = -(-12 // PER_PAGE)
    seen = set()
    for page in range(1, last + 2):
        name = f"catalog page {page}"
        g, _ = fetch_rdf(name, path, "ttl", params=params + ([("page", str(page))] if page > 1 else []))
        if g is None:
            continue
        want = set(newest_first[(page - 1) * PER_PAGE: page * PER_PAGE])
        R.eq(f"{name}: datasets (metadata_modified desc)", datasets_of(g), want)
        seen |= datasets_of(g)
        node = paging_node(name, g, path, params, page)
        if node is None:
            continue
        for pred, n in ((HYDRA.totalItems, 12), (HYDRA.itemsPerPage, PER_PAGE)):
            v = g.value(node, pred)
            R.check(f"{name}: hydra:{pred.split('#')[-1]} {n} (xsd:integer)",
                    isinstance(v, Literal) and v.datatype == XSD.integer and int(v) == n, v)
        link(name, g, node, "first", page_url(path, params, 1))
        link(name, g, node, "last", page_url(path, params, last))
        link(name, g, node, "next", page_url(path, params, page + 1) if page < last else None)
        prev = None if page == 1 else page_url(path, params, min(page - 1, last))
        link(name, g, node, "previous", prev)
    R.eq("paging: pages cover the 12 datasets", seen, set(newest_first))

    # Unknown parameters are dropped from the paging links; the known ones are kept.
    g, _ = fetch_rdf("catalog extra_param", path, "ttl", params=params + [("extra_param", "test"), ("page", "2")])
    if g is not None:
        node = paging_node("catalog extra_param", g, path, params, 2)
        if node is not None:
            texts = [str(node)] + [str(o) for o in g.objects(node, None) if isinstance(o, Literal)]
            R.check("catalog extra_param: dropped from paging URLs",
                    not any("extra_param" in t for t in texts), texts)
            link("catalog extra_param", g, node, "first", page_url(path, params, 1))
    kept = [("modified_since", "2000-01-01")] + params
    g, _ = fetch_rdf("catalog modified_since paging", path, "ttl", params=kept)
    if g is not None:
        node = paging_node("catalog modified_since paging", g, path, kept, 1)
        if node is not None:
            link("catalog modified_since paging", g, node, "next", page_url(path, kept, 2))


def section_negotiation():
    ds = S["full"]
    path = f"/dataset/{ds['id']}"
    g_ttl, _ = fetch_rdf("conneg reference .ttl", f"{path}.ttl", "ttl")
    g, _ = fetch_rdf("conneg Accept: text/turtle", path, "ttl", accept="text/turtle")
    check_isomorphic("conneg text/turtle = .ttl", g, g_ttl)
    g, _ = fetch_rdf("conneg Accept with q values", path, "ttl",
                     accept="text/csv;q=1.0, text/turtle;q=0.6, application/ld+json;q=0.3")
    check_isomorphic("conneg q values = .ttl", g, g_ttl)
    g, _ = fetch_rdf("conneg Accept: rdf+xml, ld+json", path, "rdf",
                     accept="application/rdf+xml, application/ld+json")
    check_isomorphic("conneg rdf+xml = .ttl", g, g_ttl)
    g, _ = fetch_rdf("conneg Accept: application/ld+json", path, "jsonld", accept="application/ld+json")
    check_isomorphic("conneg ld+json = .ttl", g, g_ttl)

    for accept in ("text/html", "*/*", "image/gif", "image/gif;q=1.0, text/html;q=0.8, text/turtle;q=0.6"):
        name = f"conneg Accept: {accept}"
        r = get(path, accept=accept)
        if not R.check(f"{name}: 200", r.status_code == 200, (r.status_code, r.text[:200])):
            continue
        R.check(f"{name}: text/html", (ctype(r) or "").startswith("text/html"), ctype(r))
        if accept != "text/html":
            continue
        p = Links()
        p.feed(r.text)
        alt = {ln.get("type"): ln.get("href") for ln in p.links
               if "alternate" in (ln.get("rel") or "").split() and ln.get("type") in PARSER_OF_TYPE}
        R.eq("dataset page: rel=alternate types", sorted(alt), sorted(PARSER_OF_TYPE))
        for typ, href in sorted(alt.items()):
            target = urljoin(URL + "/", href or "")
            ok_path = re.search(rf"/dataset/({re.escape(ds['name'])}|{ds['id']})\.(rdf|xml|ttl|n3|jsonld)$",
                                urlsplit(target).path)
            R.check(f"dataset page: alternate {typ} href is /dataset/<name or id>.<ext>", ok_path, href)
            rr = get(target)
            R.check(f"dataset page: alternate {typ} answers 200 with that type",
                    rr.status_code == 200 and ctype(rr) == typ, (rr.status_code, ctype(rr)))

    g, _ = fetch_rdf("conneg GET / Accept: text/turtle", "/", "ttl", accept="text/turtle")
    if g is not None:
        R.check("conneg GET /: the catalog", (URIRef(CATALOG_URI), RDF.type, DCAT.Catalog) in g,
                sorted(g.subjects(RDF.type, DCAT.Catalog)))


SECTIONS = [
    section_setup,
    section_dataset_formats,
    section_shacl,
    section_profiles,
    section_dataset_errors,
    section_catalog,
    section_paging,
    section_negotiation,
]


def main():
    title = f"DCAT RDF acceptance against {URL} (catalog URI {CATALOG_URI}, suffix {SUFFIX})"
    # Nothing can run without the data the setup creates.
    return run_sections(R, title, SECTIONS, stop=lambda section, _e: section == "setup")


if __name__ == "__main__":
    sys.exit(main())
