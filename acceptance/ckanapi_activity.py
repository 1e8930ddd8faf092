#!/usr/bin/env python3
"""CKAN acceptance: activity streams driven by the real `ckanapi` client.

Written as one would against CKAN 2.12 with its activity plugin. Same environment as
ckanapi_foundation.py (CKAN_URL and the sysadmin, editor, member and outsider tokens).
It writes a dataset's history and reads it back through the activity actions: types, order,
paging, the data of each version, a private dataset's visibility, and CKAN's errors.
Exit status 1 if any check failed.
"""

import os
import sys
import uuid

from ckanapi import NotAuthorized, NotFound, RemoteCKAN, ValidationError

URL = os.environ["CKAN_URL"].rstrip("/")
SUFFIX = uuid.uuid4().hex[:8]
ORG = f"acca-{SUFFIX}"

sysadmin = RemoteCKAN(URL, apikey=os.environ["CKAN_SYSADMIN_TOKEN"])
outsider = RemoteCKAN(URL, apikey=os.environ["CKAN_OUTSIDER_TOKEN"])
anon = RemoteCKAN(URL)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Report  # noqa: E402 - the shared checks, found beside this script

report = Report()
check = report.check


def raises(name, exc, fn):
    return report.raises(name, exc, fn)


def types(activities):
    return [a["activity_type"] for a in activities]


sysadmin.action.organization_create(name=ORG)
ds = sysadmin.action.package_create(name=f"acca-ds-{SUFFIX}", owner_org=ORG, title="v0")
versions = [ds]
for i in range(1, 4):
    versions.append(sysadmin.action.package_patch(id=ds["id"], title=f"v{i}"))
sysadmin.action.resource_create(package_id=ds["id"], url="http://example.org/a.csv")

stream = anon.action.package_activity_list(id=ds["name"])
check("stream types", types(stream) == ["changed package"] * 4 + ["new package"], types(stream))
check("stream object", all(a["object_id"] == ds["id"] for a in stream), stream[0]["object_id"])
check("oldest data is the created dataset", stream[-1]["data"]["package"] == ds,
      stream[-1]["data"]["package"].get("title"))
check("each version's data", [a["data"]["package"]["title"] for a in stream[1:4]] == ["v3", "v2", "v1"],
      [a["data"]["package"]["title"] for a in stream])
check("newest has the resource", stream[0]["data"]["package"]["num_resources"] == 1,
      stream[0]["data"]["package"]["num_resources"])
page = anon.action.package_activity_list(id=ds["id"], offset=3, limit=1)
check("paging", [a["id"] for a in page] == [stream[3]["id"]], page)
only_new = anon.action.package_activity_list(id=ds["id"], activity_types=["new package"])
check("activity_types", types(only_new) == ["new package"], types(only_new))
shown = anon.action.activity_show(id=stream[0]["id"], include_data=False)
check("activity_show", shown == stream[0], shown.get("id"))
data = sysadmin.action.activity_data_show(id=stream[-1]["id"], object_type="package")
check("activity_data_show", data == ds, data.get("title"))
org_stream = anon.action.organization_activity_list(id=ORG)
check("organization stream", types(org_stream)[-1] == "new organization" and len(org_stream) == 6,
      types(org_stream))
recent = anon.action.recently_changed_packages_activity_list(limit=1)
check("recently changed", recent[0]["object_id"] == ds["id"], recent[0]["object_id"])

private = sysadmin.action.package_create(name=f"acca-private-{SUFFIX}", owner_org=ORG, private=True)
raises("private stream is hidden from anonymous", NotAuthorized,
       lambda: anon.action.package_activity_list(id=private["id"]))
raises("private stream is hidden from an outsider", NotAuthorized,
       lambda: outsider.action.package_activity_list(id=private["id"]))
check("private stream for the sysadmin",
      types(sysadmin.action.package_activity_list(id=private["id"])) == ["new package"])
check("organization stream leaves the private dataset out",
      private["id"] not in [a["object_id"] for a in anon.action.organization_activity_list(id=ORG)])

outsider.action.follow_dataset(id=ds["id"])
check("follower count", anon.action.dataset_follower_count(id=ds["id"]) == 1)
check("am following", outsider.action.am_following_dataset(id=ds["id"]) is True)
sysadmin.action.package_patch(id=ds["id"], title="for the dashboard")
dash = outsider.action.dashboard_activity_list(limit=1)
check("dashboard shows the followed dataset's change",
      dash[0]["object_id"] == ds["id"] and dash[0]["is_new"] is True, dash[0].get("is_new"))
check("new activities counted", outsider.action.dashboard_new_activities_count() >= 1)
outsider.action.dashboard_mark_activities_old()
check("marked seen", outsider.action.dashboard_new_activities_count() == 0)
raises("dashboard needs a login", NotAuthorized, lambda: anon.action.dashboard_activity_list())
me = outsider.action.user_show()
followees = outsider.action.followee_list(id=me["name"])
check("followee_list", [(f["type"], f["dict"]["id"]) for f in followees] == [("dataset", ds["id"])], followees)
check("followee_list q", outsider.action.followee_list(id=me["name"], q="zzz") == [])
check("dataset_followee_list", [d["id"] for d in outsider.action.dataset_followee_list(id=me["name"])] == [ds["id"]])
raises("followee_list is not public", NotAuthorized, lambda: anon.action.followee_list(id=me["name"]))
outsider.action.follow_group(id=ORG)
check("num_followers", anon.action.organization_show(id=ORG)["num_followers"] == 1)
outsider.action.unfollow_group(id=ORG)
outsider.action.unfollow_dataset(id=ds["id"])
check("unfollowed", anon.action.dataset_follower_count(id=ds["id"]) == 0)

# activity_diff, the older release's details, snippets and revisions.
newest = stream[0]["id"]
diff = sysadmin.action.activity_diff(id=newest, object_type="package")
check("activity_diff unified", diff["diff"].startswith("--- \n\n+++ \n\n@@") and
      '+  "num_resources": 1,' in diff["diff"], diff["diff"][:200])
check("activity_diff activities", [a["id"] for a in diff["activities"]] == [stream[1]["id"], newest])
check("activity_diff context", sysadmin.action.activity_diff(
    id=newest, object_type="package", diff_type="context")["diff"].startswith("*** \n\n--- \n\n"))
check("activity_diff html", '<table class="diff"' in sysadmin.action.activity_diff(
    id=newest, object_type="package", diff_type="html")["diff"])
raises("activity_diff needs edit rights", NotAuthorized,
       lambda: anon.action.activity_diff(id=newest, object_type="package"))
details = anon.action.activity_detail_list(id=newest)
check("activity_detail_list", [(d["activity_type"], d["object_type"]) for d in details] == [("new", "Resource")],
      details)
html = anon.action.package_activity_list_html(id=ds["name"])
check("package_activity_list_html", html.startswith('<ul class="activity"') and "added the resource" in html,
      html[:200])
revisions = sysadmin.action.revision_list()
check("revision_list", newest in revisions, revisions[:3])
check("package_revision_list", [r["id"] for r in anon.action.package_revision_list(id=ds["name"])][-5:]
      == [a["id"] for a in stream][-5:])
check("revision_show", anon.action.revision_show(id=newest)["packages"] == [ds["name"]])
counts = sysadmin.action.activity_delete_counts()
check("activity_delete_counts", counts["total"] >= 5 and counts["older_than_1_day"] >= 0, counts)
raises("activity_delete is for sysadmins", NotAuthorized, lambda: outsider.action.activity_delete(id=newest))

e = raises("limit must be an integer", ValidationError,
           lambda: anon.action.package_activity_list(id=ds["id"], limit="x"))
if e is not None:
    check("limit messages", e.error_dict.get("limit") == ["Invalid integer", "Please enter an integer value"],
          e.error_dict)
raises("unknown dataset", NotFound, lambda: anon.action.package_activity_list(id=f"acca-none-{SUFFIX}"))
raises("unknown activity", NotFound, lambda: anon.action.activity_show(id=str(uuid.uuid4())))

print(f"activity: {report.passed} checks passed, {len(report.failures)} failed")
sys.exit(1 if report.failures else 0)
