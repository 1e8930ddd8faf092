//! Schema files (the scheming plugin) against CKAN 2.12 with ckanext-scheming 3.1 and
//! ckanext-dcat 2.4.4's `dcat_ap_full`: the captured answers in `scheming/` (from
//! ../shared/ckan-samples/scheming) matched key by key, ids and timestamps aside, on both
//! stores.

use catalog_host::testkit::{stores, StoreKind, TestApp};
use serde_json::{json, Map, Value};

fn sample(name: &str) -> Value {
    let path = format!(
        "{}/tests/integration/scheming/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("JSON")
}

/// An app whose `dataset` type is ckanext-dcat's `dcat_ap_full` (CKAN's spelling of the
/// settings, as a CKAN config gives them).
async fn dcat_app(kind: StoreKind) -> TestApp {
    TestApp::start_with(kind, |config| {
        config.catalog.other.insert(
            "scheming".into(),
            json!({
                "dataset_schemas": "ckanext.dcat.schemas:dcat_ap_full.yaml",
                "presets": "ckanext.scheming:presets.json ckanext.dcat.schemas:presets.yaml",
            }),
        );
    })
    .await
}

/// `{U}`, `{ORG_ID}` … filled in, recursively.
fn fill(v: &Value, vars: &[(&str, &str)]) -> Value {
    match v {
        Value::String(s) => {
            let mut s = s.clone();
            for (k, val) in vars {
                s = s.replace(k, val);
            }
            Value::String(s)
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| fill(i, vars)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), fill(v, vars))).collect())
        }
        other => other.clone(),
    }
}

/// The keys CKAN's samples write as `<ts>`, `<uuid>`, `<user>`, made so in our answer too.
fn redact(v: &mut Value) {
    if let Value::Object(m) = v {
        for (k, val) in m.iter_mut() {
            match k.as_str() {
                "metadata_created" | "metadata_modified" | "created" if val.is_string() => {
                    *val = json!("<ts>")
                }
                "creator_user_id" => *val = json!("<user>"),
                _ => redact(val),
            }
        }
        if let Some(Value::Array(tags)) = m.get_mut("tags") {
            for t in tags.iter_mut().filter_map(Value::as_object_mut) {
                t.insert("id".into(), json!("<uuid>"));
            }
        }
    } else if let Value::Array(items) = v {
        items.iter_mut().for_each(redact);
    }
}

/// Every difference between two JSON values, by path.
fn diff(path: &str, ours: &Value, theirs: &Value, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, bv) in b {
                match a.get(k) {
                    Some(av) => diff(&format!("{path}.{k}"), av, bv, out),
                    None => out.push(format!("{path}.{k}: missing (CKAN: {bv})")),
                }
            }
            for (k, av) in a {
                if !b.contains_key(k) {
                    out.push(format!("{path}.{k}: extra ({av})"));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (av, bv)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), av, bv, out);
            }
        }
        (a, b) if a != b => out.push(format!("{path}: {a} (CKAN: {b})")),
        _ => {}
    }
}

fn assert_same(ours: &Value, theirs: &Value, what: &str) {
    let mut out = Vec::new();
    diff("", ours, theirs, &mut out);
    assert!(
        out.is_empty(),
        "{what} differs from CKAN's:\n{}",
        out.join("\n")
    );
}

#[tokio::test]
async fn schema_actions_answer_as_ckan_does() {
    for kind in stores().await {
        let app = dcat_app(kind).await;
        let lists = sample("schema_lists");
        for (kind_name, action) in [
            ("dataset", "scheming_dataset_schema_list"),
            ("group", "scheming_group_schema_list"),
            ("organization", "scheming_organization_schema_list"),
        ] {
            let ours = app.call(None, action, json!({})).await.unwrap();
            assert_eq!(
                ours, lists[kind_name]["answer"]["result"],
                "{action} on {kind}"
            );
        }
        let expanded = app
            .call(
                None,
                "scheming_dataset_schema_show",
                json!({"type": "dataset"}),
            )
            .await
            .unwrap();
        assert_same(
            &expanded,
            &sample("schema_show_dataset")["answer"]["result"],
            "expanded schema",
        );
        // A GET's "false" is a non-empty string: still expanded; only JSON false is not.
        let get_false = app
            .call(
                None,
                "scheming_dataset_schema_show",
                json!({"type": "dataset", "expanded": "false"}),
            )
            .await
            .unwrap();
        assert_eq!(get_false, expanded);
        let raw = app
            .call(
                None,
                "scheming_dataset_schema_show",
                json!({"type": "dataset", "expanded": false}),
            )
            .await
            .unwrap();
        assert_same(
            &raw,
            &sample("schema_show_dataset_unexpanded")["answer"]["result"],
            "unexpanded schema",
        );
        let e = app
            .err(
                None,
                "scheming_dataset_schema_show",
                json!({"type": "nope"}),
            )
            .await;
        assert_eq!(e["__type"], "Not Found Error");
        let e = app
            .err(None, "scheming_dataset_schema_show", json!({}))
            .await;
        assert_eq!(e["type"], json!(["Missing value"]));
    }
}

#[tokio::test]
async fn scheming_actions_are_unknown_without_schema_files() {
    for kind in stores().await {
        let app = TestApp::start(kind).await;
        let e = app
            .err(None, "scheming_dataset_schema_list", json!({}))
            .await;
        assert_eq!(e["__type"], "Not Found Error", "{e}");
    }
}

#[tokio::test]
async fn a_dcat_ap_full_dataset_is_stored_and_shown_as_ckan_does() {
    for kind in stores().await {
        let app = dcat_app(kind).await;
        let u = "t1";
        let org = app
            .ok(
                "organization_create",
                json!({"name": format!("sch-org-{u}"), "title": "Scheming Org"}),
            )
            .await;
        let org_id = org["id"].as_str().unwrap().to_string();
        let vars = [("{U}", u), ("{ORG_ID}", org_id.as_str())];
        let input = fill(&sample("dcat_ap_full_input"), &vars);
        let created = app.ok("package_create", input).await;
        let id = created["id"].as_str().unwrap().to_string();
        let res_id = created["resources"][0]["id"].as_str().unwrap().to_string();
        let vars = [
            ("{U}", u),
            ("{ORG_ID}", org_id.as_str()),
            ("{DATASET_FULL_ID}", id.as_str()),
            ("{RESOURCE_FULL_0_ID}", res_id.as_str()),
        ];
        let expected = fill(&sample("package_show_full")["answer"]["result"], &vars);
        let mut shown = app
            .call(None, "package_show", json!({"id": id}))
            .await
            .unwrap();
        redact(&mut shown);
        assert_same(&shown, &expected, &format!("package_show on {kind}"));

        // A patch of one repeating field replaces it; `[]` removes a repeating field but a
        // multiple_text field comes back as [].
        app.ok(
            "package_patch",
            json!({"id": id, "publisher": [{"name": "Other"}], "qualified_relation": [], "theme": []}),
        )
        .await;
        let shown = app
            .call(None, "package_show", json!({"id": id}))
            .await
            .unwrap();
        assert_eq!(shown["publisher"], json!([{"name": "Other"}]));
        assert!(
            shown.get("qualified_relation").is_none(),
            "{}",
            shown["qualified_relation"]
        );
        assert_eq!(shown["theme"], json!([]));
        assert_eq!(
            shown["contact"], expected["contact"],
            "untouched fields stay"
        );
    }
}

#[tokio::test]
async fn validation_failures_give_ckans_error_dicts_and_change_nothing() {
    for kind in stores().await {
        let app = dcat_app(kind).await;
        let org = app
            .ok(
                "organization_create",
                json!({"name": "sch-org-e", "title": "Scheming Org"}),
            )
            .await;
        let org_id = org["id"].as_str().unwrap().to_string();
        let vars = [("{U}", "e"), ("{ORG_ID}", org_id.as_str())];
        let index = sample_index();
        for name in [
            "error_choices",
            "error_required_missing",
            "error_subfield_dict",
        ] {
            let body = fill(&index[name]["request"]["body"], &vars);
            let expected = fill(&sample(name)["answer"], &vars);
            let e = app
                .fail(Some(&app.admin), "package_create", body.clone())
                .await;
            let status = sample(name)["status"].as_u64().unwrap();
            assert_eq!(
                u64::from(e.status().as_u16()),
                status,
                "{name}: {}",
                e.to_error_object()
            );
            let ours = e.to_error_object();
            if name == "error_subfield_dict" {
                // The message names the field; CKAN's data echo has `type` added.
                assert_eq!(ours["__type"], expected["error"]["__type"]);
                assert_eq!(ours["message"], expected["error"]["message"]);
            } else {
                assert_same(&ours, &expected["error"], name);
            }
            let gone = app
                .err(None, "package_show", json!({"id": body["name"]}))
                .await;
            assert_eq!(gone["__type"], "Not Found Error", "{name} wrote nothing");
        }
        // Subfield errors follow the list's shape, `{}` for a valid item.
        let e = app
            .err(
                Some(&app.admin),
                "package_create",
                json!({"name": "sch-e-dates", "notes": "n", "owner_org": org_id,
                       "temporal_coverage": [{"start": "2024"}, {"start": "2024-13-45"}]}),
            )
            .await;
        assert_eq!(
            e["temporal_coverage"],
            json!([{}, {"start": ["Date format incorrect. Supported formats are YYYY, YYYY-MM, YYYY-MM-DD and YYYY-MM-DDTHH:MM:SS"]}])
        );
        // multiple_text refuses a dict; a plain string is a one-item list.
        let e = app
            .err(
                Some(&app.admin),
                "package_create",
                json!({"name": "sch-e-theme", "notes": "n", "owner_org": org_id, "theme": {"a": 1}}),
            )
            .await;
        assert_eq!(e["theme"], json!(["expecting list of strings"]));
        let ok = app
            .ok(
                "package_create",
                json!({"name": "sch-e-theme", "notes": "n", "owner_org": org_id, "theme": "http://x.org/t",
                       "title": "", "spatial_resolution_in_meters": 1.5}),
            )
            .await;
        assert_eq!(ok["theme"], json!(["http://x.org/t"]));
        assert_eq!(ok["title"], "sch-e-theme", "a missing title is the name");
        assert_eq!(
            ok["spatial_resolution_in_meters"], "1.5",
            "a dataset-level extra is text"
        );
        assert_eq!(ok.get("extras"), None, "every extra is a schema field");
        // NUL, wrong types at every level and a huge list are refused with nothing written.
        let many: Vec<Value> = (0..20_000)
            .map(|i| json!({"name": format!("c{i}")}))
            .collect();
        let e = app
            .fail(
                Some(&app.admin),
                "package_create",
                json!({"name": "sch-e-many", "notes": "n", "owner_org": org_id, "contact": many}),
            )
            .await;
        assert_eq!(
            e.to_error_object()["contact"],
            json!(["Must hold at most 10000 items"])
        );
        let e = app
            .err(
                Some(&app.admin),
                "package_create",
                json!({"name": "sch-e-nul", "notes": "n", "owner_org": org_id,
                       "contact": [{"name": "a\u{0}b"}], "theme": ["x\u{0}"]}),
            )
            .await;
        assert_eq!(e["__type"], "Validation Error", "{e}");
        assert!(e["contact"].is_array() && e["theme"].is_array(), "{e}");
        let e = app
            .fail(
                Some(&app.admin),
                "package_create",
                json!({"name": "sch-e-deep", "notes": "n", "owner_org": org_id,
                       "provenance_activity": [{"wasAssociatedWith": [{"actedOnBehalfOf": "x"}]}]}),
            )
            .await;
        assert_eq!(
            e.to_error_object()["message"],
            "Only lists of dicts can be placed against subschema ('provenance_activity', 0, 'wasAssociatedWith', 0, 'actedOnBehalfOf'), not <class 'str'>"
        );
        let listed = app.ok("package_list", json!({})).await;
        assert_eq!(
            listed,
            json!(["sch-e-theme"]),
            "only the valid dataset was written"
        );
    }
}

fn sample_index() -> Map<String, Value> {
    let text = std::fs::read_to_string(format!(
        "{}/tests/integration/scheming/index.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("index.json");
    serde_json::from_str(&text).expect("JSON")
}

#[tokio::test]
async fn bad_schema_files_stop_start_up_naming_file_field_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("unknown_preset.yaml", "scheming_version: 2\ndataset_type: t\ndataset_fields:\n- field_name: a\n  preset: nope\n", "line 5: field \"a\": preset 'nope' not defined"),
        ("unknown_validator.yaml", "dataset_type: t\ndataset_fields:\n- field_name: a\n  validators: ignore_missing frobnicate\n", "line 4: field \"a\": validator/converter not found: \"frobnicate\""),
        ("unknown_key.yaml", "dataset_type: t\ndataset_fields:\n- field_name: a\n  lable: A\n", "line 4: field \"a\": unknown key \"lable\""),
        ("duplicate.yaml", "dataset_type: t\ndataset_fields:\n- field_name: a\n- field_name: a\n", "line 4: field \"a\": the field is defined twice"),
        ("deep.yaml", "dataset_type: t\ndataset_fields:\n- field_name: a\n  repeating_subfields:\n  - field_name: b\n    repeating_subfields:\n    - field_name: c\n      repeating_subfields:\n      - field_name: d\n        repeating_subfields:\n        - field_name: e\n", "field \"d\": repeating subfields nest deeper than 4 levels"),
        ("bomb.yaml", &bomb(), "more than 200000 nodes"),
        ("top.yaml", "dataset_type: t\ndataset_feilds: []\n", "line 2: unknown key \"dataset_feilds\""),
    ];
    for (file, text, message) in cases {
        let path = dir.path().join(file);
        std::fs::write(&path, text).unwrap();
        let p = path.to_string_lossy().to_string();
        let data = tempfile::tempdir().unwrap();
        let mut config = catalog_host::Config::default();
        config
            .catalog
            .other
            .insert("scheming".into(), json!({"dataset_schemas": [p.clone()]}));
        let url = catalog_host::Store::sqlite_url_in(data.path());
        let err = match catalog_host::build_app(config, &url, data.path().into()).await {
            Ok(_) => panic!("{file}: started"),
            Err(e) => format!("{e:#}"),
        };
        assert!(err.contains(&p), "{file}: names the file: {err}");
        assert!(err.contains(message), "{file}: {err}");
    }
}

fn bomb() -> String {
    let mut text = String::from("dataset_type: t\nx0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let p = i - 1;
        let refs = vec![format!("*a{p}"); 10].join(", ");
        text.push_str(&format!("x{i}: &a{i} [{refs}]\n"));
    }
    text
}

#[tokio::test]
async fn schema_fields_are_searchable_and_facetable_on_both_backends() {
    for kind in stores().await {
        let app = dcat_app(kind).await;
        let org = app
            .ok(
                "organization_create",
                json!({"name": "sch-org-s", "title": "Scheming Org"}),
            )
            .await;
        let org_id = org["id"].as_str().unwrap().to_string();
        for (name, frequency, theme, contact) in [
            ("sch-s-a", "monthly", "http://x.org/t/air", "Desk"),
            ("sch-s-b", "monthly", "http://x.org/t/water", "Lab"),
            ("sch-s-c", "daily", "http://x.org/t/air", "Field"),
        ] {
            app.ok(
                "package_create",
                json!({"name": name, "notes": "n", "owner_org": org_id, "frequency": frequency,
                       "theme": [theme], "contact": [{"name": contact, "email": "x@example.org"}]}),
            )
            .await;
        }
        let names = |r: &Value| {
            let mut n: Vec<String> = r["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["name"].as_str().unwrap().to_string())
                .collect();
            n.sort();
            n
        };
        let r = app
            .ok(
                "package_search",
                json!({"fq": "theme:\"http://x.org/t/air\""}),
            )
            .await;
        assert_eq!(
            names(&r),
            ["sch-s-a", "sch-s-c"],
            "fq on a multiple_text field ({kind})"
        );
        let r = app
            .ok(
                "package_search",
                json!({"fq": "frequency:monthly", "facet.field": ["frequency"]}),
            )
            .await;
        assert_eq!(
            names(&r),
            ["sch-s-a", "sch-s-b"],
            "fq on a text field ({kind})"
        );
        let r = app
            .ok(
                "package_search",
                json!({"facet.field": ["frequency"], "rows": 0}),
            )
            .await;
        assert_eq!(
            r["search_facets"]["frequency"]["items"]
                .as_array()
                .map(|i| i.len()),
            Some(2),
            "facets on a schema field ({kind}): {}",
            r["search_facets"]
        );
        assert_eq!(r["facets"]["frequency"]["monthly"], 2, "{kind}");
        let r = app
            .ok("package_search", json!({"q": "extras_contact__name:Lab"}))
            .await;
        assert_eq!(
            names(&r),
            ["sch-s-b"],
            "a repeating subfield, flattened ({kind})"
        );
        let r = app.ok("package_search", json!({"q": "Field"})).await;
        assert_eq!(
            names(&r),
            ["sch-s-c"],
            "subfields are in the full text ({kind})"
        );
        // Results carry the dict package_show answers.
        let r = app.ok("package_search", json!({"q": "name:sch-s-a"})).await;
        assert_eq!(r["results"][0]["theme"], json!(["http://x.org/t/air"]));
        assert_eq!(r["results"][0]["contact"][0]["name"], "Desk");
    }
}

#[test]
fn scheming_check_checks_files_without_starting_anything() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "dataset_type: t\ndataset_fields:\n- field_name: a\n  preset: selct\n",
    )
    .unwrap();
    // The book's example schema (book/src/operator-guide/schema-files.md).
    let book = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/book/src/operator-guide/schema-files.md"
    ))
    .unwrap();
    let example = book
        .split("```yaml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the book's schema example");
    let book_schema = dir.path().join("sensor.yaml");
    std::fs::write(&book_schema, example).unwrap();
    let config = dir.path().join("catalog.toml");
    std::fs::write(
        &config,
        "[scheming]\npresets = \"ckanext.scheming:presets.json ckanext.dcat.schemas:presets.yaml\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_catalog"))
        .args(["--config", config.to_str().unwrap(), "--data-dir"])
        .arg(dir.path().join("data"))
        .args([
            "scheming",
            "check",
            "ckanext.dcat.schemas:dcat_ap_full.yaml",
            "ckanext.scheming:org_with_dept_id.json",
        ])
        .arg(&bad)
        .arg(&book_schema)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        "ckanext.dcat.schemas:dcat_ap_full.yaml: ok (dataset type `dataset`, 36 fields, 26 resource fields)"
    );
    assert_eq!(
        lines[1],
        "ckanext.scheming:org_with_dept_id.json: ok (organization type `organization`, 5 fields)"
    );
    assert_eq!(
        lines[2],
        format!(
            "{}: line 4: field \"a\": preset 'selct' not defined",
            bad.display()
        )
    );
    assert_eq!(
        lines[3],
        format!(
            "{}: ok (dataset type `sensor_dataset`, 7 fields, 1 resource fields)",
            book_schema.display()
        )
    );
    assert!(!dir.path().join("data").exists(), "nothing was started");

    // `scheming validate`: the error object the API would answer, exit code 1.
    let dataset = dir.path().join("dataset.json");
    std::fs::write(&dataset, r#"{"name": "a-dataset", "notes": "n", "owner_org": "o", "issued": "2024-13-45", "contact": [{"name": "x"}]}"#).unwrap();
    let validate = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_catalog"))
            .args([
                "--config",
                config.to_str().unwrap(),
                "scheming",
                "validate",
                "--schema",
            ])
            .arg("ckanext.dcat.schemas:dcat_ap_full.yaml")
            .args(extra)
            .arg(&dataset)
            .output()
            .unwrap()
    };
    let out = validate(&[]);
    assert_eq!(out.status.code(), Some(1));
    let e: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["__type"], "Validation Error");
    assert_eq!(
        e["issued"],
        json!(["Date format incorrect. Supported formats are YYYY, YYYY-MM, YYYY-MM-DD and YYYY-MM-DDTHH:MM:SS"])
    );
    std::fs::write(&dataset, r#"{"name": "a-dataset", "notes": "n", "owner_org": "o", "issued": "2024-05", "contact": [{"name": "x"}]}"#).unwrap();
    let out = validate(&["--repeat", "3"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["contact"], json!([{"name": "x"}]));
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 validations:"));
}

/// ckanext-scheming's own `test_validation.py`, the cases that apply over the API, against
/// schemas of the same fields as its test schemas (ours, written here).
const CAMEL_SCHEMA: &str = r#"
scheming_version: 2
dataset_type: test-schema
dataset_fields:
- {field_name: title, label: Title, preset: title}
- {field_name: name, label: URL, preset: dataset_slug}
- {field_name: humps, label: Humps, validators: ignore_missing int_validator}
- field_name: category
  label: Category
  preset: select
  choices:
  - {value: bactrian, label: Bactrian Camel}
  - {value: hybrid, label: Hybrid Camel}
  - {value: f2hybrid, label: F2 Hybrid Camel}
  - {value: snowwhite, label: Snow-white Dromedary}
  - {value: black, label: Black Camel}
- {field_name: a_relevant_date, label: A relevant date, preset: date}
- {field_name: a_json_field, label: A JSON field, preset: json_object}
resource_fields:
- {field_name: url, label: URL, preset: resource_url_upload}
- {field_name: camels_in_photo, label: Camels, validators: ignore_missing int_validator}
- {field_name: date, label: Date, preset: date}
- {field_name: a_resource_json_field, label: JSON, preset: json_object}
"#;

const SUBFIELDS_SCHEMA: &str = r#"
dataset_type: test-subfields
dataset_fields:
- {field_name: title, label: Title, preset: title, required: true}
- {field_name: name, label: URL, preset: dataset_slug}
- field_name: citation
  label: Citation
  repeating_subfields:
  - {field_name: originator, label: Originator, preset: multiple_text, required: true}
  - {field_name: publication_date, label: Publication Date, preset: date}
- field_name: contact_address
  label: Contact Address
  repeating_subfields:
  - {field_name: address, label: Address, required: true}
  - {field_name: city, label: City}
resource_fields:
- {field_name: url, label: URL, preset: resource_url_upload}
- field_name: schedule
  label: Schedule
  repeating_subfields:
  - field_name: impact
    label: Impact
    preset: select
    required: true
    choices: [{value: A, label: All}, {value: P, label: Partial}, {value: C, label: Corrections}]
  - field_name: frequency
    label: Frequency
    preset: select
    choices: [{value: 1d, label: Daily}, {value: 7d, label: Weekly}, {value: 1m, label: Monthly}]
"#;

/// A `package_create` dict of dataset type `t` named `name`, with `extra`'s members.
fn typed(t: &str, name: &str, extra: Value) -> Value {
    let mut p = json!({"type": t, "name": name});
    if let (Some(p), Value::Object(extra)) = (p.as_object_mut(), extra) {
        p.extend(extra);
    }
    p
}

#[tokio::test]
async fn ckanext_schemings_validation_tests_pass() {
    let dir = tempfile::tempdir().unwrap();
    let camel = dir.path().join("test_schema.yaml");
    let subfields = dir.path().join("test_subfields.yaml");
    std::fs::write(&camel, CAMEL_SCHEMA).unwrap();
    std::fs::write(&subfields, SUBFIELDS_SCHEMA).unwrap();
    for kind in stores().await {
        let app = TestApp::start_with(kind, |config| {
            config.catalog.auth.create_unowned_dataset = true;
            config.catalog.other.insert(
                "scheming".into(),
                json!({"dataset_schemas": [camel.to_str().unwrap(), subfields.to_str().unwrap()]}),
            );
        })
        .await;
        let create = |name: &str, extra: Value| typed("test-schema", name, extra);
        // TestChoices
        let e = app
            .err(
                Some(&app.admin),
                "package_create",
                create("fred_choices1", json!({"category": "rocker"})),
            )
            .await;
        assert_eq!(
            e["category"],
            json!([
                "Value must be one of ['bactrian', 'hybrid', 'f2hybrid', 'snowwhite', 'black']"
            ])
        );
        let d = app
            .ok(
                "package_create",
                create("fred_choices2", json!({"category": "f2hybrid"})),
            )
            .await;
        assert_eq!(d["category"], "f2hybrid");
        // TestDates
        for (i, bad) in ["31/11/2014", "31/11/abcd", "this-is-not-a-date"]
            .iter()
            .enumerate()
        {
            let e = app
                .err(
                    Some(&app.admin),
                    "package_create",
                    create(&format!("fred_date{i}"), json!({"a_relevant_date": bad})),
                )
                .await;
            assert_eq!(
                e["a_relevant_date"],
                json!(["Date format incorrect"]),
                "{bad}"
            );
        }
        let d = app
            .ok(
                "package_create",
                create("fred_date4", json!({"a_relevant_date": "2014-01-01"})),
            )
            .await;
        assert_eq!(d["a_relevant_date"], "2014-01-01");
        app.ok(
            "package_create",
            create("derf_date", json!({"resources": [{"url": "http://example.com/camel.txt", "camels_in_photo": 2, "date": "2015-01-01"}]})),
        )
        .await;
        // TestJSONValidators: valid, dataset and resource
        for (i, v) in [json!("{\"a\": 1, \"b\": 2}"), json!({"a": 1, "b": 2})]
            .into_iter()
            .enumerate()
        {
            let d = app
                .ok(
                    "package_create",
                    create(&format!("bob_json_{i}"), json!({"a_json_field": v.clone()})),
                )
                .await;
            assert_eq!(d["a_json_field"], json!({"a": 1, "b": 2}));
            let d = app
                .ok(
                    "package_create",
                    create(&format!("bob_json_r{i}"), json!({"resources": [{"url": "http://example.com/data.csv", "a_resource_json_field": v}]})),
                )
                .await;
            assert_eq!(
                d["resources"][0]["a_resource_json_field"],
                json!({"a": 1, "b": 2})
            );
        }
        // TestJSONValidators: invalid
        let bad = |v: Value| create("bob_json_bad", json!({"a_json_field": v}));
        let e = app
            .err(Some(&app.admin), "package_create", bad(json!("not-json")))
            .await;
        assert!(
            e["a_json_field"][0]
                .as_str()
                .unwrap()
                .starts_with("Invalid JSON string:"),
            "{e}"
        );
        for v in ["22", "true", "false", "null", "[1,2,3]"] {
            let e = app
                .err(Some(&app.admin), "package_create", bad(json!(v)))
                .await;
            assert!(
                e["a_json_field"][0]
                    .as_str()
                    .unwrap()
                    .starts_with("Unsupported value for JSON field"),
                "{v}: {e}"
            );
        }
        for v in [json!(true), json!(23), json!([1, 2, 3])] {
            let e = app
                .err(Some(&app.admin), "package_create", bad(v.clone()))
                .await;
            assert!(
                e["a_json_field"][0]
                    .as_str()
                    .unwrap()
                    .starts_with("Unsupported type for JSON field"),
                "{v}: {e}"
            );
        }
        // TestSubfieldDatasetValid / Invalid
        let sub = |name: &str, extra: Value| typed("test-subfields", name, extra);
        let d = app
            .ok(
                "package_create",
                sub("a_sf_1", json!({"citation": [{"originator": ["mei"], "publication_date": "2021-01-01"}, {"originator": ["ahmed"]}],
                                     "contact_address": [{"address": "anyplace"}]})),
            )
            .await;
        assert_eq!(
            d["citation"],
            json!([{"originator": ["mei"], "publication_date": "2021-01-01"}, {"originator": ["ahmed"]}])
        );
        assert_eq!(d["contact_address"], json!([{"address": "anyplace"}]));
        let d = app
            .ok(
                "package_create",
                sub("a_sf_2", json!({"citation": [], "contact_address": []})),
            )
            .await;
        assert!(
            d.get("citation").is_none() && d.get("contact_address").is_none(),
            "{d}"
        );
        let e = app
            .err(
                Some(&app.admin),
                "package_create",
                sub("b_sf_1", json!({"citation": [{"publication_date": "2021-01-01"}, {"originator": ["ahmed"]}]})),
            )
            .await;
        assert_eq!(e["citation"][0]["originator"], json!(["Missing value"]));
        let e = app
            .err(
                Some(&app.admin),
                "package_create",
                sub("b_sf_2", json!({"citation": [{"originator": ["mei"], "publication_date": "yesterday"}, {"originator": ["ahmed"]}]})),
            )
            .await;
        assert_eq!(
            e["citation"][0]["publication_date"],
            json!(["Date format incorrect"])
        );
        // TestSubfieldResourceValid / Invalid
        let d = app
            .ok(
                "package_create",
                sub("c_sf_1", json!({"resources": [{"url": "http://example.com/data.csv",
                    "schedule": [{"impact": "A", "frequency": "1m"}, {"impact": "P", "frequency": "7d"}]}]})),
            )
            .await;
        assert_eq!(
            d["resources"][0]["schedule"],
            json!([{"impact": "A", "frequency": "1m"}, {"impact": "P", "frequency": "7d"}])
        );
        let e = app
            .err(
                Some(&app.admin),
                "package_create",
                sub("c_sf_2", json!({"resources": [{"url": "http://example.com/data.csv",
                    "schedule": [{"impact": "Q", "frequency": "1m"}, {"impact": "P", "frequency": "7d"}]}]})),
            )
            .await;
        assert!(
            e["resources"][0]["schedule"][0]["impact"][0]
                .as_str()
                .unwrap()
                .starts_with("Value must be one of"),
            "{e}"
        );
    }
}

#[tokio::test]
async fn group_and_organization_schemas_are_served() {
    for kind in stores().await {
        let app = TestApp::start_with(kind, |config| {
            config.catalog.other.insert(
                "scheming".into(),
                json!({
                    "group_schemas": "ckanext.scheming:group_with_bookface.json",
                    "organization_schemas": "ckanext.scheming:custom_org_with_address.json ckanext.dcat.schemas:publisher_organization.yaml",
                }),
            );
        })
        .await;
        let groups = app
            .call(None, "scheming_group_schema_list", json!({}))
            .await
            .unwrap();
        assert_eq!(groups, json!(["group"]));
        let orgs = app
            .call(None, "scheming_organization_schema_list", json!({}))
            .await
            .unwrap();
        assert_eq!(
            orgs,
            json!(["publisher", "organization"]),
            "configured order"
        );
        let g = app
            .call(None, "scheming_group_schema_show", json!({"type": "group"}))
            .await
            .unwrap();
        assert_eq!(g["group_type"], "group");
        assert!(g["fields"].as_array().is_some_and(|f| !f.is_empty()));
        let o = app
            .call(
                None,
                "scheming_organization_schema_show",
                json!({"type": "organization"}),
            )
            .await
            .unwrap();
        assert_eq!(o["fields"][0]["field_name"], "title");
        // No dataset schema: the dataset list is empty and `dataset` keeps the default schema.
        let d = app
            .call(None, "scheming_dataset_schema_list", json!({}))
            .await
            .unwrap();
        assert_eq!(d, json!([]));
    }
}
