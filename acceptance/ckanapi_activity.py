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

passed = 0
failures = []


def check(name, cond, detail=None):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(f"{name}: {detail!r}")
        print(f"  FAIL {name}: {detail!r}")


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
outsider.action.unfollow_dataset(id=ds["id"])
check("unfollowed", anon.action.dataset_follower_count(id=ds["id"]) == 0)

e = raises("limit must be an integer", ValidationError,
           lambda: anon.action.package_activity_list(id=ds["id"], limit="x"))
if e is not None:
    check("limit messages", e.error_dict.get("limit") == ["Invalid integer", "Please enter an integer value"],
          e.error_dict)
raises("unknown dataset", NotFound, lambda: anon.action.package_activity_list(id=f"acca-none-{SUFFIX}"))
raises("unknown activity", NotFound, lambda: anon.action.activity_show(id=str(uuid.uuid4())))

print(f"activity: {passed} checks passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
