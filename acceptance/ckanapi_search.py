#!/usr/bin/env python3
"""CKAN acceptance: package_search driven by the real `ckanapi` client.

Written as one would write it against CKAN 2.10+/2.11 with Solr: nothing here knows it is
talking to `catalog`. Same environment as ckanapi_foundation.py (CKAN_URL and the sysadmin,
editor, member and outsider tokens; the three users belong to no organization at the start).

It creates varied datasets in its own organizations (random suffix) and checks counts,
facets, paging, sorting, private / draft / deleted visibility, read-your-writes and a malformed
query. Every query is restricted to this run's organizations, so other data on the site does
not matter. Exit status 1 if any check failed.
"""

import os
import sys
import uuid

from ckanapi import NotAuthorized, RemoteCKAN, SearchError, SearchQueryError, ValidationError

URL = os.environ["CKAN_URL"].rstrip("/")
SUFFIX = uuid.uuid4().hex[:8]
ORG_A = f"accs-a-{SUFFIX}"
ORG_B = f"accs-b-{SUFFIX}"
GROUP = f"accs-g-{SUFFIX}"
SCOPE = f"organization:({ORG_A} OR {ORG_B})"

sysadmin = RemoteCKAN(URL, apikey=os.environ["CKAN_SYSADMIN_TOKEN"])
editor = RemoteCKAN(URL, apikey=os.environ["CKAN_EDITOR_TOKEN"])
member = RemoteCKAN(URL, apikey=os.environ["CKAN_MEMBER_TOKEN"])
outsider = RemoteCKAN(URL, apikey=os.environ["CKAN_OUTSIDER_TOKEN"])
anon = RemoteCKAN(URL)

passed = 0
failures = []


def check(name, cond, detail=None):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(f"{name}: {detail!r}")
        print(f"  FAIL {name}: {detail!r}")


def search(client, **kw):
    fq = kw.pop("fq", None)
    kw["fq"] = SCOPE if fq is None else f"{SCOPE} {fq}"
    return client.action.package_search(**kw)


def names(result):
    return [d["name"] for d in result["results"]]


def n(short):
    return f"accs-{short}-{SUFFIX}"


def raises(name, exc, fn):
    try:
        fn()
    except exc as e:
        check(name, True)
        return e
    except Exception as e:  # noqa: BLE001 - report the wrong exception type
        check(name, False, f"{type(e).__name__}: {e}")
        return None
    check(name, False, "no error")
    return None


# --- set-up -------------------------------------------------------------------------------
sysadmin.action.organization_create(name=ORG_A, title="Agency of Air")
sysadmin.action.organization_create(name=ORG_B, title="Bureau of Budgets")
sysadmin.action.group_create(name=GROUP, title="Climate")
# The harness names its users acceptance_<role>; on another site set CKAN_EDITOR_USER and
# CKAN_MEMBER_USER to the names of the users the tokens belong to.
user_of = {role: os.environ.get(f"CKAN_{role.upper()}_USER", f"acceptance_{role}") for role in ("editor", "member")}
sysadmin.action.organization_member_create(id=ORG_A, username=user_of["editor"], role="editor")
sysadmin.action.organization_member_create(id=ORG_A, username=user_of["member"], role="member")

formats = ["CSV", "JSON", "XLSX", "CSV", "PDF", "CSV"]
licenses = ["cc-by", "cc-zero", "odc-odbl", "cc-by", "other-open", "cc-by"]
topics = [
    ("ozone", "Ozone levels", "Hourly ozone readings from city stations", ["air", "Environment"]),
    ("pm10", "Particulate matter PM10", "Daily particulate measurements", ["air", "health"]),
    ("rivers", "River water quality", "Samples from rivers and lakes", ["water", "Environment"]),
    ("budget", "City budget 2024", "Spending by department", ["economy", "finance"]),
    ("taxes", "Local taxes", "Property tax revenue by district", ["economy"]),
    ("qualite-air", "Qualité de l'air", "Mesures de la qualité de l'air à Paris", ["air", "français"]),
]
for i, (short, title, notes, tags) in enumerate(topics):
    org = ORG_A if i < 3 or short == "qualite-air" else ORG_B
    sysadmin.action.package_create(
        name=n(short), title=title, notes=notes, owner_org=org, license_id=licenses[i],
        tags=[{"name": t} for t in tags],
        groups=[{"name": GROUP}] if "air" in tags else [],
        extras=[{"key": "theme", "value": "environment" if org == ORG_A else "economy"}],
        resources=[{"url": f"http://example.org/{short}.{formats[i].lower()}", "format": formats[i], "name": f"{title} data"}],
    )
sysadmin.action.package_create(name=n("secret"), title="Secret air data", owner_org=ORG_A, private=True, tags=[{"name": "air"}])
sysadmin.action.package_create(name=n("draft"), title="Draft air data", owner_org=ORG_A, state="draft")
sysadmin.action.package_create(name=n("gone"), title="Gone air data", owner_org=ORG_A, tags=[{"name": "air"}])
sysadmin.action.package_delete(id=n("gone"))
PUBLIC = sorted(n(t[0]) for t in topics)

# --- counts and queries -------------------------------------------------------------------
r = search(anon, q="*:*", rows=100, sort="name asc")
check("count of public active datasets", r["count"] == 6, r["count"])
check("results sorted by name", names(r) == PUBLIC, names(r))
check("sort echoed", r["sort"] == "name asc", r["sort"])
check("results are package_show dicts",
      r["results"][0] == anon.action.package_show(id=r["results"][0]["name"]), "differs")
check("bare words", names(search(anon, q="ozone")) == [n("ozone")])
check("stemming", names(search(anon, q="reading")) == [n("ozone")])
check("accented words", names(search(anon, q="qualité")) == [n("qualite-air")])
check("fielded tag", sorted(names(search(anon, q="tags:air", rows=50))) == sorted([n("ozone"), n("pm10"), n("qualite-air")]))
check("tags are case-sensitive", search(anon, q="tags:environment")["count"] == 0)
check("res_format", search(anon, q="res_format:CSV")["count"] == 3)
check("extras", search(anon, q="extras_theme:economy")["count"] == 2)
check("OR and NOT (Lucene: (a OR b) AND NOT c)", names(search(anon, q="tags:economy OR tags:water NOT res_format:XLSX", sort="name asc")) == [n("budget"), n("taxes")])
check("harvester fq", search(anon, q="*:*", fq="metadata_modified:[2000-01-01T00:00:00Z TO *] -groups:" + GROUP)["count"] == 3)
check("date math", search(anon, q="metadata_created:[NOW-1DAY TO NOW+1DAY]")["count"] == 6)

# --- paging and sorting -------------------------------------------------------------------
pages = [names(search(anon, q="*:*", sort="name asc", rows=2, start=s)) for s in (0, 2, 4, 6)]
check("paging walks the sorted list", sum(pages, []) == PUBLIC, pages)
check("rows=0 gives the count only", search(anon, rows=0)["results"] == [])
r = search(anon, sort="title_string desc", rows=3)
check("sort by title", [d["title"] for d in r["results"]] == sorted([t[1] for t in topics], reverse=True)[:3], [d["title"] for d in r["results"]])
ids = [d["id"] for d in search(anon, sort="id asc", rows=100)["results"]]
check("sort by id", ids == sorted(ids), ids)

# --- facets -------------------------------------------------------------------------------
r = search(anon, rows=0, **{"facet.field": ["organization", "tags", "res_format", "license_id", "groups"], "facet.limit": 50})
check("facet counts", r["facets"]["res_format"] == {"CSV": 3, "JSON": 1, "XLSX": 1, "PDF": 1} or
      r["facets"]["res_format"] == {"CSV": 3, "JSON": 1, "PDF": 1, "XLSX": 1}, r["facets"].get("res_format"))
check("organization facet", r["facets"]["organization"] == {ORG_A: 4, ORG_B: 2}, r["facets"]["organization"])
orgs = {i["name"]: i["display_name"] for i in r["search_facets"]["organization"]["items"]}
check("organization display names", orgs == {ORG_A: "Agency of Air", ORG_B: "Bureau of Budgets"}, orgs)
lic = {i["name"]: i["display_name"] for i in r["search_facets"]["license_id"]["items"]}
check("license display names", lic.get("cc-by") == "Creative Commons Attribution", lic)
items = [i["display_name"] for i in r["search_facets"]["tags"]["items"]]
check("search_facets sorted by display_name descending", items == sorted(items, reverse=True), items)
r = search(anon, rows=0, **{"facet.field": ["tags"], "facet.limit": 2, "facet.mincount": 2})
check("facet.limit and mincount", r["facets"]["tags"] == {"air": 3, "Environment": 2} or r["facets"]["tags"] == {"air": 3, "economy": 2} or len(r["facets"]["tags"]) == 2 and all(v >= 2 for v in r["facets"]["tags"].values()), r["facets"]["tags"])

# --- visibility ---------------------------------------------------------------------------
check("private hidden from anonymous", search(anon, include_private=True)["count"] == 6)
check("private hidden from outsider", search(outsider, include_private=True)["count"] == 6)
check("private visible to org member", search(member, include_private=True)["count"] == 7)
check("private needs include_private", search(member)["count"] == 6)
check("drafts hidden from anonymous", search(anon, include_drafts=True)["count"] == 6)
check("drafts visible to sysadmin", n("draft") in names(search(sysadmin, include_drafts=True, rows=50)))
check("deleted never found", search(sysadmin, q=f"name:{n('gone')}", include_deleted=True, include_private=True)["count"] == 0)

# --- read-your-writes ---------------------------------------------------------------------
editor.action.package_patch(id=n("ozone"), title="Ozone and nitrogen dioxide")
check("update visible at once", names(search(anon, q="nitrogen")) == [n("ozone")])
editor.action.package_create(name=n("fresh"), title="Fresh noise map", owner_org=ORG_A)
check("create visible at once", names(search(anon, q="noise")) == [n("fresh")])
sysadmin.action.package_delete(id=n("fresh"))
check("delete visible at once", search(anon, q="noise")["count"] == 0)
sysadmin.action.package_patch(id=n("taxes"), private=True)
check("made private: gone for anonymous", search(anon, q="taxes")["count"] == 0)

# --- errors -------------------------------------------------------------------------------
raises("malformed query", SearchError, lambda: anon.action.package_search(q="title:(ozone"))
raises("unknown parameter", SearchQueryError, lambda: anon.action.package_search(q="x", bogus="1"))
raises("bad sort", SearchQueryError, lambda: anon.action.package_search(sort="name sideways"))
raises("bad rows", ValidationError, lambda: anon.action.package_search(rows=-5))
raises("search_index_rebuild is for sysadmins", NotAuthorized, lambda: editor.action.search_index_rebuild())

print(f"\n{passed} passed, {len(failures)} failed")
for f in failures:
    print("  -", f)
sys.exit(1 if failures else 0)
