//! The views plugin on SQLite and on PostgreSQL (a scratch database per test): every action
//! with CKAN 2.12's shapes, messages and checks (spec: resource views), default views on
//! resource and dataset creation, and views going with their resources.

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_tantivy as _;
use catalog_plugin_views as _;

use catalog_framework::prelude::Principal;
use catalog_host::testkit::{postgres, StoreKind, TestApp};
use serde_json::{json, Value};

/// An app on `kind` with `views.default_views` when given.
async fn start(kind: StoreKind, default_views: Option<&str>) -> TestApp {
    TestApp::start_with(kind, |config| {
        config.catalog.auth.create_unowned_dataset = true;
        if let Some(d) = default_views {
            config
                .catalog
                .other
                .insert("views".into(), json!({"default_views": d}));
        }
    })
    .await
}

/// The error object and the HTTP status.
async fn err(t: &TestApp, who: Option<&Principal>, action: &str, p: Value) -> (u16, Value) {
    let e = t.fail(who, action, p).await;
    (e.status().as_u16(), e.to_error_object())
}

async fn list(t: &TestApp, resource_id: &str) -> Vec<String> {
    let l = t
        .ok_as(None, "resource_view_list", json!({"id": resource_id}))
        .await;
    l.as_array()
        .unwrap()
        .iter()
        .map(|v| v["title"].as_str().unwrap_or_default().to_string())
        .collect()
}

async fn activity_types(t: &TestApp, dataset: &str) -> Vec<String> {
    let l = t
        .ok(
            "package_activity_list",
            json!({"id": dataset, "limit": 100}),
        )
        .await;
    l.as_array()
        .unwrap()
        .iter()
        .map(|a| a["activity_type"].as_str().unwrap().to_string())
        .collect()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn forbidden(msg: &str) -> (u16, Value) {
    (
        403,
        json!({"message": msg, "__type": "Authorization Error"}),
    )
}

fn invalid(body: Value) -> (u16, Value) {
    let mut b = body.as_object().unwrap().clone();
    b.insert("__type".into(), json!("Validation Error"));
    (409, Value::Object(b))
}

fn not_found(msg: &str) -> (u16, Value) {
    (404, json!({"message": msg, "__type": "Not Found Error"}))
}

/// The capture's set-up: an organization with alice as editor, bob with no role, and a
/// dataset with a PNG, a TXT, an HTML and a CSV resource. Returns (dataset id, resource ids).
async fn setup(t: &TestApp) -> (Principal, Principal, String, Vec<String>) {
    let alice = t.user("alice").await;
    let bob = t.user("bob").await;
    t.ok("organization_create", json!({"name": "office"})).await;
    t.ok(
        "organization_member_create",
        json!({"id": "office", "username": "alice", "role": "editor"}),
    )
    .await;
    let ds = t
        .ok(
            "package_create",
            json!({"name": "w2-views", "owner_org": "office", "resources": [
                {"name": "picture.png", "url": "http://example.com/picture.png", "format": "PNG"},
                {"name": "readme.txt", "url": "http://example.com/readme.txt", "format": "TXT"},
                {"name": "homepage", "url": "http://example.com/index.html", "format": "HTML"},
                {"name": "table.csv", "url": "http://example.com/table.csv", "format": "CSV"},
            ]}),
        )
        .await;
    let ids = ds["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    (alice, bob, ds["id"].as_str().unwrap().to_string(), ids)
}

async fn actions(kind: StoreKind) {
    let t = start(kind, Some("")).await;
    let admin = Some(&t.admin);
    let (alice, bob, ds, r) = setup(&t).await;
    let (alice, bob) = (Some(&alice), Some(&bob));
    let (png, txt, html, csv) = (&r[0], &r[1], &r[2], &r[3]);
    assert!(
        list(&t, png).await.is_empty(),
        "no default views configured"
    );

    // resource_view_create: the dict's key order, config flattened in, package_id last.
    let image1 = t
        .ok(
            "resource_view_create",
            json!({"resource_id": png, "view_type": "image_view", "title": "Picture",
                   "description": "An image view", "image_url": "http://example.com/picture.png"}),
        )
        .await;
    assert_eq!(
        keys(&image1),
        [
            "id",
            "resource_id",
            "title",
            "description",
            "view_type",
            "image_url",
            "package_id"
        ]
    );
    assert_eq!(image1["package_id"], json!(ds));
    assert_eq!(image1["image_url"], "http://example.com/picture.png");
    let image2 = t
        .ok(
            "resource_view_create",
            json!({"resource_id": png, "view_type": "image_view", "title": "Picture 2", "image_url": ""}),
        )
        .await;
    assert_eq!(
        image2,
        json!({"id": image2["id"], "resource_id": png, "title": "Picture 2", "description": null,
               "view_type": "image_view", "package_id": ds})
    );
    let text = t
        .ok(
            "resource_view_create",
            json!({"resource_id": txt, "view_type": "text_view", "title": "Text"}),
        )
        .await;
    assert_eq!(
        keys(&text),
        [
            "id",
            "resource_id",
            "title",
            "description",
            "view_type",
            "package_id"
        ]
    );
    let web = t
        .ok(
            "resource_view_create",
            json!({"resource_id": html, "view_type": "webpage_view", "title": "Web page",
                   "page_url": "http://example.com/index.html"}),
        )
        .await;
    assert_eq!(web["page_url"], "http://example.com/index.html");
    let table = t
        .ok(
            "resource_view_create",
            json!({"resource_id": csv, "view_type": "datatables_view", "title": "Table"}),
        )
        .await;
    assert_eq!(
        keys(&table),
        [
            "id",
            "resource_id",
            "title",
            "description",
            "view_type",
            "date_format",
            "ellipsis_length",
            "filterable",
            "responsive",
            "package_id"
        ]
    );
    assert_eq!(
        (
            &table["date_format"],
            &table["ellipsis_length"],
            &table["filterable"],
            &table["responsive"]
        ),
        (&json!("llll"), &json!(100), &json!(true), &json!(false))
    );
    // Datatables' validators and the filter fields.
    let filtered = t
        .ok(
            "resource_view_create",
            json!({"resource_id": csv, "view_type": "datatables_view", "title": "Filtered",
                   "responsive": "yes", "ellipsis_length": "20", "filterable": "",
                   "filter_fields": ["a", "b", "a"], "filter_values": ["1", "2", "3"]}),
        )
        .await;
    assert_eq!(filtered["responsive"], true);
    assert_eq!(filtered["ellipsis_length"], 20);
    assert_eq!(filtered["filterable"], true);
    assert_eq!(filtered["filters"], json!({"a": ["1", "3"], "b": ["2"]}));
    assert_eq!(
        keys(&filtered)[5..],
        [
            "date_format",
            "ellipsis_length",
            "filter_fields",
            "filter_values",
            "filterable",
            "filters",
            "responsive",
            "package_id"
        ]
    );
    let one = t
        .ok(
            "resource_view_create",
            json!({"resource_id": csv, "view_type": "datatables_view", "title": "One",
                   "filter_fields": "a", "filter_values": "1"}),
        )
        .await;
    assert_eq!(one["filter_fields"], json!(["a"]));
    let same = "\"filter_fields\" and \"filter_values\" should have the same length";
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_create",
            json!({"resource_id": csv, "view_type": "datatables_view", "title": "x",
                   "filter_fields": ["a"], "ellipsis_length": -1})
        )
        .await,
        invalid(json!({"ellipsis_length": ["Must be a natural number"],
                       "filter_fields": [same],
                       "filter_values": [same, "\"filter_values\" is required when \"filter_fields\" is filled"]}))
    );
    assert_eq!(
        err(&t,
            admin,
            "resource_view_create",
            json!({"resource_id": csv, "view_type": "datatables_view", "title": "x", "ellipsis_length": "many"})
        )
        .await,
        invalid(json!({"ellipsis_length": ["Invalid integer"]}))
    );

    // Errors, in CKAN's order of checks.
    let valid = json!({"resource_id": png, "view_type": "image_view", "title": "Alice view",
                       "image_url": "http://example.com/a.png"});
    let with = |extra: Value| {
        let mut p = valid.as_object().unwrap().clone();
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                p.remove(k);
            } else {
                p.insert(k.clone(), v.clone());
            }
        }
        Value::Object(p)
    };
    let not_expected = "The input field __extras was not expected.";
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_create",
            with(json!({"some_extra": "kept?"}))
        )
        .await,
        invalid(json!({"__extras": [not_expected]}))
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_create",
            with(json!({"package_id": ds}))
        )
        .await,
        invalid(json!({"__extras": [not_expected]})),
        "a shown dict cannot be posted back"
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_create",
            with(json!({"view_type": "no_such_view"}))
        )
        .await,
        invalid(json!({"view_type": "No plugin found for view_type no_such_view"}))
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_create",
            with(json!({"view_type": "recline_view"}))
        )
        .await,
        invalid(json!({"view_type": "No plugin found for view_type recline_view"})),
        "removed in CKAN 2.11"
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_create",
            with(json!({"title": null}))
        )
        .await,
        invalid(json!({"title": ["Missing value"]}))
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_create",
            with(json!({"view_type": null}))
        )
        .await,
        invalid(json!({"view_type": ["Missing value"]}))
    );
    assert_eq!(
        err(&t, admin, "resource_view_create", json!({"title": "x"})).await,
        invalid(json!({"resource_id": ["Missing value"]})),
        "resource_id is checked alone, first"
    );
    let nil = "00000000-0000-0000-0000-000000000000";
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_create",
            with(json!({"resource_id": nil}))
        )
        .await,
        invalid(json!({"resource_id": [format!("Resource not found: {nil}")]}))
    );
    assert_eq!(
        err(
            &t,
            None,
            "resource_view_create",
            with(json!({"resource_id": nil, "title": ""}))
        )
        .await,
        invalid(
            json!({"resource_id": [format!("Resource not found: {nil}")], "title": ["Missing value"]})
        ),
        "validation before authorization"
    );
    assert_eq!(
        err(&t, alice, "resource_view_create", with(json!({"id": nil}))).await,
        invalid(json!({"id": ["The input field id was not expected."]}))
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_create",
            with(json!({"id": "not-a-uuid"}))
        )
        .await,
        invalid(json!({"id": ["Invalid id provided"]}))
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_create",
            with(json!({"id": image1["id"]}))
        )
        .await,
        invalid(json!({"id": ["ResourceView id already exists"]}))
    );
    let chosen = "11111111-2222-4333-8444-555555555555";
    let own_id = t
        .ok(
            "resource_view_create",
            with(json!({"id": chosen, "resource_id": html, "title": "Own id"})),
        )
        .await;
    assert_eq!(own_id["id"], chosen);
    t.ok("resource_view_delete", json!({"id": chosen})).await;
    assert_eq!(
        err(&t, None, "resource_view_create", valid.clone()).await,
        forbidden(&format!(
            "Access denied: User  not authorized to create resources on dataset {ds}"
        ))
    );
    assert_eq!(
        err(&t, bob, "resource_view_create", valid.clone()).await,
        forbidden(&format!(
            "Access denied: User bob not authorized to create resources on dataset {ds}"
        ))
    );
    let alice_view = t.ok_as(alice, "resource_view_create", valid.clone()).await;
    assert_eq!(list(&t, png).await, ["Picture", "Picture 2", "Alice view"]);

    // resource_view_list and resource_view_show.
    let anon_list = t
        .ok_as(None, "resource_view_list", json!({"id": png}))
        .await;
    assert_eq!(
        anon_list,
        t.ok("resource_view_list", json!({"id": png})).await
    );
    assert_eq!(anon_list[0], image1);
    assert_eq!(
        err(&t, None, "resource_view_list", json!({"id": nil})).await,
        not_found("Not found")
    );
    assert_eq!(
        err(&t, None, "resource_view_list", json!({})).await,
        invalid(json!({"id": ["Missing value"]}))
    );
    assert_eq!(
        t.ok_as(None, "resource_view_show", json!({"id": image1["id"]}))
            .await,
        image1
    );
    assert_eq!(
        t.ok_as(None, "resource_view_show", json!({"id": web["id"]}))
            .await,
        web
    );
    assert_eq!(
        err(&t, None, "resource_view_show", json!({"id": nil})).await,
        not_found("Not found: Resource view not found, cannot check auth.")
    );
    assert_eq!(
        err(&t, admin, "resource_view_show", json!({"id": nil})).await,
        not_found("Not found"),
        "sysadmins skip the auth function that says more"
    );
    assert_eq!(
        err(&t, None, "resource_view_show", json!({})).await,
        invalid(json!({"id": ["Missing value"]}))
    );

    // resource_view_update.
    let id1 = image1["id"].as_str().unwrap();
    let updated = t
        .ok(
            "resource_view_update",
            json!({"id": id1, "title": "Picture (renamed)", "description": "updated",
                   "image_url": "http://example.com/picture2.png"}),
        )
        .await;
    assert_eq!(updated["title"], "Picture (renamed)");
    assert_eq!(updated["image_url"], "http://example.com/picture2.png");
    let no_title = t
        .ok(
            "resource_view_update",
            json!({"id": id1, "description": "no title"}),
        )
        .await;
    assert_eq!(
        no_title,
        json!({"id": id1, "resource_id": png, "title": "Picture (renamed)", "description": "no title",
               "view_type": "image_view", "package_id": ds}),
        "columns not given stay; the config is replaced"
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_update",
            json!({"id": nil, "title": "x"})
        )
        .await,
        not_found("Not found: Resource view was not found.")
    );
    assert_eq!(
        err(&t, admin, "resource_view_update", json!({"title": "x"})).await,
        invalid(json!({"id": ["Missing value"]}))
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_update",
            json!({"id": id1, "resource_id": nil, "extra": 1})
        )
        .await,
        invalid(
            json!({"resource_id": [format!("Resource not found: {nil}")], "__extras": [not_expected]})
        )
    );
    let edit =
        |who: &str| format!("Access denied: User {who} not authorized to edit resource {png}");
    assert_eq!(
        err(
            &t,
            None,
            "resource_view_update",
            json!({"id": id1, "title": "anon"})
        )
        .await,
        forbidden(&edit("")),
        "CKAN answers 500 here (its auth function needs resource_id)"
    );
    assert_eq!(
        err(
            &t,
            bob,
            "resource_view_update",
            json!({"id": id1, "title": "bob"})
        )
        .await,
        forbidden(&edit("bob"))
    );
    assert_eq!(
        err(
            &t,
            None,
            "resource_view_update",
            json!({"id": id1, "resource_id": png, "title": "anon"})
        )
        .await,
        forbidden(&edit(""))
    );
    let by_alice = t
        .ok_as(
            alice,
            "resource_view_update",
            json!({"id": id1, "resource_id": png, "title": "Picture (alice)",
                   "image_url": "http://example.com/picture2.png"}),
        )
        .await;
    assert_eq!(by_alice["description"], "no title");
    // A shown dict can be posted back (view_type and package_id are ignored).
    let mut back = by_alice.clone();
    back["view_type"] = json!("text_view");
    assert_eq!(t.ok_as(alice, "resource_view_update", back).await, by_alice);
    assert_eq!(
        t.ok_as(None, "resource_view_show", json!({"id": id1}))
            .await,
        by_alice
    );
    // Moving a view to another resource needs rights on both.
    t.ok("organization_create", json!({"name": "other-office"}))
        .await;
    let other = t
        .ok(
            "package_create",
            json!({"name": "elsewhere", "owner_org": "other-office",
                   "resources": [{"url": "http://x/y.png"}]}),
        )
        .await;
    let other_res = other["resources"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(
        err(
            &t,
            alice,
            "resource_view_update",
            json!({"id": id1, "resource_id": other_res})
        )
        .await,
        forbidden(&format!(
            "Access denied: User alice not authorized to edit resource {other_res}"
        ))
    );

    // resource_view_reorder.
    let (i1, i2, ia) = (
        image1["id"].as_str().unwrap(),
        image2["id"].as_str().unwrap(),
        alice_view["id"].as_str().unwrap(),
    );
    assert_eq!(
        t.ok(
            "resource_view_reorder",
            json!({"id": png, "order": [ia, i2, i1]})
        )
        .await,
        json!({"id": png, "order": [ia, i2, i1]})
    );
    assert_eq!(
        t.ok_as(
            alice,
            "resource_view_reorder",
            json!({"id": png, "order": [i1]})
        )
        .await,
        json!({"id": png, "order": [i1, ia, i2]}),
        "the views not listed follow in their order"
    );
    assert_eq!(
        list(&t, png).await,
        ["Picture (alice)", "Alice view", "Picture 2"]
    );
    let order_err = |m: &str| invalid(json!({"order": m}));
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_reorder",
            json!({"id": png, "order": [i1, i1]})
        )
        .await,
        order_err("No duplicates allowed in order")
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_reorder",
            json!({"id": png, "order": [nil]})
        )
        .await,
        order_err(&format!("View {nil} does not exist"))
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_reorder",
            json!({"id": png, "order": [web["id"]]})
        )
        .await,
        order_err(&format!(
            "View {} does not exist",
            web["id"].as_str().unwrap()
        )),
        "a view of another resource"
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_reorder",
            json!({"id": png, "order": i1})
        )
        .await,
        order_err("Must supply order as a list")
    );
    assert_eq!(
        err(&t, admin, "resource_view_reorder", json!({"id": png})).await,
        invalid(json!({"order": ["Missing value"]}))
    );
    assert_eq!(
        err(&t, admin, "resource_view_reorder", json!({})).await,
        invalid(json!({"id": ["Missing value"], "order": ["Missing value"]}))
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_reorder",
            json!({"id": nil, "order": []})
        )
        .await,
        not_found("Not found: Resource was not found.")
    );
    assert_eq!(
        err(
            &t,
            None,
            "resource_view_reorder",
            json!({"id": png, "order": [i1]})
        )
        .await,
        forbidden(&edit(""))
    );
    assert_eq!(
        list(&t, png).await,
        ["Picture (alice)", "Alice view", "Picture 2"],
        "failures changed nothing"
    );

    // resource_view_delete.
    let delete =
        |who: &str| format!("Access denied: User {who} not authorized to delete resource {png}");
    assert_eq!(
        err(&t, None, "resource_view_delete", json!({"id": i2})).await,
        forbidden(&delete(""))
    );
    assert_eq!(
        err(&t, bob, "resource_view_delete", json!({"id": i2})).await,
        forbidden(&delete("bob"))
    );
    assert_eq!(
        t.ok_as(alice, "resource_view_delete", json!({"id": i2}))
            .await,
        json!({"resource_id": png})
    );
    assert_eq!(
        err(&t, admin, "resource_view_delete", json!({"id": i2})).await,
        not_found("Not found")
    );
    assert_eq!(
        err(&t, admin, "resource_view_delete", json!({})).await,
        invalid(json!({"id": ["Missing value"]}))
    );
    assert_eq!(list(&t, png).await, ["Picture (alice)", "Alice view"]);
    // A new view goes last.
    t.ok(
        "resource_view_create",
        json!({"resource_id": png, "view_type": "image_view", "title": "Last"}),
    )
    .await;
    assert_eq!(
        list(&t, png).await,
        ["Picture (alice)", "Alice view", "Last"]
    );

    // resource_view_clear.
    assert_eq!(
        err(
            &t,
            bob,
            "resource_view_clear",
            json!({"view_types": ["webpage_view"]})
        )
        .await,
        forbidden("Access denied")
    );
    assert_eq!(
        err(&t, None, "resource_view_clear", json!({})).await,
        forbidden("Access denied")
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_clear",
            json!({"view_types": {"a": 1}})
        )
        .await,
        invalid(json!({"view_types": ["Not a list"]}))
    );
    assert_eq!(
        t.ok(
            "resource_view_clear",
            json!({"view_types": ["webpage_view"]})
        )
        .await,
        Value::Null
    );
    assert!(list(&t, html).await.is_empty());
    assert_eq!(list(&t, txt).await, ["Text"]);

    // The default-view actions with no default views configured.
    let res = t.ok("resource_show", json!({"id": csv})).await;
    let pkg = t.ok("package_show", json!({"id": ds})).await;
    assert_eq!(
        t.ok(
            "resource_create_default_resource_views",
            json!({"resource": res, "package": pkg})
        )
        .await,
        json!([])
    );
    assert_eq!(
        t.ok(
            "package_create_default_resource_views",
            json!({"package": pkg})
        )
        .await,
        json!([])
    );
    assert_eq!(
        err(
            &t,
            bob,
            "package_create_default_resource_views",
            json!({"package": pkg})
        )
        .await,
        forbidden(&format!(
            "Access denied: User bob not authorized to edit package {ds}"
        ))
    );
    assert_eq!(
        err(
            &t,
            bob,
            "resource_create_default_resource_views",
            json!({"resource": res})
        )
        .await,
        forbidden(&format!(
            "Access denied: User bob not authorized to create resources on dataset {ds}"
        ))
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_create_default_resource_views",
            json!({})
        )
        .await,
        invalid(json!({"resource": ["Missing value"]}))
    );
    assert_eq!(
        err(
            &t,
            bob,
            "resource_create_default_resource_views",
            json!({"resource": {"url": "x"}})
        )
        .await,
        invalid(json!({"resource": {"id": ["Missing value"]}})),
        "CKAN answers 500 here"
    );
    assert_eq!(
        err(
            &t,
            admin,
            "package_create_default_resource_views",
            json!({})
        )
        .await,
        invalid(json!({"package": ["Missing value"]}))
    );
    assert!(
        pkg.get("resource_views").is_none(),
        "package_show shows no views"
    );

    // Activities: a new or changed view is an activity of its dataset; deletes, reorders and
    // clears are not.
    let types = activity_types(&t, &ds).await;
    let count = |ty: &str| types.iter().filter(|t| *t == ty).count();
    assert_eq!(count("new resource view"), 10, "{types:?}");
    assert_eq!(count("changed resource view"), 4, "{types:?}");
    let newest = &t
        .ok("package_activity_list", json!({"id": ds, "limit": 100}))
        .await[0];
    assert_eq!(newest["activity_type"], "new resource view");
    assert_eq!(newest["object_id"], json!(ds));
    assert_eq!(newest["user_id"], json!(t.admin.id));
    assert_eq!(
        keys(&newest["data"]),
        [
            "id",
            "resource_id",
            "title",
            "description",
            "view_type",
            "order",
            "config",
            "package_id"
        ]
    );
    assert_eq!(newest["data"]["order"], 3);
    assert_eq!(newest["data"]["config"], json!({}));
}

#[tokio::test]
async fn actions_on_sqlite() {
    actions(StoreKind::Sqlite).await;
}

#[tokio::test]
async fn actions_on_postgres() {
    if let Some(kind) = postgres().await {
        actions(kind).await;
    }
}

async fn private_datasets(kind: StoreKind) {
    let t = start(kind, Some("")).await;
    let (alice, bob, _, _) = setup(&t).await;
    let secret = t
        .ok(
            "package_create",
            json!({"name": "secret", "owner_org": "office", "private": true,
                   "resources": [{"url": "http://example.com/s.png", "format": "png"}]}),
        )
        .await;
    let rid = secret["resources"][0]["id"].as_str().unwrap();
    let view = t
        .ok_as(
            Some(&alice),
            "resource_view_create",
            json!({"resource_id": rid, "view_type": "image_view", "title": "S"}),
        )
        .await;
    let read = |who: &str| {
        forbidden(&format!(
            "Access denied: User {who} not authorized to read resource {rid}"
        ))
    };
    assert_eq!(
        err(
            &t,
            Some(&bob),
            "resource_view_show",
            json!({"id": view["id"]})
        )
        .await,
        read("bob")
    );
    assert_eq!(
        err(&t, None, "resource_view_list", json!({"id": rid})).await,
        read("")
    );
    assert_eq!(
        t.ok_as(Some(&alice), "resource_view_list", json!({"id": rid}))
            .await,
        json!([view])
    );
    // The view's activity is as private as its dataset.
    let bobs = t
        .ok_as(Some(&bob), "user_activity_list", json!({"id": "alice"}))
        .await;
    let types = |l: &Value| -> Vec<String> {
        l.as_array()
            .unwrap()
            .iter()
            .map(|a| a["activity_type"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(types(&bobs), ["new user"]);
    let alices = t
        .ok_as(Some(&alice), "user_activity_list", json!({"id": "alice"}))
        .await;
    assert_eq!(types(&alices), ["new resource view", "new user"]);
}

#[tokio::test]
async fn private_datasets_on_sqlite() {
    private_datasets(StoreKind::Sqlite).await;
}

#[tokio::test]
async fn private_datasets_on_postgres() {
    if let Some(kind) = postgres().await {
        private_datasets(kind).await;
    }
}

async fn default_views(kind: StoreKind) {
    // CKAN's default: image_view and datatables_view (the latter only for the DataStore).
    let t = start(kind, None).await;
    let admin = Some(&t.admin);
    let ds = t
        .ok(
            "package_create",
            json!({"name": "defaults", "resources": [
                {"url": "http://example.com/a.png", "format": "PNG"},
                {"url": "http://example.com/b.csv", "format": "CSV"},
                {"url": "http://example.com/c.jpg", "format": "jpg"},
            ]}),
        )
        .await;
    let ids: Vec<String> = ds["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let png_views = t
        .ok_as(None, "resource_view_list", json!({"id": ids[0]}))
        .await;
    assert_eq!(
        png_views,
        json!([{"id": png_views[0]["id"], "resource_id": ids[0], "title": "Image", "description": "",
                "view_type": "image_view", "package_id": ds["id"]}])
    );
    assert!(list(&t, &ids[1]).await.is_empty());
    assert_eq!(list(&t, &ids[2]).await, ["Image"]);
    // resource_create makes them too; package_update does not.
    let gif = t
        .ok(
            "resource_create",
            json!({"package_id": "defaults", "url": "http://example.com/d.gif", "format": "GIF"}),
        )
        .await;
    assert_eq!(list(&t, gif["id"].as_str().unwrap()).await, ["Image"]);
    // The view's activity does not hide that an update changes nothing: the dataset's
    // activities are compared with its previous package activity.
    let before = activity_types(&t, "defaults").await;
    assert_eq!(before[..2], ["new resource view", "changed package"]);
    let same = t.ok("package_show", json!({"id": "defaults"})).await;
    t.ok("package_update", same).await;
    assert_eq!(activity_types(&t, "defaults").await, before);
    let mut pkg = t.ok("package_show", json!({"id": "defaults"})).await;
    pkg["resources"]
        .as_array_mut()
        .unwrap()
        .push(json!({"url": "http://example.com/e.png", "format": "PNG"}));
    let pkg = t.ok("package_update", pkg).await;
    let added = pkg["resources"][4]["id"].as_str().unwrap().to_string();
    assert!(list(&t, &added).await.is_empty());
    // A resource whose format changes gets them; one whose format stays does not.
    let csv = &ids[1];
    t.ok("resource_patch", json!({"id": csv, "name": "renamed"}))
        .await;
    assert!(list(&t, csv).await.is_empty());
    t.ok("resource_patch", json!({"id": csv, "format": "png"}))
        .await;
    assert_eq!(list(&t, csv).await, ["Image"]);
    // The actions make what is missing, and nothing twice.
    let made = t
        .ok(
            "package_create_default_resource_views",
            json!({"package": {"id": "defaults"}}),
        )
        .await;
    assert_eq!(
        made.as_array().unwrap().len(),
        1,
        "only the package_update one: {made}"
    );
    assert_eq!(made[0]["resource_id"], json!(added));
    assert_eq!(
        t.ok(
            "package_create_default_resource_views",
            json!({"package": {"id": "defaults"}})
        )
        .await,
        json!([])
    );
    // DataStore views: only for resources in the DataStore, only when asked for.
    t.ok(
        "resource_patch",
        json!({"id": ids[2], "datastore_active": true}),
    )
    .await;
    let table = t
        .ok(
            "resource_create_default_resource_views",
            json!({"resource": {"id": ids[2]}, "create_datastore_views": true}),
        )
        .await;
    assert_eq!(table.as_array().unwrap().len(), 1);
    assert_eq!(table[0]["view_type"], "datatables_view");
    assert_eq!(table[0]["title"], "Table");
    assert_eq!(list(&t, &ids[2]).await, ["Image", "Table"]);
    assert_eq!(
        err(
            &t,
            admin,
            "resource_create_default_resource_views",
            json!({"resource": {"id": ids[2]}, "create_datastore_views": "maybe"})
        )
        .await
        .0,
        409
    );

    // Views go with their resources: deleted, dropped by package_update, purged.
    let first = ids[0].clone();
    t.ok("resource_delete", json!({"id": first})).await;
    assert_eq!(
        err(&t, None, "resource_view_list", json!({"id": first})).await,
        not_found("Not found")
    );
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_show",
            json!({"id": png_views[0]["id"]})
        )
        .await,
        not_found("Not found")
    );
    let mut pkg = t.ok("package_show", json!({"id": "defaults"})).await;
    let dropped = pkg["resources"][0]["id"].as_str().unwrap().to_string();
    let dropped_views = t.ok("resource_view_list", json!({"id": dropped})).await;
    assert_eq!(dropped_views.as_array().unwrap().len(), 1);
    pkg["resources"].as_array_mut().unwrap().remove(0);
    t.ok("package_update", pkg).await;
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_show",
            json!({"id": dropped_views[0]["id"]})
        )
        .await,
        not_found("Not found")
    );
    let kept = t.ok("resource_view_list", json!({"id": ids[2]})).await;
    t.ok("dataset_purge", json!({"id": "defaults"})).await;
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_show",
            json!({"id": kept[0]["id"]})
        )
        .await,
        not_found("Not found")
    );
}

#[tokio::test]
async fn default_views_on_sqlite() {
    default_views(StoreKind::Sqlite).await;
}

#[tokio::test]
async fn default_views_on_postgres() {
    if let Some(kind) = postgres().await {
        default_views(kind).await;
    }
}

async fn configured_default_views(kind: StoreKind) {
    let t = start(
        kind,
        Some("image_view webpage_view text_view datatables_view no_such_view"),
    )
    .await;
    let site = t.app.config.site_url().to_string();
    let ds = t
        .ok(
            "package_create",
            json!({"name": "configured", "resources": [
                {"url": "http://example.com/page", "format": "HTML"},
                {"url": "http://example.com/index.htm"},
                {"url": "http://example.com/data.jsonp", "format": "JSONP"},
                {"url": "http://example.com/readme.txt", "format": "TXT"},
                {"url": format!("{site}/files/readme.txt"), "format": "TXT"},
                {"url": "http://example.com/a.png", "format": "png"},
            ]}),
        )
        .await;
    let mut titles = Vec::new();
    for r in ds["resources"].as_array().unwrap() {
        titles.push(list(&t, r["id"].as_str().unwrap()).await);
    }
    assert_eq!(
        titles,
        [
            vec!["Website"],
            vec!["Website"],
            vec!["Text"],
            vec![],
            vec!["Text"],
            vec!["Image"],
        ]
    );
}

#[tokio::test]
async fn configured_default_views_on_sqlite() {
    configured_default_views(StoreKind::Sqlite).await;
}

#[tokio::test]
async fn configured_default_views_on_postgres() {
    if let Some(kind) = postgres().await {
        configured_default_views(kind).await;
    }
}

/// A view type from outside the plugin, registered at its extension point (the book's
/// example: book/src/user-guide/resource-views.md is checked to be a copy of it).
#[expect(
    unreachable_pub,
    reason = "the book's example, for a plugin crate, is copied as it is"
)]
mod audio {
    use catalog_framework::prelude::*;
    use catalog_plugin_views::prelude::*;

    pub struct AudioView;

    static AUDIO: ViewInfo = ViewInfo {
        title: "Audio",
        icon: "file-audio",
        default_title: "Audio",
        always_available: false,
        requires_datastore: false,
        filterable: false,
        iframed: false,
        schema: &[ConfigKey::new("audio_url", ConfigRule::OptionalText)],
    };

    impl ResourceView for AudioView {
        fn info(&self) -> &'static ViewInfo {
            &AUDIO
        }
        fn can_view(
            &self,
            r: &Map<String, Value>,
            _: &Map<String, Value>,
            _: &ViewContext,
        ) -> bool {
            ["wav", "ogg", "mp3"].contains(&ViewContext::format(r).as_str())
        }
    }

    register_resource_view!("audio_view", AudioView);
}

async fn third_party_view_type(kind: StoreKind) {
    let t = start(kind, Some("audio_view image_view")).await;
    let admin = Some(&t.admin);
    let ds = t
        .ok(
            "package_create",
            json!({"name": "sounds", "resources": [{"url": "http://example.com/a.mp3", "format": "MP3"}]}),
        )
        .await;
    let rid = ds["resources"][0]["id"].as_str().unwrap();
    assert_eq!(list(&t, rid).await, ["Audio"]);
    let v = t
        .ok(
            "resource_view_create",
            json!({"resource_id": rid, "view_type": "audio_view", "title": "Loud", "audio_url": 5}),
        )
        .await;
    assert_eq!(v["audio_url"], "5", "unicode_safe");
    assert_eq!(
        err(
            &t,
            admin,
            "resource_view_create",
            json!({"resource_id": rid, "view_type": "audio_view", "title": "x", "image_url": "y"})
        )
        .await,
        invalid(json!({"__extras": ["The input field __extras was not expected."]}))
    );
}

#[tokio::test]
async fn third_party_view_type_on_sqlite() {
    third_party_view_type(StoreKind::Sqlite).await;
}

#[tokio::test]
async fn third_party_view_type_on_postgres() {
    if let Some(kind) = postgres().await {
        third_party_view_type(kind).await;
    }
}

#[test]
fn the_books_view_type_is_this_one() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    catalog_host::testkit::assert_book_blocks_are_copies(
        &[root.join("../../book/src/user-guide/resource-views.md")],
        &[root.join("tests/views.rs")],
    );
}

/// Concurrent creations on one resource each get their own `order` (the dataset row is
/// locked while the highest one is read), and a reorder racing them loses no view.
#[tokio::test]
async fn parallel_writers_on_postgres() {
    let Some(kind) = postgres().await else {
        return;
    };
    let t = start(kind, Some("")).await;
    let admin = Some(&t.admin);
    let ds = t
        .ok(
            "package_create",
            json!({"name": "busy", "resources": [{"url": "http://example.com/a.png"}]}),
        )
        .await;
    let rid = ds["resources"][0]["id"].as_str().unwrap().to_string();
    let creates = futures::future::join_all((0..8).map(|i| {
        let p = json!({"resource_id": rid, "view_type": "image_view", "title": format!("v{i}")});
        t.call(admin, "resource_view_create", p)
    }));
    let reorder = t.call(
        admin,
        "resource_view_reorder",
        json!({"id": rid, "order": []}),
    );
    let (created, reordered) = tokio::join!(creates, reorder);
    for c in &created {
        assert!(
            c.is_ok(),
            "{:?}",
            c.as_ref().err().map(|e| e.to_error_object())
        );
    }
    assert!(reordered.is_ok());
    assert_eq!(list(&t, &rid).await.len(), 8);
    // The order each view got when it was created is in its activity.
    let activities = t
        .ok(
            "package_activity_list",
            json!({"id": ds["id"], "limit": 100}),
        )
        .await;
    let mut orders: Vec<i64> = activities
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["activity_type"] == "new resource view")
        .map(|a| a["data"]["order"].as_i64().unwrap())
        .collect();
    orders.sort_unstable();
    orders.dedup();
    assert_eq!(orders.len(), 8, "each view its own order: {orders:?}");
}
