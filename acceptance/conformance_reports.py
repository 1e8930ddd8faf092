"""The conformance suite's read-only mode against a running server, checked from outside.

Runs `catalog-conformance --read-only` twice (anonymous, then with the sysadmin's token) against
the acceptance server, with every report format, and checks:

- it exits 0 and its JSON report is what docs/CONFORMANCE-REPORT.md describes;
- its JUnit XML validates against junit-10.xsd, the JUnit schema CI tools use (the copy pytest
  ships in its source distribution, fetched from PyPI once into a cache);
- the portal is unchanged: the dataset, organization, group and user lists and the activity
  stream read through the API (as the sysadmin) before and after are the same.

Then the DCAT-AP check of a deployment (conformance-tests/dcat-ap/check_deployment.py): on this
server, an organization's datasets (made here, with the metadata a publisher gives) and their
catalog in Turtle, RDF/XML and JSON-LD have no violation; on the static site of
examples/dcat-ap-broken (a deliberately broken profile's output) the violations are named.

Environment: CKAN_URL, CKAN_SYSADMIN_TOKEN, CONFORMANCE_BIN.
"""
import json
import os
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import requests
import xmlschema

URL = os.environ["CKAN_URL"].rstrip("/")
ADMIN = os.environ["CKAN_SYSADMIN_TOKEN"]
BIN = os.environ["CONFORMANCE_BIN"]
PYTEST = "8.3.5"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "catalog-junit-xsd"

checks = failures = 0


def check(what, ok, detail=""):
    global checks, failures
    checks += 1
    if ok:
        print(f"ok    {what}")
    else:
        failures += 1
        print(f"FAIL  {what}: {str(detail)[:800]}")


def junit_xsd():
    """junit-10.xsd from pytest's sdist (testing/example_scripts/), cached."""
    xsd = CACHE / f"pytest-{PYTEST}-junit-10.xsd"
    if not xsd.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                 "--no-binary", ":all:", f"pytest=={PYTEST}", "-d", tmp],
                check=True)
            with tarfile.open(Path(tmp) / f"pytest-{PYTEST}.tar.gz") as tar:
                member = tar.getmember(f"pytest-{PYTEST}/testing/example_scripts/junit-10.xsd")
                xsd.write_bytes(tar.extractfile(member).read())
    return xsd


def action(action_name, **params):
    r = requests.post(f"{URL}/api/3/action/{action_name}", json=params,
                      headers={"Authorization": ADMIN}, timeout=60)
    r.raise_for_status()
    return r.json()["result"]


def portal_state():
    return {
        "datasets": action("package_list"),
        "private": action("package_search", include_private=True, rows=1000,
                          fl="id,name,metadata_modified")["results"],
        "organizations": action("organization_list", all_fields=True),
        "groups": action("group_list", all_fields=True),
        "users": [u["name"] for u in action("user_list")],
        "activity": action("recently_changed_packages_activity_list", limit=100),
    }


def run_read_only(tmp, label, token):
    out = {fmt: Path(tmp) / f"{label}.{ext}" for fmt, ext in
           [("json", "json"), ("junit", "xml"), ("html", "html")]}
    args = [BIN, "--base-url", URL, "--read-only", "--rate", "50",
            "--json", str(out["json"]), "--junit", str(out["junit"]), "--html", str(out["html"])]
    env = dict(os.environ)
    env.pop("CATALOG_TOKEN", None)
    if token:
        args += ["--token", token,
                 "--assume", "catalogext.dcat.enable_content_negotiation=true"]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    check(f"{label}: catalog-conformance --read-only exits 0", proc.returncode == 0,
          proc.stdout[-2000:] + proc.stderr[-2000:])
    report = json.loads(out["json"].read_text())
    check(f"{label}: the JSON report names its schema",
          report.get("schema") == "catalog-conformance-report/1", report.get("schema"))
    totals = report.get("totals", {})
    check(f"{label}: no step failed", totals.get("failed") == 0, totals)
    check(f"{label}: most steps passed", totals.get("passed", 0) >= 25, totals)
    check(f"{label}: every step has the documented fields",
          all(set(s) >= {"scenario", "step", "action", "outcome", "message", "status",
                         "duration_ms", "profile_reason"} for s in report.get("steps", [])))
    check(f"{label}: the report says it was read-only", report.get("read_only") is True)
    try:
        xmlschema.XMLSchema(str(junit_xsd())).validate(str(out["junit"]))
        check(f"{label}: the JUnit XML is valid against junit-10.xsd", True)
    except Exception as e:  # noqa: BLE001 - any validation error is the failure
        check(f"{label}: the JUnit XML is valid against junit-10.xsd", False, e)
    html = out["html"].read_text()
    check(f"{label}: the HTML page leads with the verdict", 'class="verdict passed"' in html)
    return report


ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / "conformance-tests" / "dcat-ap" / "check_deployment.py"


def dcat_ap_check():
    suffix = os.urandom(4).hex()
    org = f"dcat-ap-check-{suffix}"
    action("organization_create", name=org, title="DCAT-AP check")
    action("group_create", name=f"{org}-group", title="DCAT-AP check group")
    for i in range(3):
        action("package_create", name=f"dcat-ap-{suffix}-{i}", owner_org=org,
               title=f"DCAT-AP dataset {i}", notes="What the data is about.",
               license_id="cc-by", tags=[{"name": "economy"}],
               extras=[{"key": "issued", "value": "2024-05-01"}],
               groups=[{"name": f"{org}-group"}],
               resources=[{"url": f"http://example.org/{i}.csv", "format": "CSV",
                           "name": "Data"}])
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "dcat-ap.json"
        p = subprocess.run([sys.executable, str(CHECK), URL, "--fq", f"organization:{org}",
                            "--datasets", "3", "--rate", "50", "--json", str(report)],
                           capture_output=True, text=True, timeout=600)
        check("DCAT-AP check of this server exits 0", p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:])
        r = json.loads(report.read_text()) if report.exists() else {}
        check("it checked the catalog and 3 datasets in 3 formats (12 documents)",
              len(r.get("documents", [])) == 12, r.get("documents"))
        check("no violation on this server", r.get("violations") == 0, p.stdout[-3000:])

    # The broken deployment: examples/dcat-ap-broken/site served as static files.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    site = ROOT / "examples" / "dcat-ap-broken" / "site"
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                               "127.0.0.1", "--directory", str(site)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            try:
                requests.get(f"http://127.0.0.1:{port}/catalog.ttl", timeout=1)
                break
            except requests.RequestException:
                time.sleep(0.1)
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "broken.json"
            p = subprocess.run([sys.executable, str(CHECK), f"http://127.0.0.1:{port}",
                                "--formats", "ttl", "--json", str(report)],
                               capture_output=True, text=True, timeout=600)
            check("the broken deployment: exit 1", p.returncode == 1, p.stdout + p.stderr)
            r = json.loads(report.read_text()) if report.exists() else {}
            docs = {d["document"]: d for d in r.get("documents", [])}
            broken = docs.get("broken-title.ttl", {}).get("violations", [])
            paths = {v["path"] for v in broken}
            check("the broken dataset's missing title is named",
                  "http://purl.org/dc/terms/title" in paths, broken)
            check("the broken distribution's missing access URL is named",
                  "http://www.w3.org/ns/dcat#accessURL" in paths, broken)
            check("the fine dataset has no violation",
                  docs.get("fine.ttl", {}).get("violations") == [], docs.get("fine.ttl"))
            check("the text report names the document", "FAIL   broken-title.ttl" in p.stdout,
                  p.stdout)
    finally:
        server.terminate()
        server.wait(timeout=10)


def main():
    dcat_ap_check()
    before = portal_state()
    with tempfile.TemporaryDirectory() as tmp:
        anon = run_read_only(tmp, "anonymous", None)
        skipped = [s for s in anon["steps"] if s["outcome"] == "skipped"]
        check("anonymous: only the steps needing content negotiation are skipped",
              all("enable_content_negotiation" in (s["message"] or "") for s in skipped),
              skipped)
        admin = run_read_only(tmp, "sysadmin", ADMIN)
        check("sysadmin: with content negotiation assumed nothing is skipped",
              admin["totals"]["skipped"] == 0, admin["totals"])
    after = portal_state()
    for key in before:
        check(f"the read-only runs left the {key} unchanged", before[key] == after[key],
              f"before {str(before[key])[:300]} after {str(after[key])[:300]}")
    print(f"conformance reports: {checks} checks, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
