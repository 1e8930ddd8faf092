#!/usr/bin/env python3
"""CKAN acceptance: the foundation of the Action API, driven by the real `ckanapi` client.

Written as one would write it against CKAN 2.10+/2.11: nothing here knows it is talking to
`catalog`. Point it at any CKAN site with a sysadmin token and three ordinary users' tokens:

    CKAN_URL=https://ckan.example.org \
    CKAN_SYSADMIN_TOKEN=... CKAN_EDITOR_TOKEN=... CKAN_MEMBER_TOKEN=... CKAN_OUTSIDER_TOKEN=... \
    python acceptance/ckanapi_foundation.py

The three users must be ordinary users (not sysadmins) that belong to no organization. The
script creates its own organization, group and datasets, with a random suffix, so it can run
again on the same site. The site must store uploads (`ckan.storage_path`) and its `site_url` must
be the URL given here, since upload URLs are built from it.

Every check is recorded; a failed check does not stop the run. The report at the end lists the
failures, and the exit status is 1 if there was any.
"""

import os
import sys
import tempfile
import uuid

import requests
from ckanapi import NotAuthorized, NotFound, RemoteCKAN, ValidationError

from harness import Report, run_sections

URL = os.environ["CKAN_URL"].rstrip("/")
SUFFIX = uuid.uuid4().hex[:8]
ORG = f"acc-org-{SUFFIX}"
GRP = f"acc-group-{SUFFIX}"
DS = f"acc-dataset-{SUFFIX}"
PRIV = f"acc-private-{SUFFIX}"

sysadmin = RemoteCKAN(URL, apikey=os.environ["CKAN_SYSADMIN_TOKEN"])
editor = RemoteCKAN(URL, apikey=os.environ["CKAN_EDITOR_TOKEN"])
member = RemoteCKAN(URL, apikey=os.environ["CKAN_MEMBER_TOKEN"])
outsider = RemoteCKAN(URL, apikey=os.environ["CKAN_OUTSIDER_TOKEN"])
anon = RemoteCKAN(URL)

# Filled in as the run goes.
S = {}


R = Report()


def error_dict(e):
    """The error dict of a ckanapi.ValidationError (without __type)."""
    d = dict(getattr(e, "error_dict", {}) or {})
    d.pop("__type", None)
    return d


def names(items):
    return [i["name"] if isinstance(i, dict) else i for i in items]


# --------------------------------------------------------------------------------------------
def section_identities():
    st = R.ok("status_show (anonymous)", anon.action.status_show)
    if st:
        R.check("status_show has site_url", "site_url" in st, st)
    for role, client in [("sysadmin", sysadmin), ("editor", editor), ("member", member),
                         ("outsider", outsider)]:
        me = R.ok(f"user_show() as {role}", client.action.user_show)
        if me:
            S[role] = me
            R.check(f"{role} sees own email", bool(me.get("email")), me.get("email"))
            R.eq(f"{role} sysadmin flag", me.get("sysadmin"), role == "sysadmin")
            R.check(f"{role} own user_show has no password_hash", "password_hash" not in me)
            R.check(f"{role} own user_show has no password", "password" not in me)
    if len(S) != 4:
        raise RuntimeError("cannot identify the four token users; the remaining checks need them")


def section_orgs_and_groups():
    org = R.ok("organization_create", sysadmin.action.organization_create,
               name=ORG, title="Acceptance Organization", description="Created by ckanapi")
    if not org:
        raise RuntimeError("organization_create failed; nothing else can run")
    S["org"] = org
    R.eq("organization name", org.get("name"), ORG)
    R.eq("organization title", org.get("title"), "Acceptance Organization")
    R.eq("organization is_organization", org.get("is_organization"), True)
    R.eq("organization type", org.get("type"), "organization")
    R.eq("organization state", org.get("state"), "active")

    grp = R.ok("group_create", sysadmin.action.group_create, name=GRP, title="Acceptance Group")
    if not grp:
        raise RuntimeError("group_create failed; nothing else can run")
    S["grp"] = grp
    R.eq("group is_organization", grp.get("is_organization"), False)
    R.eq("group type", grp.get("type"), "group")

    e = R.raises("organization_create with a taken name", ValidationError,
                 sysadmin.action.organization_create, name=ORG)
    if e:
        R.eq("duplicate organization name error", error_dict(e).get("name"),
             ["Group name already exists in database"])
    e = R.raises("organization_create without a name", ValidationError,
                 sysadmin.action.organization_create, title="No name")
    if e:
        R.eq("organization missing name error", error_dict(e).get("name"), ["Missing value"])

    ed, mb = S["editor"]["name"], S["member"]["name"]
    m = R.ok("organization_member_create role=editor", sysadmin.action.organization_member_create,
             id=ORG, username=ed, role="editor")
    if m:
        R.eq("editor membership capacity", m.get("capacity"), "editor")
    m = R.ok("organization_member_create role=member", sysadmin.action.organization_member_create,
             id=ORG, username=mb, role="member")
    if m:
        R.eq("member membership capacity", m.get("capacity"), "member")
    R.ok("group_member_create (editor may add datasets to the group)",
         sysadmin.action.group_member_create, id=GRP, username=ed, role="member")

    e = R.raises("organization_member_create with an unknown role", ValidationError,
                 sysadmin.action.organization_member_create, id=ORG, username=mb, role="boss")
    if e:
        R.eq("unknown role error", error_dict(e).get("role"), ["role does not exist."])
    R.raises("organization_member_create by an org member (not admin)", NotAuthorized,
             member.action.organization_member_create, id=ORG,
             username=S["outsider"]["name"], role="member")
    R.raises("organization_member_create by an outsider", NotAuthorized,
             outsider.action.organization_member_create, id=ORG,
             username=S["outsider"]["name"], role="admin")

    shown = R.ok("organization_show include_users", anon.action.organization_show,
                 id=ORG, include_users=True)
    if shown:
        caps = {u["name"]: u.get("capacity") for u in shown.get("users", [])}
        R.eq("org users: creator is admin", caps.get(S["sysadmin"]["name"]), "admin")
        R.eq("org users: editor", caps.get(ed), "editor")
        R.eq("org users: member", caps.get(mb), "member")
        R.check("org users carry no email", all("email" not in u for u in shown.get("users", [])),
                shown.get("users"))
    ml = R.ok("member_list object_type=user", anon.action.member_list, id=ORG, object_type="user")
    if ml:
        caps = {row[0]: row[2] for row in ml}
        R.eq("member_list editor capacity", caps.get(S["editor"]["id"]), "Editor")
        R.eq("member_list member capacity", caps.get(S["member"]["id"]), "Member")

    olu = R.ok("organization_list_for_user editor create_dataset",
               editor.action.organization_list_for_user, id=ed, permission="create_dataset")
    if olu is not None:
        R.check("editor may create datasets in the org", ORG in names(olu), names(olu))
    olu = R.ok("organization_list_for_user member create_dataset",
               member.action.organization_list_for_user, id=mb, permission="create_dataset")
    if olu is not None:
        R.check("member may not create datasets in the org", ORG not in names(olu), names(olu))
    olu = R.ok("organization_list_for_user member read",
               member.action.organization_list_for_user, id=mb, permission="read")
    if olu is not None:
        R.check("member may read the org", ORG in names(olu), names(olu))


def dataset_dict(name, **extra):
    d = {
        "name": name,
        "title": "Bike counts (acceptance)",
        "owner_org": ORG,
        "notes": "Hourly counts from the automatic bike counters.",
        "license_id": "cc-by",
        "tags": [{"name": "mobility"}, {"name": "cycling"}],
        "groups": [{"name": GRP}],
        "extras": [{"key": "source", "value": "acceptance"}],
        "resources": [{
            "name": "Counts (CSV)",
            "url": "https://example.org/bike-counts.csv",
            "format": "csv",
        }],
    }
    d.update(extra)
    return d


def section_create_authorization():
    R.raises("package_create as anonymous", NotAuthorized,
             anon.action.package_create, **dataset_dict(f"acc-anon-{SUFFIX}"))
    e = R.raises("package_create in the org by a member", NotAuthorized,
                 member.action.package_create, **dataset_dict(f"acc-member-{SUFFIX}"))
    if e:
        R.check("member NotAuthorized message", "not authorized" in str(e).lower(), str(e))
    R.raises("package_create in the org by an outsider", NotAuthorized,
             outsider.action.package_create, **dataset_dict(f"acc-outsider-{SUFFIX}"))
    for n in (f"acc-anon-{SUFFIX}", f"acc-member-{SUFFIX}", f"acc-outsider-{SUFFIX}"):
        R.raises(f"refused dataset {n} was not created", NotFound, sysadmin.action.package_show,
                 id=n)


def section_create_and_show():
    pkg = R.ok("package_create by the editor", editor.action.package_create, **dataset_dict(DS))
    if not pkg:
        raise RuntimeError("package_create failed; the dataset checks cannot run")
    S["pkg"] = pkg
    org, grp = S["org"], S["grp"]
    R.eq("name", pkg.get("name"), DS)
    R.eq("state", pkg.get("state"), "active")
    R.eq("type", pkg.get("type"), "dataset")
    R.eq("private", pkg.get("private"), False)
    R.eq("owner_org", pkg.get("owner_org"), org["id"])
    R.eq("organization.name", (pkg.get("organization") or {}).get("name"), ORG)
    R.eq("creator_user_id", pkg.get("creator_user_id"), S["editor"]["id"])
    R.eq("groups", names(pkg.get("groups", [])), [GRP])
    R.eq("group id", [g.get("id") for g in pkg.get("groups", [])], [grp["id"]])
    R.eq("tags sorted by name", names(pkg.get("tags", [])), ["cycling", "mobility"])
    R.eq("num_tags", pkg.get("num_tags"), 2)
    R.eq("extras", pkg.get("extras"), [{"key": "source", "value": "acceptance"}])
    R.eq("license_title", pkg.get("license_title"), "Creative Commons Attribution")
    R.eq("isopen", pkg.get("isopen"), True)
    R.eq("num_resources", pkg.get("num_resources"), 1)
    res = (pkg.get("resources") or [{}])[0]
    R.check("resource has an id", bool(res.get("id")), res)
    R.eq("resource package_id", res.get("package_id"), pkg.get("id"))
    R.eq("resource position", res.get("position"), 0)
    R.eq("resource format normalised", res.get("format"), "CSV")
    R.eq("resource url", res.get("url"), "https://example.org/bike-counts.csv")
    R.check("metadata_created set", bool(pkg.get("metadata_created")), pkg.get("metadata_created"))

    shown = R.ok("package_show by name (anonymous)", anon.action.package_show, id=DS)
    if shown:
        R.eq("package_show id", shown.get("id"), pkg.get("id"))
        R.eq("package_show tags", names(shown.get("tags", [])), ["cycling", "mobility"])
        R.eq("package_show resources", [r.get("id") for r in shown.get("resources", [])],
             [res.get("id")])
    shown = R.ok("package_show by id (anonymous)", anon.action.package_show, id=pkg.get("id"))
    if shown:
        R.eq("package_show by id name", shown.get("name"), DS)
    lst = R.ok("package_list (anonymous)", anon.action.package_list)
    if lst is not None:
        R.check("package_list has the public dataset", DS in lst, lst)


def section_validation():
    e = R.raises("package_create without a name", ValidationError,
                 sysadmin.action.package_create, owner_org=ORG, title="No name")
    if e:
        R.eq("__type", e.error_dict.get("__type"), "Validation Error")
        R.eq("missing name error", error_dict(e).get("name"), ["Missing value"])
    e = R.raises("package_create with a bad name", ValidationError,
                 sysadmin.action.package_create, name="Not A Valid Name!", owner_org=ORG)
    if e:
        R.eq("bad name error", error_dict(e).get("name"),
             ["Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_"])
    e = R.raises("package_create with a one-character name", ValidationError,
                 sysadmin.action.package_create, name="x", owner_org=ORG)
    if e:
        # CKAN 2.12: name_validator, then package_name_validator's own message.
        R.eq("short name error", error_dict(e).get("name"),
             ["Must be at least 2 characters long", 'Name "x" length is less than minimum 2'])
    e = R.raises("package_create with a taken name", ValidationError,
                 sysadmin.action.package_create, name=DS, owner_org=ORG)
    if e:
        R.eq("duplicate name error", error_dict(e).get("name"), ["That URL is already in use."])
    e = R.raises("package_create with a one-letter tag", ValidationError,
                 sysadmin.action.package_create, name=f"acc-tag-{SUFFIX}", owner_org=ORG,
                 tags=[{"name": "ok-tag"}, {"name": "a"}])
    if e:
        R.eq("tag error (flattened)", error_dict(e).get("tags"),
             ['Tag "a" length is less than minimum 2'])
    e = R.raises("package_create with a bad author_email", ValidationError,
                 sysadmin.action.package_create, name=f"acc-email-{SUFFIX}", owner_org=ORG,
                 author_email="not-an-email")
    if e:
        R.eq("email error", error_dict(e).get("author_email"),
             ["Email not-an-email is not a valid format"])
    e = R.raises("resource_create without package_id", ValidationError,
                 editor.action.resource_create, url="https://example.org/x.csv")
    if e:
        R.eq("resource missing package_id error", error_dict(e).get("package_id"),
             ["Missing value"])
    R.raises("dataset with validation errors was not created", NotFound,
             sysadmin.action.package_show, id=f"acc-tag-{SUFFIX}")


def section_update_roles():
    pkg = R.ok("package_patch by the editor", editor.action.package_patch,
               id=DS, notes="Updated by the editor.")
    if pkg:
        R.eq("patched notes", pkg.get("notes"), "Updated by the editor.")
        R.eq("title kept", pkg.get("title"), "Bike counts (acceptance)")
        R.eq("tags kept", names(pkg.get("tags", [])), ["cycling", "mobility"])
        R.eq("groups kept", names(pkg.get("groups", [])), [GRP])
        R.eq("resources kept", pkg.get("num_resources"), 1)
        R.eq("extras kept", pkg.get("extras"), [{"key": "source", "value": "acceptance"}])
    R.raises("package_patch by a member", NotAuthorized,
             member.action.package_patch, id=DS, notes="member was here")
    R.raises("package_patch by an outsider", NotAuthorized,
             outsider.action.package_patch, id=DS, notes="outsider was here")
    R.raises("package_patch by anonymous", NotAuthorized,
             anon.action.package_patch, id=DS, notes="anonymous was here")
    R.raises("package_delete by a member", NotAuthorized, member.action.package_delete, id=DS)
    shown = R.ok("package_show after refused patches", anon.action.package_show, id=DS)
    if shown:
        R.eq("notes unchanged by refused patches", shown.get("notes"), "Updated by the editor.")


def section_resources():
    r = R.ok("resource_create by the editor", editor.action.resource_create, package_id=DS,
             name="Second", url="https://example.org/second.json", format="JSON")
    if not r:
        return
    rid = r["id"]
    R.eq("new resource package_id", r.get("package_id"), S["pkg"]["id"])
    R.eq("new resource position", r.get("position"), 1)
    R.eq("new resource format", r.get("format"), "JSON")
    R.eq("new resource mimetype guessed from the url", r.get("mimetype"), "application/json")
    r = R.ok("resource_patch by the editor", editor.action.resource_patch, id=rid,
             description="Patched description")
    if r:
        R.eq("patched description", r.get("description"), "Patched description")
        R.eq("name kept by patch", r.get("name"), "Second")
        R.eq("url kept by patch", r.get("url"), "https://example.org/second.json")
    shown = R.ok("resource_show (anonymous)", anon.action.resource_show, id=rid)
    if shown:
        R.eq("resource_show description", shown.get("description"), "Patched description")
    # resource_update replaces: absent description is cleared, mimetype is guessed again.
    r = R.ok("resource_update by the editor", editor.action.resource_update, id=rid,
             name="Second v2", url="https://example.org/second-v2.csv")
    if r:
        R.eq("updated url", r.get("url"), "https://example.org/second-v2.csv")
        R.eq("updated name", r.get("name"), "Second v2")
        R.check("description cleared by resource_update", not r.get("description"),
                r.get("description"))
        R.eq("mimetype guessed from the new url", r.get("mimetype"), "text/csv")
    R.raises("resource_create by a member", NotAuthorized, member.action.resource_create,
             package_id=DS, url="https://example.org/m.csv")
    R.raises("resource_patch by a member", NotAuthorized, member.action.resource_patch,
             id=rid, name="member")
    R.raises("resource_delete by a member", NotAuthorized, member.action.resource_delete, id=rid)
    pkg = R.ok("package_show with two resources", anon.action.package_show, id=DS)
    if pkg:
        R.eq("num_resources after resource_create", pkg.get("num_resources"), 2)
    R.eq("resource_delete returns None",
         R.ok("resource_delete by the editor", editor.action.resource_delete, id=rid), None)
    pkg = R.ok("package_show after resource_delete", anon.action.package_show, id=DS)
    if pkg:
        R.eq("num_resources after resource_delete", pkg.get("num_resources"), 1)
        R.check("deleted resource is gone", rid not in [x["id"] for x in pkg["resources"]],
                pkg["resources"])
    R.raises("resource_show of a deleted resource", NotFound, anon.action.resource_show, id=rid)
    R.raises("resource_delete of an unknown resource", NotFound, editor.action.resource_delete,
             id=str(uuid.uuid4()))


def section_upload():
    body = b"hour,count\n2024-01-01T00:00,12\n2024-01-01T01:00,7\n"
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "Bike Counts.csv")
        with open(path, "wb") as f:
            f.write(body)
        with open(path, "rb") as f:
            r = R.ok("resource_create with upload=open(...)", editor.action.resource_create,
                     package_id=DS, name="Uploaded counts", upload=f)
        if not r:
            return
        S["upload"] = r
        pkg_id = S["pkg"]["id"]
        R.eq("upload url_type", r.get("url_type"), "upload")
        R.eq("upload url", r.get("url"),
             f"{URL}/dataset/{pkg_id}/resource/{r['id']}/download/bike-counts.csv")
        R.eq("upload size", r.get("size"), len(body))
        R.eq("upload format guessed", r.get("format"), "CSV")
        R.eq("upload mimetype guessed", r.get("mimetype"), "text/csv")
        R.check("upload last_modified set", bool(r.get("last_modified")), r.get("last_modified"))
        resp = requests.get(r.get("url", ""), timeout=30)
        R.eq("download status", resp.status_code, 200)
        R.eq("download content", resp.content, body)
        R.check("download content-type is text/csv",
                resp.headers.get("Content-Type", "").startswith("text/csv"),
                resp.headers.get("Content-Type"))

        body2 = b"hour,count\n2024-01-02T00:00,3\n"
        path2 = os.path.join(d, "counts-v2.csv")
        with open(path2, "wb") as f:
            f.write(body2)
        with open(path2, "rb") as f:
            r2 = R.ok("resource_patch with a new upload", editor.action.resource_patch,
                      id=r["id"], upload=f)
        if r2:
            R.eq("re-upload url", r2.get("url"),
                 f"{URL}/dataset/{pkg_id}/resource/{r['id']}/download/counts-v2.csv")
            R.eq("re-upload name kept", r2.get("name"), "Uploaded counts")
            resp = requests.get(r2.get("url", ""), timeout=30)
            R.eq("re-download status", resp.status_code, 200)
            R.eq("re-download content", resp.content, body2)


def section_not_found():
    missing = f"acc-missing-{SUFFIX}"
    R.raises("package_show of an unknown dataset", NotFound, anon.action.package_show,
             id=missing)
    R.raises("package_patch of an unknown dataset", NotFound, sysadmin.action.package_patch,
             id=missing, notes="x")
    R.raises("package_delete of an unknown dataset", NotFound, sysadmin.action.package_delete,
             id=missing)
    R.raises("resource_show of an unknown resource", NotFound, anon.action.resource_show,
             id=str(uuid.uuid4()))
    R.raises("resource_create on an unknown dataset", NotFound, sysadmin.action.resource_create,
             package_id=missing, url="https://example.org/x.csv")
    R.raises("organization_show of an unknown organization", NotFound,
             anon.action.organization_show, id=missing)
    R.raises("group_show of an unknown group", NotFound, anon.action.group_show, id=missing)
    R.raises("group_show of an organization", NotFound, anon.action.group_show, id=ORG)
    R.raises("user_show of an unknown user", NotFound, anon.action.user_show, id=missing)


def section_private():
    p = R.ok("package_create private=True by the editor", editor.action.package_create,
             name=PRIV, owner_org=ORG, private=True, title="Private acceptance dataset",
             resources=[{"name": "secret", "url": "https://example.org/secret.csv"}])
    if not p:
        return
    S["priv"] = p
    R.eq("private flag", p.get("private"), True)
    rid = p["resources"][0]["id"]
    e = R.raises("package_show of a private dataset as anonymous", NotAuthorized,
                 anon.action.package_show, id=PRIV)
    if e:
        R.check("anonymous message names the package",
                "not authorized to read package" in str(e), str(e))
    R.raises("package_show of a private dataset as an outsider", NotAuthorized,
             outsider.action.package_show, id=PRIV)
    R.raises("resource_show of a private resource as anonymous", NotAuthorized,
             anon.action.resource_show, id=rid)
    for role, client in [("member", member), ("editor", editor), ("sysadmin", sysadmin)]:
        shown = R.ok(f"package_show of a private dataset as {role}", client.action.package_show,
                     id=PRIV)
        if shown:
            R.eq(f"{role} sees the private dataset", shown.get("name"), PRIV)
    R.ok("resource_show of a private resource as member", member.action.resource_show, id=rid)
    for role, client in [("anonymous", anon), ("member", member), ("sysadmin", sysadmin)]:
        lst = R.ok(f"package_list as {role}", client.action.package_list)
        if lst is not None:
            R.check(f"package_list as {role} omits the private dataset", PRIV not in lst, lst)
            R.check(f"package_list as {role} has the public dataset", DS in lst, lst)
    R.raises("package_patch of a private dataset by a member", NotAuthorized,
             member.action.package_patch, id=PRIV, notes="member")
    p2 = R.ok("package_patch of a private dataset by the editor", editor.action.package_patch,
              id=PRIV, notes="editor")
    if p2:
        R.eq("private dataset patched, still private", (p2.get("notes"), p2.get("private")),
             ("editor", True))

    # An upload on a private dataset is not downloadable by anonymous.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "secret.csv")
        with open(path, "wb") as f:
            f.write(b"a,b\n1,2\n")
        with open(path, "rb") as f:
            r = R.ok("upload to the private dataset", editor.action.resource_create,
                     package_id=PRIV, upload=f)
    if r:
        resp = requests.get(r["url"], timeout=30)
        R.eq("anonymous download of a private upload", resp.status_code, 403)
        resp = requests.get(r["url"], headers={"Authorization": os.environ["CKAN_MEMBER_TOKEN"]},
                            timeout=30)
        R.eq("member download of a private upload", resp.status_code, 200)


def section_user_privacy():
    ed = S["editor"]["name"]
    for role, client in [("anonymous", anon), ("outsider", outsider), ("member", member)]:
        u = R.ok(f"user_show of the editor as {role}", client.action.user_show, id=ed)
        if u:
            for k in ("email", "apikey", "password_hash", "password", "reset_key"):
                R.check(f"user_show as {role} hides {k}", k not in u, u.get(k))
            R.eq(f"user_show as {role} name", u.get("name"), ed)
            R.check(f"user_show as {role} has email_hash", bool(u.get("email_hash")), u)
    u = R.ok("user_show of self", editor.action.user_show, id=ed)
    if u:
        R.eq("self sees own email", u.get("email"), S["editor"].get("email"))
        R.check("self has no password_hash", "password_hash" not in u)
    u = R.ok("user_show self with include_password_hash", editor.action.user_show, id=ed,
             include_password_hash=True)
    if u:
        R.check("non-sysadmin never gets password_hash", "password_hash" not in u,
                u.get("password_hash"))
    u = R.ok("user_show as sysadmin", sysadmin.action.user_show, id=ed)
    if u:
        R.check("sysadmin sees email", bool(u.get("email")), u)
        R.check("sysadmin without include_password_hash gets no hash", "password_hash" not in u)
    u = R.ok("user_show as sysadmin include_password_hash", sysadmin.action.user_show, id=ed,
             include_password_hash=True)
    if u:
        R.check("sysadmin with include_password_hash gets the hash",
                bool(u.get("password_hash")), u.get("password_hash"))
        R.check("never the password itself", "password" not in u)

    ul = R.ok("user_list (anonymous)", anon.action.user_list)
    if ul is not None:
        got = set(names(ul))
        want = {S[r]["name"] for r in ("sysadmin", "editor", "member", "outsider")}
        R.check("user_list has the four users", want <= got, sorted(got))
        R.check("user_list as anonymous hides emails", all("email" not in x for x in ul),
                [x.get("email") for x in ul if "email" in x])
        R.check("user_list never has password_hash", all("password_hash" not in x for x in ul))
    ul = R.ok("user_list (outsider)", outsider.action.user_list)
    if ul is not None:
        others = [x for x in ul if x["name"] != S["outsider"]["name"]]
        mine = [x for x in ul if x["name"] == S["outsider"]["name"]]
        R.check("user_list as a user hides others' emails", all("email" not in x for x in others),
                [x["name"] for x in others if "email" in x])
        R.check("user_list as a user shows own email", bool(mine and mine[0].get("email")), mine)
    ul = R.ok("user_list all_fields=False", anon.action.user_list, all_fields=False)
    if ul is not None:
        R.check("user_list all_fields=False is a list of names",
                all(isinstance(x, str) for x in ul) and ed in ul, ul)


def section_tokens():
    ed = S["editor"]["name"]
    tok = R.ok("api_token_create by the editor", editor.action.api_token_create, user=ed,
               name=f"acceptance-{SUFFIX}")
    if not tok:
        return
    R.check("api_token_create returns a token", bool(tok.get("token")), tok)
    fresh = RemoteCKAN(URL, apikey=tok["token"])
    me = R.ok("user_show() with the new token", fresh.action.user_show)
    if me:
        R.eq("new token authenticates the editor", me.get("name"), ed)
    p = R.ok("package_patch with the new token", fresh.action.package_patch, id=DS, version="1.0")
    if p:
        R.eq("version patched with the new token", p.get("version"), "1.0")

    lst = R.ok("api_token_list by the editor", editor.action.api_token_list, user_id=ed)
    mine = [t for t in (lst or []) if t.get("name") == f"acceptance-{SUFFIX}"]
    R.check("api_token_list has the new token", len(mine) == 1, lst)
    if mine:
        t = mine[0]
        for k in ("id", "name", "user_id", "created_at", "last_access"):
            R.check(f"api_token_list item has {k}", k in t, t)
        R.eq("api_token_list user_id", t.get("user_id"), S["editor"]["id"])
        R.check("api_token_list does not reveal the token", "token" not in t, t)
    R.raises("api_token_list of another user by a member", NotAuthorized,
             member.action.api_token_list, user_id=ed)
    R.raises("api_token_create for another user by a member", NotAuthorized,
             member.action.api_token_create, user=ed, name="stolen")
    if mine:
        R.raises("api_token_revoke of another user's token", NotAuthorized,
                 member.action.api_token_revoke, jti=mine[0]["id"])
        me = R.ok("token still works after a refused revoke", fresh.action.user_show)
        if me:
            R.eq("token still authenticates", me.get("name"), ed)

    R.eq("api_token_revoke returns None",
         R.ok("api_token_revoke(token=...) by the editor", editor.action.api_token_revoke,
              token=tok["token"]), None)
    lst = R.ok("api_token_list after revoke", editor.action.api_token_list, user_id=ed)
    if lst is not None:
        R.check("revoked token no longer listed",
                all(t.get("name") != f"acceptance-{SUFFIX}" for t in lst), lst)
    # CKAN: a revoked token is an unknown token, and an unknown token means anonymous.
    R.raises("user_show() with a revoked token (anonymous, no id)", NotFound,
             fresh.action.user_show)
    R.raises("package_patch with a revoked token", NotAuthorized,
             fresh.action.package_patch, id=DS, notes="revoked")
    R.raises("package_show of a private dataset with a revoked token", NotAuthorized,
             fresh.action.package_show, id=PRIV)
    shown = R.ok("package_show of a public dataset with a revoked token", fresh.action.package_show,
                 id=DS)
    if shown:
        R.eq("public read still works as anonymous", shown.get("name"), DS)
    R.raises("api_token_create with a revoked token", NotAuthorized,
             fresh.action.api_token_create, user=ed, name="again")

    # An unknown token is no error either: the call is anonymous.
    bogus = RemoteCKAN(URL, apikey="this-is-not-a-token")
    R.raises("user_show() with an unknown token (anonymous, no id)", NotFound,
             bogus.action.user_show)
    R.ok("package_show of a public dataset with an unknown token", bogus.action.package_show,
         id=DS)
    R.raises("package_create with an unknown token", NotAuthorized, bogus.action.package_create,
             name=f"acc-bogus-{SUFFIX}", owner_org=ORG)

    # Revoke by id (jti), the other way.
    tok2 = R.ok("second api_token_create", editor.action.api_token_create, user=ed,
                name=f"acceptance-jti-{SUFFIX}")
    lst = R.ok("api_token_list for the jti", editor.action.api_token_list, user_id=ed) or []
    ids = [t["id"] for t in lst if t.get("name") == f"acceptance-jti-{SUFFIX}"]
    if tok2 and R.check("second token listed", len(ids) == 1, lst):
        R.ok("api_token_revoke(jti=...)", editor.action.api_token_revoke, jti=ids[0])
        R.raises("user_show() with the jti-revoked token", NotFound,
                 RemoteCKAN(URL, apikey=tok2["token"]).action.user_show)

    # A sysadmin may create a token for another user.
    t3 = R.ok("api_token_create by a sysadmin for the member", sysadmin.action.api_token_create,
              user=S["member"]["name"], name=f"acceptance-sys-{SUFFIX}")
    if t3:
        me = R.ok("sysadmin-made token works", RemoteCKAN(URL, apikey=t3["token"]).action.user_show)
        if me:
            R.eq("sysadmin-made token authenticates the member", me.get("name"),
                 S["member"]["name"])
        R.ok("member revokes it", member.action.api_token_revoke, token=t3["token"])


def section_lists():
    ol = R.ok("organization_list", anon.action.organization_list)
    if ol is not None:
        R.check("organization_list has the org", ORG in ol, ol)
        R.check("organization_list has no groups", GRP not in ol, ol)
    gl = R.ok("group_list", anon.action.group_list)
    if gl is not None:
        R.check("group_list has the group", GRP in gl, gl)
        R.check("group_list has no organizations", ORG not in gl, gl)
    ol = R.ok("organization_list all_fields", anon.action.organization_list, all_fields=True,
              organizations=[ORG])
    if ol is not None:
        o = [x for x in ol if x.get("name") == ORG]
        if R.check("organization_list all_fields has the org dict", len(o) == 1, ol):
            o = o[0]
            R.eq("all_fields org id", o.get("id"), S["org"]["id"])
            R.eq("all_fields org title", o.get("title"), "Acceptance Organization")
            R.eq("all_fields org is_organization", o.get("is_organization"), True)
            R.eq("all_fields org package_count (public, anonymous)", o.get("package_count"), 1)
            R.check("all_fields org has no users by default", "users" not in o, o.get("users"))
    gl = R.ok("group_list all_fields", anon.action.group_list, all_fields=True, groups=[GRP])
    if gl is not None:
        g = [x for x in gl if x.get("name") == GRP]
        if R.check("group_list all_fields has the group dict", len(g) == 1, gl):
            g = g[0]
            R.eq("all_fields group id", g.get("id"), S["grp"]["id"])
            R.eq("all_fields group is_organization", g.get("is_organization"), False)
            R.eq("all_fields group package_count", g.get("package_count"), 1)
    shown = R.ok("group_show", anon.action.group_show, id=GRP)
    if shown:
        R.eq("group_show package_count", shown.get("package_count"), 1)


def section_delete():
    R.eq("package_delete returns None",
         R.ok("package_delete by the editor", editor.action.package_delete, id=DS), None)
    shown = R.ok("package_show of a deleted dataset as sysadmin", sysadmin.action.package_show,
                 id=DS)
    if shown:
        R.eq("deleted dataset state", shown.get("state"), "deleted")
        R.eq("deleted dataset keeps its name", shown.get("name"), DS)
    shown = R.ok("package_show of a deleted dataset as an org editor", editor.action.package_show,
                 id=DS)
    if shown:
        R.eq("editor sees state deleted", shown.get("state"), "deleted")
    R.raises("package_show of a deleted dataset as anonymous", NotAuthorized,
             anon.action.package_show, id=DS)
    R.raises("package_show of a deleted dataset as an outsider", NotAuthorized,
             outsider.action.package_show, id=DS)
    lst = R.ok("package_list after delete", anon.action.package_list)
    if lst is not None:
        R.check("deleted dataset not in package_list", DS not in lst, lst)
    # The name of a deleted dataset is free again.
    again = R.ok("package_create reusing a deleted dataset's name", editor.action.package_create,
                 name=DS, owner_org=ORG)
    if again:
        R.check("reused name gets a new id", again.get("id") != S["pkg"]["id"], again.get("id"))


SECTIONS = [
    section_identities,
    section_orgs_and_groups,
    section_create_authorization,
    section_create_and_show,
    section_validation,
    section_update_roles,
    section_resources,
    section_upload,
    section_not_found,
    section_private,
    section_user_privacy,
    section_tokens,
    section_lists,
    section_delete,
]


def main():
    title = f"ckanapi acceptance against {URL} (suffix {SUFFIX})"
    # A RuntimeError means the server is unusable: the remaining sections would only fail.
    return run_sections(R, title, SECTIONS, stop=lambda _section, e: isinstance(e, RuntimeError))


if __name__ == "__main__":
    sys.exit(main())
