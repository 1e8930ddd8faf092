#!/usr/bin/env python3
"""CKAN acceptance: harvesting driven by the real `ckanapi` client, as against CKAN 2.12 with
ckanext-harvest and ckanext-dcat's harvesters.

The server harvests itself (the runner allows loopback with `catalog.harvest.allow_hosts`):
a `dcat_rdf` source reads this catalog's own `/catalog.ttl` filtered to one organization
(several Hydra pages at 5 datasets a page), a `ckan` source reads its Action API with an
organization filter. Checks: the jobs finish with ckanext-harvest's stats, harvested datasets
keep the source's URIs and their RDF (parsed with rdflib) is the source's graph, a second
run writes nothing, a dataset deleted at the source is deleted, and CKAN's refusals.
Same environment as ckanapi_foundation.py. Exit status 1 if any check failed.
"""

import os
import sys
import time
import urllib.parse
import urllib.request
import uuid

import rdflib
from rdflib.compare import isomorphic
from ckanapi import NotAuthorized, NotFound, RemoteCKAN, ValidationError

URL = os.environ["CKAN_URL"].rstrip("/")
SUFFIX = uuid.uuid4().hex[:8]
SRC_ORG = f"accharv-src-{SUFFIX}"
MIRROR = f"accharv-mirror-{SUFFIX}"
N = 12

sysadmin = RemoteCKAN(URL, apikey=os.environ["CKAN_SYSADMIN_TOKEN"])
outsider = RemoteCKAN(URL, apikey=os.environ["CKAN_OUTSIDER_TOKEN"])
anon = RemoteCKAN(URL)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Report  # noqa: E402 - the shared checks, found beside this script

report = Report()
check = report.check


def graph(url):
    """The RDF at an address, read as an old script would (urllib) and parsed by rdflib."""
    with urllib.request.urlopen(url, timeout=30) as r:
        return rdflib.Graph().parse(data=r.read(), format="turtle")


def finished(job):
    deadline = time.time() + 120
    while time.time() < deadline:
        job = sysadmin.action.harvest_job_show(id=job["id"])
        if job["status"] == "Finished":
            return job
        time.sleep(0.5)
    check("job finished within 120 s", False, job)
    return job


sysadmin.action.organization_create(name=SRC_ORG, title="Source agency")
sysadmin.action.organization_create(name=MIRROR)
originals = []
for i in range(N):
    originals.append(sysadmin.action.package_create(
        name=f"accharv-{SUFFIX}-{i}", title=f"Harvest me {i}", owner_org=SRC_ORG,
        notes=f"Dataset number {i}", tags=[{"name": "harvest-acceptance"}],
        extras=[{"key": "contact_email", "value": "desk@example.org"}],
        resources=[{"name": "page", "url": f"https://example.org/{i}.html", "format": "HTML"}]))

info = anon.action.harvesters_info_show()
check("harvesters listed", {"ckan", "dcat_rdf", "dcat_json"} <= {h["name"] for h in info}, info)
report.raises("unknown source type", ValidationError,
              lambda: sysadmin.action.harvest_source_create(
                  name=f"bad-{SUFFIX}", url=URL + "/catalog.ttl", source_type="oai",
                  owner_org=MIRROR))

# --- dcat_rdf: this catalog's RDF, one organization, paged ---------------------------------
catalog_url = URL + "/catalog.ttl?" + urllib.parse.urlencode({"fq": f"organization:{SRC_ORG}"})
rdf_source = sysadmin.action.harvest_source_create(
    name=f"rdf-{SUFFIX}", title="Our own RDF", url=catalog_url, source_type="dcat_rdf",
    owner_org=MIRROR, frequency="MANUAL")
check("source is a harvest dataset", rdf_source["type"] == "harvest", rdf_source["type"])
report.raises("outsider may not run it", NotAuthorized,
              lambda: outsider.action.harvest_job_create(source_id=rdf_source["id"]))
job = finished(sysadmin.action.harvest_job_create(source_id=rdf_source["id"]))
check("dcat_rdf added every dataset", job["stats"]["added"] == N, job["stats"])
check("no errors", job["stats"]["errored"] == 0 and job["gather_error_summary"] == [], job)
harvested = sysadmin.action.package_search(fq=f"harvest_source_id:{rdf_source['id']}", rows=100)
check("harvested datasets searchable by source", harvested["count"] == N, harvested["count"])
by_uri = {}
for d in harvested["results"]:
    extras = {e["key"]: e["value"] for e in d.get("extras", [])}
    by_uri[extras.get("uri")] = d
    check("harvest extras", extras.get("harvest_source_title") == "Our own RDF", extras)
for o in originals[:3]:
    uri = f"{URL}/dataset/{o['id']}"
    mine = by_uri.get(uri)
    check(f"URI kept for {o['name']}", mine is not None, sorted(k for k in by_uri if k))
    if mine:
        same = isomorphic(graph(uri + ".ttl"), graph(f"{URL}/dataset/{mine['id']}.ttl"))
        check(f"RDF of {o['name']} is the source's graph", same)
        obj = anon.action.harvest_object_show(dataset_id=mine["id"])
        check("harvest object content", o["title"] in (obj.get("content") or ""), obj.get("guid"))

again = finished(sysadmin.action.harvest_job_create(source_id=rdf_source["id"]))
check("second run writes nothing", again["stats"]["added"] == 0 and again["stats"]["updated"] == 0
      and again["stats"]["not modified"] == N, again["stats"])

sysadmin.action.package_delete(id=originals[0]["id"])
sysadmin.action.package_patch(id=originals[1]["id"], notes="Changed at the source")
third = finished(sysadmin.action.harvest_job_create(source_id=rdf_source["id"]))
check("deleted and updated", third["stats"]["deleted"] == 1 and third["stats"]["updated"] == 1,
      third["stats"])
report_ = sysadmin.action.harvest_job_report(id=third["id"])
check("report shape", report_ == {"gather_errors": [], "object_errors": {}}, report_)
status = anon.action.harvest_source_show_status(id=rdf_source["id"])
check("source status", status["job_count"] == 3 and status["total_datasets"] == N - 1, status)

# --- ckan: the Action API, one organization ------------------------------------------------
ckan_source = sysadmin.action.harvest_source_create(
    name=f"api-{SUFFIX}", url=URL, source_type="ckan", owner_org=MIRROR,
    config='{"organizations_filter_include": ["%s"], "rows": 4, "api_key": "not-shown"}' % SRC_ORG)
shown = anon.action.harvest_source_show(id=ckan_source["id"])
check("api key not shown to anonymous", "not-shown" not in str(shown), shown.get("config"))
job = finished(sysadmin.action.harvest_job_create(source_id=ckan_source["id"]))
check("ckan harvester added the organization's datasets", job["stats"]["added"] == N - 1,
      job["stats"])
jobs = sysadmin.action.harvest_job_list(source_id=ckan_source["id"])
check("job list", [j["id"] for j in jobs] == [job["id"]], jobs)
report.raises("job of an unknown source", NotFound,
              lambda: sysadmin.action.harvest_job_create(source_id=f"nothing-{SUFFIX}"))

sysadmin.action.harvest_source_clear(id=ckan_source["id"])
left = sysadmin.action.package_search(fq=f"harvest_source_id:{ckan_source['id']}")
check("clear purged its datasets", left["count"] == 0, left["count"])
sysadmin.action.harvest_source_delete(id=ckan_source["id"])
check("deleted source inactive", sysadmin.action.harvest_source_show(id=ckan_source["id"])["active"]
      is False)

print(f"harvest: {report.passed} checks passed, {len(report.failures)} failed")
sys.exit(1 if report.failures else 0)
