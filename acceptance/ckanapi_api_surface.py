#!/usr/bin/env python3
"""CKAN acceptance: the rest of the Action API (issue 12) driven by the real `ckanapi` client.

Written as one would against CKAN 2.12: vocabularies and vocabulary tags (search included),
dataset relationships, resource views, task status, term translations, runtime configuration,
the site user, expiring API tokens, background jobs, package_revise, CKAN 2.5's related items, and a `ckanapi dump` /
`ckanapi load` round trip of datasets with vocabulary tags and groups. Same environment as
ckanapi_foundation.py. Exit status 1 if any check failed.
"""

import json
import os
import subprocess
import sys
import tempfile
import uuid

from ckanapi import NotAuthorized, NotFound, RemoteCKAN, ValidationError

URL = os.environ["CKAN_URL"].rstrip("/")
TOKEN = os.environ["CKAN_SYSADMIN_TOKEN"]
SUFFIX = uuid.uuid4().hex[:8]

sysadmin = RemoteCKAN(URL, apikey=TOKEN)
outsider = RemoteCKAN(URL, apikey=os.environ["CKAN_OUTSIDER_TOKEN"])
anon = RemoteCKAN(URL)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Report  # noqa: E402 - the shared checks, found beside this script

report = Report()
check = report.check


def raises(name, exc, fn):
    return report.raises(name, exc, fn)


ORG = f"accs-org-{SUFFIX}"
GROUP = f"accs-group-{SUFFIX}"
sysadmin.action.organization_create(name=ORG)
sysadmin.action.group_create(name=GROUP)

# --- vocabularies ---------------------------------------------------------------------------
VOCAB = f"genre-{SUFFIX}"
v = sysadmin.action.vocabulary_create(name=VOCAB, tags=[{"name": "fiction"}, {"name": "poetry"}])
check("vocabulary_create tags", [t["name"] for t in v["tags"]] == ["fiction", "poetry"], v)
raises("vocabulary_create by an outsider", NotAuthorized, lambda: outsider.action.vocabulary_create(name=f"x-{SUFFIX}"))
raises("vocabulary_create duplicate", ValidationError, lambda: sysadmin.action.vocabulary_create(name=VOCAB))
drama = sysadmin.action.tag_create(name="drama", vocabulary_id=v["id"])
check("tag_create", drama["vocabulary_id"] == v["id"] and drama["packages"] == [], drama)
check("vocabulary_list", any(x["name"] == VOCAB for x in anon.action.vocabulary_list()))
check("vocabulary_show by name", anon.action.vocabulary_show(id=VOCAB)["id"] == v["id"])
check("tag_list of the vocabulary", anon.action.tag_list(vocabulary_id=VOCAB) == ["fiction", "poetry", "drama"])
ds = sysadmin.action.package_create(
    name=f"accs-vocab-{SUFFIX}", owner_org=ORG, groups=[{"name": GROUP}],
    tags=[{"name": "fiction", "vocabulary_id": v["id"]}, {"name": f"free-{SUFFIX}"}],
)
check("dataset vocabulary tag", {(t["name"], t["vocabulary_id"]) for t in ds["tags"]} == {("fiction", v["id"]), (f"free-{SUFFIX}", None)}, ds["tags"])
found = anon.action.package_search(fq=f"vocab_{VOCAB}:fiction")
check("search vocab_ field", [d["name"] for d in found["results"]] == [ds["name"]], found)
facets = anon.action.package_search(q=f"name:{ds['name']}", **{"facet.field": json.dumps([f"vocab_{VOCAB}", "tags"])}, rows=0)
check("vocab facet", facets["facets"].get(f"vocab_{VOCAB}") == {"fiction": 1}, facets["facets"])
check("vocab tags kept out of tags", anon.action.package_search(fq=f"tags:fiction name:{ds['name']}", rows=0)["count"] == 0)
check("tag_search in a vocabulary", anon.action.tag_search(query="dra", vocabulary_id=VOCAB)["count"] == 1)
sysadmin.action.tag_delete(id="fiction", vocabulary_id=VOCAB)
shown = anon.action.package_show(id=ds["id"])
check("tag_delete takes the tag off datasets", [t["name"] for t in shown["tags"]] == [f"free-{SUFFIX}"], shown["tags"])
raises("tag_show deleted tag", NotFound, lambda: anon.action.tag_show(id="fiction", vocabulary_id=VOCAB))

# --- relationships --------------------------------------------------------------------------
a = sysadmin.action.package_create(name=f"accs-rel-a-{SUFFIX}", owner_org=ORG)
b = sysadmin.action.package_create(name=f"accs-rel-b-{SUFFIX}", owner_org=ORG)
r = sysadmin.action.package_relationship_create(subject=a["name"], object=b["name"], type="depends_on", comment="needs")
check("relationship create", r == {"subject": a["name"], "type": "depends_on", "object": b["name"], "comment": "needs"}, r)
listed = anon.action.package_relationships_list(id=b["name"])
check("relationship reverse view", listed == [{"subject": b["name"], "type": "dependency_of", "object": a["name"], "comment": "needs"}], listed)
upd = sysadmin.action.package_relationship_update(subject=a["name"], object=b["name"], type="depends_on", comment="really")
check("relationship update", upd["comment"] == "really", upd)
check("relationships in package_show", len(anon.action.package_show(id=a["id"])["relationships_as_subject"]) == 1)
raises("relationship by an outsider", NotAuthorized, lambda: outsider.action.package_relationship_create(subject=a["name"], object=b["name"], type="links_to"))
sysadmin.action.package_relationship_delete(subject=b["name"], object=a["name"], type="dependency_of")
check("relationship delete", anon.action.package_relationships_list(id=a["name"]) == [])

# --- resource views -------------------------------------------------------------------------
res = sysadmin.action.resource_create(package_id=a["id"], url="http://example.org/picture.png", format="PNG")
defaults = anon.action.resource_view_list(id=res["id"])
check("default view on resource create", [x["view_type"] for x in defaults] == ["image_view"], defaults)
view = sysadmin.action.resource_view_create(resource_id=res["id"], title="Web", view_type="webpage_view", page_url="http://example.org/")
check("resource_view_create", view["view_type"] == "webpage_view" and view["package_id"] == a["id"], view)
check("resource_view_show", anon.action.resource_view_show(id=view["id"])["title"] == "Web")
sysadmin.action.resource_view_reorder(id=res["id"], order=[view["id"], defaults[0]["id"]])
check("resource_view_reorder", [x["id"] for x in anon.action.resource_view_list(id=res["id"])] == [view["id"], defaults[0]["id"]])
raises("resource_view_create bad type", ValidationError, lambda: sysadmin.action.resource_view_create(resource_id=res["id"], title="x", view_type="no_such_view"))
sysadmin.action.resource_view_delete(id=view["id"])
raises("resource_view_show after delete", NotFound, lambda: sysadmin.action.resource_view_show(id=view["id"]))

# --- task status and term translation -------------------------------------------------------
ts = sysadmin.action.task_status_update(entity_id=a["id"], entity_type="package", task_type="qa", key="status", value="ok", state="done", error="")
check("task_status_update", ts["value"] == "ok", ts)
check("task_status_show", anon.action.task_status_show(entity_id=a["id"], task_type="qa", key="status")["id"] == ts["id"])
raises("task_status_update by an outsider", NotAuthorized, lambda: outsider.action.task_status_update(entity_id=a["id"], entity_type="package", task_type="qa", key="k", value="v"))
sysadmin.action.task_status_delete(id=ts["id"])
raises("task_status_show after delete", NotFound, lambda: anon.action.task_status_show(id=ts["id"]))
term = f"term {SUFFIX}"
sysadmin.action.term_translation_update_many(data=[{"term": term, "term_translation": "Begriff", "lang_code": "de"}, {"term": term, "term_translation": "terme", "lang_code": "fr"}])
check("term_translation_show", [x["lang_code"] for x in anon.action.term_translation_show(terms=[term])] == ["de", "fr"])

# --- runtime configuration and status_show --------------------------------------------------
before = sysadmin.action.config_option_show(key="ckan.site_title")
sysadmin.action.config_option_update(**{"ckan.site_title": f"Runtime {SUFFIX}"})
check("config_option_update reaches status_show", anon.action.status_show()["site_title"] == f"Runtime {SUFFIX}")
raises("config_option_update of another key", ValidationError, lambda: sysadmin.action.config_option_update(**{"sqlalchemy.url": "x"}))
raises("config_option_list by an outsider", NotAuthorized, lambda: outsider.action.config_option_list())
sysadmin.action.config_option_update(**{"ckan.site_title": before})
check("ckan_version", anon.action.status_show()["ckan_version"] == "2.12.0")

# --- site user and tokens -------------------------------------------------------------------
site = sysadmin.action.get_site_user()
check("get_site_user", site["name"] == sysadmin.action.get_site_user()["name"], site)
raises("get_site_user by an outsider", NotAuthorized, lambda: outsider.action.get_site_user())
me = sysadmin.action.user_show(id=sysadmin.action.user_list()[0]["name"])
tok = sysadmin.action.api_token_create(user=me["name"], name="expiring", expires_in=1, unit=3600)
check("expiring token works", RemoteCKAN(URL, apikey=tok["token"]).action.package_show(id=a["id"])["id"] == a["id"])
raises("token unit checked", ValidationError, lambda: sysadmin.action.api_token_create(user=me["name"], name="x", expires_in=1, unit="day"))
sysadmin.action.api_token_revoke(jti=tok["id"])

# --- background jobs ------------------------------------------------------------------------
check("job_list", isinstance(sysadmin.action.job_list(), list))
raises("job_list by an outsider", NotAuthorized, lambda: outsider.action.job_list())
raises("job_show unknown", NotFound, lambda: sysadmin.action.job_show(id="no-such-job"))

# --- package_revise -------------------------------------------------------------------------
rev = sysadmin.action.package_revise(match={"name": a["name"]}, update={"title": "Revised"})
check("package_revise update", rev["package"]["title"] == "Revised", rev)
raises("package_revise match fails", ValidationError, lambda: sysadmin.action.package_revise(match={"name": a["name"], "title": "nope"}, update={"notes": "x"}))
rev = sysadmin.action.package_revise(**{"match__name": a["name"], "update__resources__0__description": "described"})
check("package_revise flattened keys", rev["package"]["resources"][0]["description"] == "described", rev["package"]["resources"])

# --- related items (CKAN 2.5) ---------------------------------------------------------------
item = sysadmin.action.related_create(title="An app", type="application", url="http://example.org/app", dataset_id=a["name"])
check("related_create", item["view_count"] == 0 and item["featured"] == 0, item)
check("related_list of a dataset", [x["id"] for x in anon.action.related_list(id=a["name"])] == [item["id"]])
check("related_show", anon.action.related_show(id=item["id"])["__extras"] == {"view_count": 0})
raises("related_create anonymous", NotAuthorized, lambda: anon.action.related_create(title="x", type="idea"))
sysadmin.action.related_delete(id=item["id"])

# --- ckanapi dump / load round trip ---------------------------------------------------------
ckanapi = os.path.join(os.path.dirname(sys.executable), "ckanapi")
names = []
for i in range(3):
    d = sysadmin.action.package_create(
        name=f"accs-dump-{i}-{SUFFIX}", owner_org=ORG, groups=[{"name": GROUP}], notes=f"dataset {i}",
        tags=[{"name": "poetry", "vocabulary_id": v["id"]}, {"name": "shared"}],
        extras=[{"key": "origin", "value": "dump"}],
        resources=[{"url": f"http://example.org/{i}.csv", "name": f"r{i}"}],
    )
    names.append(d["name"])
volatile = {"metadata_modified", "metadata_created", "revision_id"}


def comparable(d):
    d = {k: val for k, val in d.items() if k not in volatile}
    d["resources"] = [{k: val for k, val in r.items() if k not in volatile | {"created", "last_modified"}} for r in d["resources"]]
    return d


with tempfile.TemporaryDirectory() as tmp:
    first = os.path.join(tmp, "first.jsonl")
    second = os.path.join(tmp, "second.jsonl")
    common = ["-r", URL, "-a", TOKEN, "-q"]
    # ckanapi starts its workers as `ckanapi` from PATH.
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    subprocess.run([ckanapi, "dump", "datasets", *names, "-O", first, *common], check=True, env=env)
    for n in names:
        sysadmin.action.dataset_purge(id=n)
    subprocess.run([ckanapi, "load", "datasets", "-I", first, *common], check=True, env=env)
    subprocess.run([ckanapi, "dump", "datasets", *names, "-O", second, *common], check=True, env=env)
    with open(first) as f:
        before = {json.loads(line)["name"]: json.loads(line) for line in f}
    with open(second) as f:
        after = {json.loads(line)["name"]: json.loads(line) for line in f}
    for n in names:
        x, y = comparable(before[n]), comparable(after[n])
        diff = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
        check(f"dump/load round trip {n}", not diff, {k: (x.get(k), y.get(k)) for k in diff})

print(f"api surface: {report.passed} checks passed, {len(report.failures)} failed")
sys.exit(1 if report.failures else 0)
