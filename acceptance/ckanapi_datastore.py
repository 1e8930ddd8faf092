#!/usr/bin/env python3
"""CKAN acceptance: the DataStore driven by the real `ckanapi` client, and its dump and SQL
search as a plain-HTTP script would use them.

Written as one would against CKAN 2.12 with the datastore and xloader plugins and
`ckan.datastore.sqlsearch.enabled = true`. Same environment as ckanapi_foundation.py
(CKAN_URL and the sysadmin, editor, member and outsider tokens). It creates a table, upserts,
searches, reads it back with SQL and as CSV/JSON dumps, uploads a CSV file that the loader
puts into the DataStore, and deletes; and checks CKAN's refusals on the way.
Exit status 1 if any check failed.
"""

import csv
import io
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

from ckanapi import NotAuthorized, NotFound, RemoteCKAN, ValidationError

URL = os.environ["CKAN_URL"].rstrip("/")
SUFFIX = uuid.uuid4().hex[:8]
ORG = f"accds-{SUFFIX}"

sysadmin = RemoteCKAN(URL, apikey=os.environ["CKAN_SYSADMIN_TOKEN"])
outsider = RemoteCKAN(URL, apikey=os.environ["CKAN_OUTSIDER_TOKEN"])
anon = RemoteCKAN(URL)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Report  # noqa: E402 - the shared checks, found beside this script

report = Report()
check = report.check


def get(path, query=None):
    """GET as an old script would: urllib, no client library. (status, headers, body text)."""
    url = URL + path + ("?" + urllib.parse.urlencode(query) if query else "")
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, dict(r.headers), r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode("utf-8")


sysadmin.action.organization_create(name=ORG)
ds = sysadmin.action.package_create(name=f"accds-{SUFFIX}", owner_org=ORG)
private = sysadmin.action.package_create(name=f"accds-private-{SUFFIX}", owner_org=ORG, private=True)

# A table made for the DataStore (a new resource, no file).
made = sysadmin.action.datastore_create(
    resource={"package_id": ds["id"], "name": "Cities"},
    fields=[{"id": "city", "type": "text"}, {"id": "population", "type": "int"},
            {"id": "area", "type": "numeric"}],
    records=[{"city": "Berlin", "population": 3850809, "area": 891.1},
             {"city": "Hamburg", "population": 1910160, "area": 755.2}],
    primary_key=["city"],
)
rid = made["resource_id"]
check("create answers the fields", [f["id"] for f in made["fields"]] == ["city", "population", "area"],
      made["fields"])
res = anon.action.resource_show(id=rid)
check("resource is datastore_active", res.get("datastore_active") is True, res.get("datastore_active"))
check("resource url_type datastore", res.get("url_type") == "datastore", res.get("url_type"))

sysadmin.action.datastore_upsert(resource_id=rid, method="upsert",
                                 records=[{"city": "Bonn", "population": 336465, "area": 141.1},
                                          {"city": "Berlin", "population": 3850810}])
sysadmin.action.datastore_upsert(resource_id=rid, method="insert",
                                 records=[{"city": "Munich", "population": 1512491, "area": 310.4}])
report.raises("insert of a taken key", ValidationError,
              lambda: sysadmin.action.datastore_upsert(resource_id=rid, method="insert",
                                                       records=[{"city": "Bonn"}]))
report.raises("outsider may not upsert", NotAuthorized,
              lambda: outsider.action.datastore_upsert(resource_id=rid, records=[{"city": "X"}]))

found = anon.action.datastore_search(resource_id=rid, sort="population desc", limit=2)
check("search total", found["total"] == 4, found["total"])
check("search sort and limit", [r["city"] for r in found["records"]] == ["Berlin", "Hamburg"],
      found["records"])
check("upsert changed Berlin", found["records"][0]["population"] == 3850810, found["records"][0])
check("_links next", found["_links"]["next"].endswith("offset=2"), found["_links"])
found = anon.action.datastore_search(resource_id=rid, filters={"city": ["Bonn", "Munich"]},
                                     fields=["city"], sort="city")
check("filters with a list", found["records"] == [{"city": "Bonn"}, {"city": "Munich"}], found["records"])
found = anon.action.datastore_search(resource_id=rid, q="hamburg")
check("full-text q", [r["city"] for r in found["records"]] == ["Hamburg"], found["records"])
report.raises("unknown filter field", ValidationError,
              lambda: anon.action.datastore_search(resource_id=rid, filters={"nope": 1}))
info = anon.action.datastore_info(id=rid)
check("info count", info["meta"]["count"] == 4, info["meta"])

# SQL, as the sysadmin turned it on for this site.
got = anon.action.datastore_search_sql(
    sql=f'SELECT city, population FROM "{rid}" WHERE population > 1000000 ORDER BY population')
check("sql records", [r["city"] for r in got["records"]] == ["Munich", "Hamburg", "Berlin"], got["records"])
check("sql fields", [f["id"] for f in got["fields"]] == ["city", "population"], got["fields"])
report.raises("sql: two statements", ValidationError,
              lambda: anon.action.datastore_search_sql(sql=f'SELECT 1; DELETE FROM "{rid}"'))
report.raises("sql: a function off the list", NotAuthorized,
              lambda: anon.action.datastore_search_sql(sql="SELECT load_extension('x')"))
report.raises("sql: the catalog's users", ValidationError,
              lambda: anon.action.datastore_search_sql(sql="SELECT * FROM catalog_user"))

# A private dataset's table.
secret = sysadmin.action.datastore_create(
    resource={"package_id": private["id"]}, fields=[{"id": "s", "type": "text"}],
    records=[{"s": "hidden"}])["resource_id"]
report.raises("private rows: outsider search", NotAuthorized,
              lambda: outsider.action.datastore_search(resource_id=secret))
report.raises("private rows: outsider sql", NotAuthorized,
              lambda: outsider.action.datastore_search_sql(sql=f'SELECT * FROM "{secret}"'))
status, _, body = get(f"/datastore/dump/{secret}")
check("private dump is 404", (status, body) == (404, "DataStore resource not found"), (status, body))

# The dump, read as a plain script reads a CSV/JSON download.
status, headers, body = get(f"/datastore/dump/{rid}")
rows = list(csv.DictReader(io.StringIO(body)))
check("dump csv", status == 200 and [r["city"] for r in rows] == ["Berlin", "Hamburg", "Bonn", "Munich"],
      (status, body[:200]))
check("dump csv header", body.startswith("_id,city,population,area\r\n"), body[:60])
check("dump disposition", headers.get("Content-Disposition", headers.get("content-disposition", ""))
      == f'attachment; filename="{rid}.csv"', headers)
status, _, body = get(f"/datastore/dump/{rid}", {"format": "json", "fields": "city", "sort": "city"})
check("dump json", status == 200 and json.loads(body)["records"] == [["Berlin"], ["Bonn"], ["Hamburg"], ["Munich"]],
      body[:200])

# A CSV file uploaded with ckanapi: the loader puts its rows into the DataStore.
upload = io.BytesIO(b"name;score;when\nada;10,5;2024-01-02\nbob;7;2024-02-03\n")
upload.name = "scores.csv"
loaded = sysadmin.action.resource_create(package_id=ds["id"], name="Scores", format="CSV",
                                         upload=upload)
status = {}
deadline = time.time() + 60
while time.time() < deadline:
    try:
        status = sysadmin.action.xloader_status(resource_id=loaded["id"])
    except NotFound:
        status = {}
    if status.get("status") in ("complete", "error"):
        break
    time.sleep(0.5)
check("loader completes", status.get("status") == "complete", status)
if status.get("status") == "complete":
    rows = anon.action.datastore_search(resource_id=loaded["id"], sort="name")
    check("loaded rows", [r["name"] for r in rows["records"]] == ["ada", "bob"], rows["records"])
    check("loaded header", [f["id"] for f in rows["fields"]] == ["_id", "name", "score", "when"],
          rows["fields"])

# Deleting.
sysadmin.action.datastore_records_delete(resource_id=rid, filters={"city": "Munich"})
check("records_delete", anon.action.datastore_search(resource_id=rid)["total"] == 3)
sysadmin.action.datastore_delete(resource_id=rid)
report.raises("search after delete", NotFound, lambda: anon.action.datastore_search(resource_id=rid))
check("inactive after delete", anon.action.resource_show(id=rid).get("datastore_active") is False)

print(f"datastore: {report.passed} checks passed, {len(report.failures)} failed")
sys.exit(1 if report.failures else 0)
