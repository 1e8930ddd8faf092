"""An old script against the legacy Model API (/api/rest, /api/2/rest), written the way scripts
for CKAN 1.x/2.x were: plain HTTP with urllib, JSON bodies, the API key in the Authorization
header, 201 + Location on create. It creates a group and datasets, updates one (extras merge,
null deletes), links two with a relationship, rates one, reads revisions, searches, calls the
Util API and JSONP, and then reads the same data back through the Action API (v3).

Environment: CKAN_URL, CKAN_SYSADMIN_TOKEN, CKAN_OUTSIDER_TOKEN (from acceptance/run.sh).
"""

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid

BASE = os.environ["CKAN_URL"].rstrip("/")
KEY = os.environ["CKAN_SYSADMIN_TOKEN"]
OUTSIDER = os.environ["CKAN_OUTSIDER_TOKEN"]
RUN = uuid.uuid4().hex[:8]

failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if cond:
        print("ok   ", what)
    else:
        print("FAIL ", what)
        failures.append(what)


def call(method, path, body=None, key=KEY, raw=False):
    """One HTTP request; returns (status, headers, parsed JSON or text)."""
    data = None
    if body is not None:
        data = json.dumps(body).encode("utf-8")
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if key:
        req.add_header("Authorization", key)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        resp = urllib.request.urlopen(req, timeout=30)
        status, headers, text = resp.status, resp.headers, resp.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        status, headers, text = e.code, e.headers, e.read().decode("utf-8")
    if raw or not text:
        return status, headers, text
    try:
        return status, headers, json.loads(text)
    except ValueError:
        return status, headers, text


def action(name, **params):
    status, _, body = call("POST", "/api/3/action/" + name, params)
    assert status == 200, (name, status, body)
    return body["result"]


# --- Model API: groups and datasets --------------------------------------------------------
group_name = "legacy-group-" + RUN
status, headers, group = call(
    "POST", "/api/rest/group", {"name": group_name, "title": "Legacy group"}
)
check(status == 201, "POST /api/rest/group answers 201")
check(headers.get("Location", "").endswith("/api/rest/group/" + group["id"]),
      "the group's Location names its id")
check(group["packages"] == [], "a new group has no datasets")

# Datasets belong to an organization (create_unowned_dataset is off by default).
org_name = "legacy-org-" + RUN
status, _, _ = call("POST", "/api/3/action/organization_create", {"name": org_name})
check(status == 200, "organization_create answers 200")

name_a = "legacy-a-" + RUN
status, headers, pkg = call("POST", "/api/rest/dataset", {
    "name": name_a,
    "owner_org": org_name,
    "title": "Legacy A",
    "notes": "Some **bold** notes, see dataset:" + name_a,
    "tags": "economy  transport",
    "extras": {"spatial": "Europe", "temporal": "2020"},
    "groups": [group_name],
    "download_url": "http://example.org/a.csv",
    "license_id": "cc-by",
})
check(status == 201, "POST /api/rest/dataset answers 201")
check(headers.get("Location", "").endswith("/api/rest/dataset/" + pkg.get("id", "?")),
      "the dataset's Location names its id")
check(sorted(pkg["tags"]) == ["economy", "transport"], "tags given as a string become names")
check(pkg["extras"] == {"spatial": "Europe", "temporal": "2020"}, "extras are an object")
check(pkg["groups"] == [group_name], "v1 groups are names")
check(pkg["download_url"] == "http://example.org/a.csv", "v1 download_url is the first resource")
check(len(pkg["resources"]) == 1, "download_url became the only resource")
check("<strong>bold</strong>" in pkg["notes_rendered"], "notes_rendered is Markdown as HTML")
check("/dataset/" + name_a in pkg["notes_rendered"], "dataset:<name> links to the dataset")
check(pkg["ratings_count"] == 0 and pkg["ratings_average"] is None, "no ratings yet")
check(pkg["ckan_url"] == BASE + "/dataset/" + name_a, "ckan_url is the dataset page")
check(pkg["license"] not in (None, ""), "license carries the title")

name_b = "legacy-b-" + RUN
status, _, pkg_b = call("POST", "/api/2/rest/package",
                       {"name": name_b, "owner_org": org_name, "tags": ["economy"]})
check(status == 201, "POST /api/2/rest/package (alias) answers 201")
check("download_url" not in pkg_b, "v2 has no download_url")

# Update: absent fields keep their values, extras merge, a null extra is deleted.
status, _, upd = call("PUT", "/api/rest/dataset/" + name_a, {
    "title": "Legacy A (updated)",
    "extras": {"temporal": None, "frequency": "daily"},
})
check(status == 200, "PUT /api/rest/dataset/<name> answers 200")
check(upd["title"] == "Legacy A (updated)", "the title changed")
check(upd["extras"] == {"spatial": "Europe", "frequency": "daily"},
      "extras merged; the null one deleted")
check(sorted(upd["tags"]) == ["economy", "transport"], "absent tags keep their values")

status, _, err = call("PUT", "/api/rest/dataset/" + name_a, {"id": "something-else"})
check(status == 409 and "read-only" in json.dumps(err), "changing id is refused with 409")

status, _, err = call("PUT", "/api/rest/dataset/" + name_a, {"title": "x"}, key=OUTSIDER)
check(status == 403 and isinstance(err, str) and err.startswith("Access denied"),
      "an outsider's update is 403 with a JSON string")
status, _, err = call("POST", "/api/rest/dataset", {"name": "anon-" + RUN}, key=None)
check(status == 403, "an anonymous create is 403")
status, _, err = call("POST", "/api/rest/dataset", {"name": name_a, "owner_org": org_name})
check(status == 409 and "name" in err, "a duplicate name is 409 with the raw error dict")
status, _, err = call("GET", "/api/rest/dataset/no-such-dataset-" + RUN)
check(status == 404 and err == "Not found", "an unknown dataset is 404 \"Not found\"")

status, _, names = call("GET", "/api/rest/dataset")
check(status == 200 and name_a in names and name_b in names, "the v1 register lists names")
status, _, ids = call("GET", "/api/2/rest/dataset")
check(pkg["id"] in ids, "the v2 register lists ids")

# --- relationships ---------------------------------------------------------------------------
status, headers, rel = call("POST", "/api/rest/dataset/%s/depends_on/%s" % (name_a, name_b),
                            {"comment": "a needs b"})
check(status == 201, "POST a relationship answers 201")
check(rel == {"subject": name_a, "type": "depends_on", "object": name_b, "comment": "a needs b"},
      "the relationship dict uses v1 names")
status, _, rels = call("GET", "/api/rest/dataset/%s/relationships" % name_b)
check(rels == [{"subject": name_b, "type": "dependency_of", "object": name_a,
                "comment": "a needs b"}], "the other side sees the reverse type")
status, _, rels = call("GET", "/api/2/rest/dataset/%s/depends_on" % name_a)
check(status == 200 and rels[0]["object"] == pkg_b["id"], "v2 relationships use ids")
status, _, _ = call("GET", "/api/rest/dataset/%s/child_of" % name_a)
check(status == 404, "a typed query with no match is 404")
status, _, rel = call("PUT", "/api/rest/dataset/%s/depends_on/%s" % (name_a, name_b),
                      {"comment": "changed"})
check(status == 200 and rel["comment"] == "changed", "PUT changes the comment")

# --- ratings -----------------------------------------------------------------------------------
status, _, r = call("POST", "/api/rest/rating", {"package": name_a, "rating": 4})
check(status == 201 and r == {"rating average": 4.0, "rating count": 1}, "rating answers 201")
status, _, r = call("POST", "/api/rest/rating", {"package": name_a, "rating": 2}, key=OUTSIDER)
check(r == {"rating average": 3.0, "rating count": 2}, "a second user's rating averages")
status, _, r = call("POST", "/api/rest/rating", {"package": name_a, "rating": 9})
check(status == 409 and r == {"message": "Rating must be between 1 and 5."}, "bad rating is 409")
status, _, pkg = call("GET", "/api/rest/dataset/" + name_a)
check(pkg["ratings_average"] == 3.0 and pkg["ratings_count"] == 2, "the dataset shows its ratings")
check(pkg["relationships"][0]["type"] == "depends_on", "the dataset shows its relationships")

# --- revisions ---------------------------------------------------------------------------------
status, _, revs = call("GET", "/api/rest/dataset/%s/revisions" % name_a)
check(status == 200 and len(revs) >= 2, "the dataset has revisions (create, update)")
status, _, rev = call("GET", "/api/rest/revision/" + revs[0]["id"])
check(status == 200 and rev["id"] == revs[0]["id"], "a revision reads back")
status, _, rev_ids = call("GET", "/api/rest/revision")
check(revs[0]["id"] in rev_ids, "the revision register lists it")

# --- tags, groups, licenses --------------------------------------------------------------------
status, _, tagged = call("GET", "/api/rest/tag/economy")
check(name_a in tagged and name_b in tagged, "a tag lists its datasets")
status, _, g = call("GET", "/api/rest/group/" + group_name)
check(g["packages"] == [name_a], "the group lists its dataset")
status, _, lic = call("GET", "/api/rest/licenses")
check(status == 200 and any(l["id"] == "cc-by" for l in lic), "licenses list")

# --- search and util ---------------------------------------------------------------------------
status, _, found = call("GET", "/api/search/dataset?q=" + urllib.parse.quote(name_a))
check(status == 200 and name_a in found.get("results", []), "the search API finds the dataset")
status, _, text = call("GET", "/api/rest/dataset/%s?callback=cb" % name_a, raw=True)
check(status == 200 and text.startswith("cb(") and text.endswith(");"), "JSONP wraps the body")
status, _, munged = call("GET", "/api/util/dataset/munge_name?name=" + urllib.parse.quote("A b/c"))
check(status == 200 and munged == "a-b-c", "munge_name")

# --- the same data through the Action API ------------------------------------------------------
shown = action("package_show", id=name_a)
check(shown["title"] == "Legacy A (updated)", "package_show sees the REST update")
check({e["key"]: e["value"] for e in shown["extras"]} == {"spatial": "Europe",
                                                          "frequency": "daily"},
      "package_show sees the merged extras")
check([g["name"] for g in shown["groups"]] == [group_name], "package_show sees the group")
rels = action("package_relationships_list", id=name_a)
check(len(rels) == 1 and rels[0]["comment"] == "changed", "the relationship via the Action API")
hits = action("package_search", q="name:" + name_a)
check(hits["count"] == 1, "package_search finds the REST-created dataset")
acts = action("package_activity_list", id=name_a)
check(len(acts) >= 2, "the REST writes are in the activity stream")

# --- delete ----------------------------------------------------------------------------------------
status, _, body = call("DELETE", "/api/rest/dataset/%s/depends_on/%s" % (name_a, name_b))
check(status == 200, "DELETE a relationship answers 200")
status, _, body = call("DELETE", "/api/rest/dataset/" + name_b)
check(status == 200 and body == "", "DELETE a dataset answers 200 with no body")
check(action("package_show", id=name_b)["state"] == "deleted", "the dataset is deleted")

print("%d checks, %d failed" % (checks, len(failures)))
sys.exit(1 if failures else 0)
