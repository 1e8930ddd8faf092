#!/usr/bin/env python3
"""Checks that every write bench/writes.lua saw acknowledged is in the catalog afterwards.

    writes_check.py BASE_URL OUT_DIR MODE RUN PREFIX DATASETS

create:   every acknowledged dataset is found by package_show and by package_search (the
          run's tag).
update:   every updated dataset's notes are the mark of an acknowledged update to it (or of
          one still in flight when wrk stopped, unacknowledged).
resource: every acknowledged resource is in its dataset's resources.
Prints one line `CHECK mode=… acked=… missing=…` and exits 1 when anything is missing.
"""
import glob
import http.client
import json
import sys
import urllib.parse

base, out, mode, run, prefix, datasets = sys.argv[1:7]
datasets = int(datasets)
u = urllib.parse.urlparse(base)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)


def get(action, **params):
    conn.request("GET", f"/api/3/action/{action}?{urllib.parse.urlencode(params)}")
    r = conn.getresponse()
    body = json.loads(r.read())
    return body.get("result") if body.get("success") else None


acked = []
for f in sorted(glob.glob(f"{out}/{mode}-*.acked")):
    acked += [line.strip() for line in open(f) if line.strip()]
unparsed = sum(1 for a in acked if a == "?")
missing = []
if mode == "create":
    for name in acked:
        if name != "?" and (get("package_show", id=name) or {}).get("name") != name:
            missing.append(name)
    # Requests still in flight when wrk stopped may have committed unacknowledged: the
    # search may find more than were acknowledged, never fewer.
    searched, start = set(), 0
    while True:
        page = get("package_search", fq=f"tags:w-{run}", rows=1000, start=start, fl="name")
        names = [d["name"] for d in (page or {}).get("results", [])]
        if not names:
            break
        searched.update(names)
        start += len(names)
    missing += [f"{n} (package_search)" for n in acked if n != "?" and n not in searched]
elif mode == "update":
    marks, acked_set = {}, set(acked)
    for m in acked:
        if m == "?":
            continue
        _run, tid, counter = m.split("-")
        marks.setdefault(f"{prefix}{(int(counter) * 7 + int(tid)) % datasets}", set()).add(m)
    for name, ms in marks.items():
        notes = (get("package_show", id=name) or {}).get("notes") or ""
        mark = notes.removeprefix("mark ")
        if mark in ms:
            continue
        # A request still in flight when wrk stopped (one per connection) may have committed
        # last, unacknowledged: any mark of this run that was not acknowledged.
        parts = mark.split("-")
        if len(parts) == 3 and parts[0] == run and mark not in acked_set:
            continue
        missing.append(f"{name}: notes {notes!r} is no acknowledged update")
else:
    present = set()
    for i in range(datasets):
        for r in (get("package_show", id=f"{prefix}{i}") or {}).get("resources", []):
            present.add(r.get("name"))
    missing = [r for r in acked if r != "?" and r not in present]
print(f"CHECK mode={mode} acked={len(acked)} unparsed={unparsed} missing={len(missing)}")
for m in missing[:5]:
    print(f"  missing: {m}")
sys.exit(1 if missing or unparsed else 0)
