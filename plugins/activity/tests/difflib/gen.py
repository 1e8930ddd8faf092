#!/usr/bin/env python3
"""Generates the fixtures of src/difflib.rs's tests, with CPython as the oracle.

    python3 plugins/activity/tests/difflib/gen.py

writes, next to this script:

- cases_json.json, cases_lines.json: diffs of pairs of CKAN-like package dicts (as activity_diff computes them:
  json.dumps(indent=2, sort_keys=True) then unified_diff / context_diff / wrapped HtmlDiff
  make_table) and of raw line lists (unified, context, ndiff, HtmlDiff make_table).
  Big outputs are kept as their length and FNV-1a 64 hash only.
- big.json: hashes of the diffs of a package with 2500 resources, and of a block of 400 lines
  all rewritten (the Rust test builds the same inputs).
- wrap70.json: re.findall(r".{1,70}(?:\\s+|$)", line) cases.
- dumps.json: json.dumps(json.loads(text), indent=2, sort_keys=True) cases.
- matcher.json: SequenceMatcher over strings (opcodes, grouped opcodes, ratios).
- ckan_sample.json: CKAN 2.x's own answers to activity_diff (unified, context, html) with the
  two package dicts they diff, copied from captured samples when they are at hand
  (/work/shared/ckan-samples/wave2); kept as it is otherwise.

Everything is deterministic (fixed seeds), so re-running it changes nothing unless Python's
difflib does.
"""

import difflib
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = "/work/shared/ckan-samples/wave2"
BIG = 2500  # HTML tables longer than this are stored as length + hash


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def expect(x):
    """x (a string, or a list of lines), or for a big one {"len": bytes, "fnv": hash} of it
    (a list's lines joined by newlines)."""
    text = "\n".join(x) if isinstance(x, list) else x
    if len(text) > BIG:
        return {"len": len(text.encode("utf-8")), "fnv": fnv1a64(text)}
    return x


def make_table(a, b, prefix):
    difflib.HtmlDiff._default_prefix = prefix
    return difflib.HtmlDiff().make_table(a, b)


def wrap(lines):
    wrapped = []
    for line in lines:
        wrapped.extend(re.findall(r".{1,70}(?:\s+|$)", line))
    return wrapped


def activity_diffs(prev, this, prefix):
    """What ckanext/activity/logic/action.py activity_diff computes."""
    obj_lines = [json.dumps(o, indent=2, sort_keys=True).split("\n") for o in (prev, this)]
    return {
        "unified": expect("\n".join(difflib.unified_diff(*obj_lines))),
        "context": expect("\n".join(difflib.context_diff(*obj_lines))),
        "html": expect(make_table(wrap(obj_lines[0]), wrap(obj_lines[1]), prefix)),
        "html_prefix": prefix,
    }


def lines_diffs(a, b, prefix):
    return {
        "unified": expect(list(difflib.unified_diff(a, b))),
        "context": expect(list(difflib.context_diff(a, b))),
        "ndiff": expect(list(difflib.ndiff(a, b))),
        "html": expect(make_table(a, b, prefix)),
        "html_prefix": prefix,
    }


# --- CKAN-like package dicts ---------------------------------------------------------------

ORG = {
    "approval_status": "approved",
    "created": "2024-01-02T03:04:05.123456",
    "description": "Org for captures",
    "id": "2f6d1be0-f7fe-4902-8ca4-bb490bc2d4e9",
    "image_url": "",
    "is_organization": True,
    "name": "w2-org",
    "state": "active",
    "title": "Wave2 Organization",
    "type": "organization",
}


def resource(i, **extra):
    r = {
        "cache_last_updated": None,
        "created": "2024-01-02T03:04:%02d.000000" % (i % 60),
        "description": None,
        "format": "CSV",
        "hash": "",
        "id": "res-%04d" % i,
        "name": "data-%d.csv" % i,
        "position": i,
        "size": None,
        "state": "active",
        "url": "http://example.com/data-%d.csv" % i,
    }
    r.update(extra)
    return r


def package(**changes):
    p = {
        "author": None,
        "author_email": None,
        "extras": [],
        "groups": [],
        "id": "821c96c1-cc16-4647-a0e0-80c65a4fa010",
        "isopen": True,
        "license_id": "cc-by",
        "license_title": "Creative Commons Attribution",
        "metadata_created": "2024-01-02T03:04:05.242623",
        "metadata_modified": "2024-01-02T03:04:05.546435",
        "name": "ds-a",
        "notes": "Notes for A",
        "num_resources": 1,
        "num_tags": 1,
        "organization": ORG,
        "owner_org": ORG["id"],
        "private": False,
        "resources": [resource(0)],
        "state": "active",
        "tags": [{"display_name": "economy", "id": "t-1", "name": "economy", "state": "active"}],
        "title": "Dataset A",
        "type": "dataset",
        "url": None,
        "version": None,
    }
    p.update(changes)
    return p


LONG_NOTES = (
    "This dataset collects the monthly figures reported by every regional office since "
    "2009, with the methodology notes of each revision; see the attached PDF for the "
    "definitions. Supersededdefinitionsarelistedinthelongappendixwithoutanyspacesatalltotest"
    "wrapping of very long words. Figures are provisional for the last three months."
)


def json_cases():
    cases = []
    base = package()
    cases.append(("one_changed_field", base, package(title="Dataset A (updated title)",
                                                     metadata_modified="2024-01-02T03:04:06.1")))
    cases.append(("resource_added", base, package(
        num_resources=2,
        resources=[resource(0), resource(1, format="JSON", description="added by resource_create",
                                        mimetype="application/json")])))
    cases.append(("nested_extras", package(extras=[
        {"key": "spatial", "value": '{"type": "Point", "coordinates": [1.5, 2.25]}'},
        {"key": "theme", "value": "economy"},
    ]), package(extras=[
        {"key": "spatial", "value": '{"type": "Point", "coordinates": [1.5, 2.5]}'},
        {"key": "temporal", "value": {"from": "2020", "to": "2024", "nested": {"deep": [1, [2, []], {}]}}},
        {"key": "theme", "value": "economy & finance <b>"},
    ])))
    cases.append(("unicode_titles", package(title="Données ouvertes 😀 — 東京都の統計"),
                  package(title="Données ouvertes 😀😀 — 東京都の統計データ",
                          notes="Ünïcödé\tnotes\nwith a newline and \u2028 separator 𝄞")))
    cases.append(("floats", package(extras=[{"key": "values", "value": [0.1, 1.0, 1e16, 1e-05, 123.456]}]),
                  package(extras=[{"key": "values", "value": [0.2, 2.0, 1e17, 0.0001, 123.4567, -0.0, 1.5e300,
                                                                 12345678901234567890, -7]}])))
    # Short resources, to keep the fixture small: 1500 lines, "{", "}," and the like popular.
    many = [{"format": "CSV", "id": "r%d" % i, "name": "d%d.csv" % i} for i in range(300)]
    many2 = [dict(r) for r in many]
    many2[150] = {"format": "XLSX", "id": "r150", "name": "renamed.xlsx"}
    many2.append({"format": "JSON", "id": "r300", "name": "new.json"})
    cases.append(("three_hundred_resources", package(resources=many, num_resources=300),
                  package(resources=many2, num_resources=301)))
    cases.append(("identical", base, package()))
    cases.append(("empty_vs_object", {}, base))
    cases.append(("object_vs_empty", base, {}))
    cases.append(("long_notes", package(notes=LONG_NOTES),
                  package(notes=LONG_NOTES.replace("monthly", "weekly").replace("2009", "2010")
                          .replace("Figures are provisional", "Figures, all of them, are final"))))
    cases.append(("many_changes", package(tags=[{"name": "t%d" % i} for i in range(12)], version="1.0"),
                  package(tags=[{"name": "t%d" % i} for i in range(0, 12, 2)] + [{"name": "new"}],
                          version="1.1", state="deleted", private=True, author="Someone")))
    out = []
    for prefix, (name, prev, this) in enumerate(cases):
        case = {"name": name, "prev": prev, "this": this}
        case.update(activity_diffs(prev, this, prefix))
        out.append(case)
    return out


# --- raw line lists ------------------------------------------------------------------------

def random_lines(rng, n):
    words = ["alpha", "beta", "gamma", "delta", "  indent", "\tTab", "x", "", "été", "a&b<c>",
             "same line", "same line", "{", "},", "    \"k\": null,"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(0, 4))) for _ in range(n)]


def mutate(rng, lines):
    out = []
    for line in lines:
        r = rng.random()
        if r < 0.55:
            out.append(line)
        elif r < 0.7:
            # small edit: keeps the ratio high (fancy replace with ? lines)
            if line:
                k = rng.randrange(len(line))
                out.append(line[:k] + rng.choice(["Z", "", "  ", "\t", "é"]) + line[k + 1:])
            else:
                out.append("new")
        elif r < 0.8:
            pass  # deleted
        elif r < 0.9:
            out.append(line)
            out.append(rng.choice(["inserted", "", "same line", line + "!"]))
        else:
            out.append("replaced " + str(rng.randint(0, 99)))
    return out


def lines_cases():
    cases = [
        ("difflib_doc", ["one", "two", "three", "four"],
         ["ore", "tree", "emu"]),
        ("ndiff_doc", ["one", "two", "three"], ["ore", "tree", "emu"]),
        ("tabs_and_html", ["a\tb\tc", "\t\tdeep", "x < y && y > z", "same", "trail   "],
         ["a\tb c", "\t deep", "x <= y && y > z", "same", "trail \t"]),
        ("both_empty", [], []),
        ("from_empty", [], ["new 1", "new 2"]),
        ("to_empty", ["old 1", "old 2", "old 3"], []),
        ("empty_strings", ["", "", "a"], ["", "b", ""]),
        ("unicode", ["東京都の統計データ", "emoji 😀 here", "Ünïcödé"],
         ["東京都の統計", "emoji 😀😀 here", "Unicode"]),
        ("odd_whitespace", ["a\x1cb\x1fc \u3000 d\x0b", "nul\x00byte", "x\u2028y", "end\r"],
         ["a\x1db\x1fc \u3000 e\x0c", "nul byte", "x\u2029y", "end"]),
        ("markup_chars", ["\x01already closed", "plus +++ minus --- caret ^^^"],
         ["\x01already  closed", "plus ++ minus -- caret ^^"]),
        ("long_lines_autojunk", ["a" * 150 + " middle " + "b" * 120, "c" * 250],
         ["a" * 149 + " middle! " + "b" * 121, "c" * 240 + "d" * 10]),
        ("lines_with_newlines", ["first\n", "second\n\n", "third"], ["first\n", "second!\n\n", "third\n"]),
        ("identical_lines", ["same", "same"], ["same", "same"]),
        ("all_replaced_low_ratio", ["aaaa", "bbbb", "cccc"], ["xxxx", "yyyy"]),
        ("equal_in_replace", ["q", "common", "r"], ["s", "common", "t"]),
        # _fancy_replace nesting 80 deep (the best pair is always the last one).
        ("deep_fancy_chain", ["x" * k + "a" for k in range(1, 81)], ["x" * k + "b" for k in range(1, 81)]),
    ]
    rng = random.Random(20240601)
    for k in range(40):
        a = random_lines(rng, rng.randint(0, 25))
        b = mutate(rng, a)
        if rng.random() < 0.3:
            rng.shuffle(b)
        cases.append(("random_%02d" % k, a, b))
    # Long, for the line-level autojunk (>= 200 lines, popular lines) and the html counters.
    a = random_lines(rng, 400)
    cases.append(("random_long", a, mutate(rng, a)))
    out = []
    for prefix, (name, a, b) in enumerate(cases):
        case = {"name": name, "a": a, "b": b}
        case.update(lines_diffs(a, b, prefix * 7 + 3))
        out.append(case)
    return out


# --- wrap70 --------------------------------------------------------------------------------

def wrap70_cases():
    inputs = [
        "",
        "short",
        "x" * 70,
        "x" * 71,
        "x" * 69 + " ",
        "x" * 70 + " ",
        "x" * 70 + "   ",
        "x" * 71 + "   yy",
        "x" * 200,
        "x" * 150 + " " + "y" * 30,
        ("word " * 40).strip(),
        "word " * 40,
        "  leading spaces and trailing   ",
        " " * 100,
        "\t" * 3 + "tabs\tinside\t" * 10,
        "é" * 70 + "ü",
        "é" * 69 + " 東京" * 20,
        "😀" * 71 + " ok",
        "a\nb",
        "line with newline at end\n",
        "line with two newlines at end\n\n",
        "\n\nstarts with newlines",
        "x" * 68 + "\n" + "y" * 80,
        "nbsp\u00a0separated\u00a0words " * 8,
        "ideographic\u3000space\u3000" * 10,
        "sep\x1cinfo\x1dseparators\x1e\x1f" * 6,
        "  \"notes\": \"" + LONG_NOTES + "\",",
        "  \"url\": \"http://example.com/" + "a/b/c/" * 20 + "\",",
    ]
    return [{"input": s, "output": re.findall(r".{1,70}(?:\s+|$)", s)} for s in inputs]


# --- json.dumps ----------------------------------------------------------------------------

def dumps_cases():
    texts = [
        "null", "true", "false", "0", "-1", "9223372036854775807", "18446744073709551615",
        "-9223372036854775808", "0.0", "-0.0", "1.0", "1.5", "0.1", "100.0", "1e16", "1e15",
        "123456789012345.6", "9999999999999998.0", "1e-05", "0.0001", "0.00012345", "1e-7",
        "1.5e300", "2.5e-300", "5e-324", "1.7976931348623157e308", "3.141592653589793",
        "0.30000000000000004", "1e22", "123e-20", "4.35", "2.675",
        '""', '"plain"', '"quote \\" backslash \\\\ slash /"', '"\\b\\f\\n\\r\\t"',
        '"\\u0000\\u0001\\u001f\\u007f\\u0080\\u00ff"', '"caf\\u00e9 \\u6771\\u4eac"',
        '"\\ud83d\\ude00 \\ud834\\udd1e"', '"\\u2028\\u2029"',
        "[]", "{}", "[[]]", "[{}]", '{"a": {}}', '{"a": []}',
        '[1, [2, [3, []]], {"x": {"y": null}}]',
        '{"b": 1, "a": 2, "A": 3, "_": 4, "é": 5, "z": 6, "😀": 7, "東": 8, "": 9, "aa": 10, "a b": 11}',
        '{"nested": {"list": [1, 2.5, "three", null, true, {"k": "v"}], "empty": {}}}',
    ]
    rng = random.Random(7)
    for _ in range(30):
        # random doubles, written as repr (exactly representable text, so parsers agree)
        x = rng.choice([rng.random(), rng.uniform(-1e6, 1e6), rng.random() * 10 ** rng.randint(-30, 30),
                        float(rng.randint(-10**17, 10**17))])
        texts.append(repr(x))
    return [{"json": t, "dumps": json.dumps(json.loads(t), indent=2, sort_keys=True)} for t in texts]


# --- SequenceMatcher -----------------------------------------------------------------------

def matcher_cases():
    pairs = [
        ("", "", False),
        ("abc", "", False),
        ("", "abc", False),
        ("abxcd", "abcd", False),
        ("qabxcd", "abycdf", False),
        ("private Thread currentThread;", "private volatile Thread currentThread;", True),
        (" abcd", "abcd abcd", True),
        ("a" * 150 + "b" * 60, "a" * 140 + "c" + "b" * 70, False),
        ("the quick brown fox", "the quick brown fox", True),
        ("tabs\tand spaces", "tabs and\tspaces", True),
        ("東京都の統計データ", "東京都の統計", False),
    ]
    rng = random.Random(99)
    for _ in range(15):
        a = "".join(rng.choice("ab c") for _ in range(rng.randint(0, 260)))
        b = "".join(rng.choice("ab c") for _ in range(rng.randint(0, 260)))
        pairs.append((a, b, rng.random() < 0.5))
    out = []
    for a, b, junk in pairs:
        sm = difflib.SequenceMatcher(difflib.IS_CHARACTER_JUNK if junk else None, a, b)
        out.append({
            "a": a, "b": b, "junk": junk,
            "matching_blocks": [list(m) for m in sm.get_matching_blocks()],
            "opcodes": [list(o) for o in sm.get_opcodes()],
            "grouped": [[list(o) for o in g] for g in sm.get_grouped_opcodes(3)],
            "ratio": repr(sm.ratio()),
            "quick_ratio": repr(sm.quick_ratio()),
            "real_quick_ratio": repr(sm.real_quick_ratio()),
            "longest_2_8_1_9": list(sm.find_longest_match(2, min(8, len(a)), 1, min(9, len(b))))
            if len(a) >= 2 and len(b) >= 1 else None,
        })
    return out


# --- big inputs (the Rust test builds the same) -----------------------------------------------

def big_cases():
    resources = [{"id": "r%d" % i, "name": "data %d" % i, "format": "CSV", "size": None,
                  "url": "http://example.com/%d.csv" % i} for i in range(2500)]
    prev = {"name": "big", "resources": resources}
    this = json.loads(json.dumps(prev))
    this["resources"][1000]["name"] = "renamed"
    del this["resources"][2000]
    this["resources"].append({"id": "new"})
    diffs = activity_diffs(prev, this, 7)
    # A wholly rewritten block: _fancy_replace pairs lines hundreds of levels deep.
    a = ["x" * (k % 7 + 1) + "a" for k in range(1, 401)]
    b = ["x" * (k % 7 + 1) + "b" for k in range(1, 401)]
    return {
        "package": diffs,
        "rewritten": {"ndiff": expect(list(difflib.ndiff(a, b))), "html": expect(make_table(a, b, 0))},
    }


# --- CKAN's own answers --------------------------------------------------------------------

def ckan_sample():
    path = os.path.join(HERE, "ckan_sample.json")
    files = {
        "unified": "061_activity_diff_unified_sysadmin.json",
        "context": "063_activity_diff_context.json",
        "html": "064_activity_diff_html.json",
    }
    if not os.path.isdir(SAMPLES):
        print("no samples at %s: ckan_sample.json left as it is" % SAMPLES, file=sys.stderr)
        return
    sample = {"source": "CKAN 2.x activity_diff answers captured in %s" % ", ".join(files.values())}
    for kind, name in files.items():
        with open(os.path.join(SAMPLES, name)) as f:
            result = json.load(f)["result"]
        prev, this = (result["activities"][i]["data"]["package"] for i in (0, 1))
        if "prev" in sample:
            assert (sample["prev"], sample["this"]) == (prev, this), name
        sample["prev"], sample["this"] = prev, this
        sample[kind] = result["diff"]
    # Our oracle agrees with CKAN (HtmlDiff's counter at 0, as in the capture).
    expected = activity_diffs(sample["prev"], sample["this"], 0)
    assert expected["unified"] == sample["unified"]
    assert expected["context"] == sample["context"]
    assert make_table(wrap(json.dumps(sample["prev"], indent=2, sort_keys=True).split("\n")),
                      wrap(json.dumps(sample["this"], indent=2, sort_keys=True).split("\n")),
                      0) == sample["html"]
    write("ckan_sample.json", sample)


def write(name, data):
    """Compact JSON, a list one item a line."""
    def compact(x):
        return json.dumps(x, ensure_ascii=False, separators=(",", ":"))
    if isinstance(data, list):
        text = "[\n" + ",\n".join(compact(x) for x in data) + "\n]\n"
    else:
        text = compact(data) + "\n"
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        f.write(text)


def main():
    write("cases_json.json", json_cases())
    write("cases_lines.json", lines_cases())
    write("big.json", big_cases())
    write("wrap70.json", wrap70_cases())
    write("dumps.json", dumps_cases())
    write("matcher.json", matcher_cases())
    ckan_sample()


if __name__ == "__main__":
    main()
