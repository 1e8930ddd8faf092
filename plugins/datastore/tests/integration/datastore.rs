//! The DataStore actions on SQLite and PostgreSQL: tables made, written, searched and dropped,
//! CKAN's messages for what is refused, and who may read and write.

use catalog_host::testkit::{stores, StoreKind, TestServer};
use serde_json::{json, Value};

async fn server(kind: StoreKind) -> (TestServer, String) {
    let s = TestServer::start(kind, "admin", |_| {}).await;
    s.user("outsider").await;
    s.ok(
        "organization_create",
        json!({"name": "stats", "title": "Statistics"}),
    )
    .await;
    let d = s
        .ok(
            "package_create",
            json!({"name": "cities", "owner_org": "stats",
                   "resources": [{"url": "http://example.org/cities.csv", "name": "Cities"}]}),
        )
        .await;
    let rid = d["resources"][0]["id"].as_str().unwrap().to_string();
    (s, rid)
}

fn cities(rid: &str) -> Value {
    json!({
        "resource_id": rid, "force": true, "primary_key": "city",
        "fields": [
            {"id": "city", "type": "text"},
            {"id": "population", "type": "int"},
            {"id": "area", "type": "numeric"},
            {"id": "capital", "type": "bool"},
            {"id": "founded", "type": "date"},
            {"id": "tags", "type": "_text"},
        ],
        "records": [
            {"city": "Berlin", "population": 3850809, "area": 891.1, "capital": true, "founded": "1237-01-01", "tags": ["big", "river"]},
            {"city": "Hamburg", "population": "1910160", "area": "755.2", "capital": false, "founded": "0808-01-01", "tags": ["port"]},
            {"city": "Munich", "population": 1512491, "area": 310.4, "capital": "f", "founded": "1158-06-14", "tags": []},
            {"city": "Bonn", "population": 336465, "area": 141.1, "capital": "no", "founded": null, "tags": null},
        ],
    })
}

async fn err(
    s: &TestServer,
    who: Option<&catalog_framework::context::Principal>,
    action: &str,
    p: Value,
) -> Value {
    match s.call(who, action, p).await {
        Ok(v) => panic!("{action} succeeded: {v}"),
        Err(e) => e.to_error_object(),
    }
}

#[tokio::test]
async fn create_search_upsert_delete() {
    for kind in stores().await {
        let (s, rid) = server(kind).await;

        // A resource not made for the DataStore needs force.
        let mut p = cities(&rid);
        p.as_object_mut().unwrap().remove("force");
        let e = err(&s, Some(&s.admin), "datastore_create", p).await;
        assert!(
            e["read-only"][0]
                .as_str()
                .unwrap()
                .starts_with("Cannot edit read-only resource"),
            "{kind}: {e}"
        );

        let made = s.ok("datastore_create", cities(&rid)).await;
        assert_eq!(made["resource_id"], rid.as_str(), "{kind}");
        assert_eq!(made["method"], "insert", "{kind}");
        assert_eq!(
            made["fields"][1],
            json!({"id": "population", "type": "int"}),
            "{kind}"
        );
        let res = s.ok("resource_show", json!({"id": rid})).await;
        assert_eq!(res["datastore_active"], true, "{kind}");

        // Everything, in _id order, with the types as PostgreSQL reports them.
        let all = s.ok("datastore_search", json!({"resource_id": rid})).await;
        assert_eq!(all["total"], 4, "{kind}");
        assert_eq!(all["limit"], 100, "{kind}");
        assert_eq!(
            all["fields"],
            json!([{"id": "_id", "type": "int"}, {"id": "city", "type": "text"},
                   {"id": "population", "type": "int4"}, {"id": "area", "type": "numeric"},
                   {"id": "capital", "type": "bool"}, {"id": "founded", "type": "date"},
                   {"id": "tags", "type": "_text"}]),
            "{kind}"
        );
        assert_eq!(
            all["records"][1],
            json!({"_id": 2, "city": "Hamburg", "population": 1910160, "area": 755.2,
                   "capital": false, "founded": "0808-01-01", "tags": ["port"]}),
            "{kind}"
        );
        assert_eq!(all["records"][3]["founded"], Value::Null, "{kind}");
        assert!(
            all["_links"]["next"]
                .as_str()
                .unwrap()
                .ends_with("offset=100"),
            "{kind}"
        );

        // Filters (a value, a list), full text, sort, paging, fields, formats, distinct.
        let r = s.ok("datastore_search", json!({"resource_id": rid, "filters": {"capital": false}, "sort": "population desc"})).await;
        let names: Vec<&str> = r["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["city"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Hamburg", "Munich", "Bonn"], "{kind}");
        let r = s.ok("datastore_search", json!({"resource_id": rid, "filters": {"city": ["Bonn", "Berlin"]}, "fields": "city"})).await;
        assert_eq!(
            r["records"],
            json!([{"city": "Berlin"}, {"city": "Bonn"}]),
            "{kind}"
        );
        let r = s
            .ok(
                "datastore_search",
                json!({"resource_id": rid, "q": "hamburg"}),
            )
            .await;
        assert_eq!(r["total"], 1, "{kind}: {r}");
        assert_eq!(r["records"][0]["city"], "Hamburg", "{kind}");
        let r = s
            .ok(
                "datastore_search",
                json!({"resource_id": rid, "q": {"city": "mun"}}),
            )
            .await;
        assert!(r["total"].as_i64().unwrap() <= 1, "{kind}");
        let r = s.ok("datastore_search", json!({"resource_id": rid, "limit": 2, "offset": 1, "sort": "city", "fields": ["city", "population"], "records_format": "lists"})).await;
        assert_eq!(
            r["records"],
            json!([["Bonn", 336465], ["Hamburg", 1910160]]),
            "{kind}"
        );
        assert_eq!(r["total"], 4, "{kind}");
        let r = s.ok("datastore_search", json!({"resource_id": rid, "sort": "city", "fields": "city,capital,tags", "records_format": "csv", "limit": 2})).await;
        assert_eq!(
            r["records"], "Berlin,t,\"[\"\"big\"\",\"\"river\"\"]\"\nBonn,f,\n",
            "{kind}"
        );
        let r = s.ok("datastore_search", json!({"resource_id": rid, "fields": "capital", "distinct": true, "sort": "capital"})).await;
        assert_eq!(
            r["records"],
            json!([{"capital": false}, {"capital": true}]),
            "{kind}"
        );
        assert_eq!(r["total"], 2, "{kind}");

        // What is refused, with CKAN's messages.
        let e = err(
            &s,
            Some(&s.admin),
            "datastore_search",
            json!({"resource_id": rid, "filters": {"nope": 1}}),
        )
        .await;
        assert_eq!(e["filters"], json!(["Unknown field: nope"]), "{kind}");
        let e = err(
            &s,
            Some(&s.admin),
            "datastore_search",
            json!({"resource_id": rid, "sort": "nope desc"}),
        )
        .await;
        assert_eq!(e["sort"], json!(["invalid value \"nope desc\""]), "{kind}");
        let e = err(
            &s,
            Some(&s.admin),
            "datastore_search",
            json!({"resource_id": rid, "fields": "_full_text"}),
        )
        .await;
        assert_eq!(
            e["fields"],
            json!(["invalid value \"_full_text\""]),
            "{kind}"
        );
        let e = err(
            &s,
            Some(&s.admin),
            "datastore_search",
            json!({"resource_id": "no-such"}),
        )
        .await;
        assert_eq!(
            e["message"], "Not found: Resource \"no-such\" was not found.",
            "{kind}"
        );
        let e = err(&s, Some(&s.admin), "datastore_upsert", json!({"resource_id": rid, "force": true, "method": "insert", "records": [{"city": "Kiel", "population": "many"}]})).await;
        assert_eq!(
            e["records"],
            json!(["invalid input syntax for type integer: \"many\""]),
            "{kind}"
        );
        assert_eq!(e["records_row"], 0, "{kind}");
        let e = err(
            &s,
            Some(&s.admin),
            "datastore_create",
            json!({"resource_id": rid, "force": true, "fields": [{"id": "_bad", "type": "text"}]}),
        )
        .await;
        assert_eq!(
            e["fields"],
            json!(["\"_bad\" is not a valid field name"]),
            "{kind}"
        );
        let e = err(&s, Some(&s.admin), "datastore_create", json!({"resource_id": rid, "force": true, "fields": [{"id": "x", "type": "int; drop table x"}]})).await;
        assert_eq!(
            e["fields"],
            json!(["\"int; drop table x\" is not a valid field type"]),
            "{kind}"
        );
        let e = err(&s, Some(&s.admin), "datastore_upsert", json!({"resource_id": rid, "force": true, "records": [{"city": "Bonn", "elevation": 60}]})).await;
        assert_eq!(
            e["fields"],
            json!(["fields \"elevation\" do not exist"]),
            "{kind}"
        );
        let e = err(&s, Some(&s.admin), "datastore_upsert", json!({"resource_id": rid, "force": true, "method": "insert", "records": [{"city": "Bonn"}]})).await;
        assert_eq!(
            e["records"],
            json!(["duplicate key value violates unique constraint"]),
            "{kind}: the key is unique"
        );
        let count = s
            .ok("datastore_search", json!({"resource_id": rid, "limit": 0}))
            .await;
        assert_eq!(count["total"], 4, "{kind}: refused writes changed nothing");

        // Indexes: made, then replaced by another set (the old ones dropped first), bounded.
        for idx in [json!("population, founded"), json!([["area", "city"]])] {
            s.ok(
                "datastore_create",
                json!({"resource_id": rid, "force": true, "indexes": idx}),
            )
            .await;
        }
        let many: Vec<String> = (0..65).map(|_| "city".to_string()).collect();
        let e = err(
            &s,
            Some(&s.admin),
            "datastore_create",
            json!({"resource_id": rid, "force": true, "indexes": many}),
        )
        .await;
        assert_eq!(e["indexes"], json!(["at most 64 indexes"]), "{kind}");

        // Upsert by the key: one updated, one inserted; update of a missing key refused;
        // a dry run changes nothing.
        s.ok(
            "datastore_upsert",
            json!({"resource_id": rid, "force": true, "records": [
            {"city": "Bonn", "population": 337000}, {"city": "Kiel", "population": 246601}]}),
        )
        .await;
        let r = s
            .ok(
                "datastore_search",
                json!({"resource_id": rid, "filters": {"city": ["Bonn", "Kiel"]}, "sort": "city"}),
            )
            .await;
        assert_eq!(r["records"][0]["population"], 337000, "{kind}");
        assert_eq!(
            r["records"][0]["area"], 141.1,
            "{kind}: untouched columns kept"
        );
        assert_eq!(r["records"][1]["city"], "Kiel", "{kind}");
        let e = err(&s, Some(&s.admin), "datastore_upsert", json!({"resource_id": rid, "force": true, "method": "update", "records": [{"city": "Atlantis", "population": 1}]})).await;
        assert!(
            e["key"][0].as_str().unwrap().contains("not found"),
            "{kind}: {e}"
        );
        let dry = s.ok("datastore_upsert", json!({"resource_id": rid, "force": true, "dry_run": true, "records": [{"city": "Lübeck", "population": 1}]})).await;
        assert_eq!(dry["dry_run"], true, "{kind}");
        let r = s
            .ok("datastore_search", json!({"resource_id": rid, "limit": 0}))
            .await;
        assert_eq!(r["total"], 5, "{kind}: the dry run left nothing");

        // Delete by filters, then every row (the table stays), then the table.
        s.ok(
            "datastore_delete",
            json!({"resource_id": rid, "force": true, "filters": {"city": "Kiel"}}),
        )
        .await;
        let r = s
            .ok("datastore_search", json!({"resource_id": rid, "limit": 0}))
            .await;
        assert_eq!(r["total"], 4, "{kind}");
        s.ok(
            "datastore_records_delete",
            json!({"resource_id": rid, "force": true, "filters": {}}),
        )
        .await;
        let info = s.ok("datastore_info", json!({"id": rid})).await;
        assert_eq!(info["meta"]["count"], 0, "{kind}");
        assert_eq!(info["fields"][0]["id"], "city", "{kind}");
        let dropped = s
            .ok(
                "datastore_delete",
                json!({"resource_id": rid, "force": true}),
            )
            .await;
        assert_eq!(dropped, json!({"resource_id": rid}), "{kind}");
        assert_eq!(
            s.ok("resource_show", json!({"id": rid})).await["datastore_active"],
            false,
            "{kind}"
        );
        let e = err(
            &s,
            Some(&s.admin),
            "datastore_search",
            json!({"resource_id": rid}),
        )
        .await;
        assert_eq!(e["__type"], "Not Found Error", "{kind}");
    }
}

#[tokio::test]
async fn a_new_resource_for_the_datastore_and_who_may_read_and_write() {
    for kind in stores().await {
        let (s, _) = server(kind).await;
        let made = s
            .ok(
                "datastore_create",
                json!({"resource": {"package_id": "cities", "name": "Made here"},
                       "records": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]}),
            )
            .await;
        let rid = made["resource_id"].as_str().unwrap().to_string();
        let res = s.ok("resource_show", json!({"id": rid})).await;
        assert_eq!(res["url_type"], "datastore", "{kind}");
        // A datastore resource is written without force; types were guessed.
        s.ok(
            "datastore_upsert",
            json!({"resource_id": rid, "method": "insert", "records": [{"a": 3, "b": "z"}]}),
        )
        .await;
        let r = s.ok("datastore_search", json!({"resource_id": rid})).await;
        assert_eq!(r["fields"][1], json!({"id": "a", "type": "int4"}), "{kind}");
        assert_eq!(r["total"], 3, "{kind}");

        // Public dataset: anyone reads; only editors write.
        let anon = s
            .call(None, "datastore_search", json!({"resource_id": rid}))
            .await;
        assert!(anon.is_ok(), "{kind}");
        let outsider = s.user("reader").await;
        let e = err(
            &s,
            Some(&outsider),
            "datastore_upsert",
            json!({"resource_id": rid, "method": "insert", "records": [{"a": 9}]}),
        )
        .await;
        assert_eq!(e["__type"], "Authorization Error", "{kind}");
        let e = err(
            &s,
            None,
            "datastore_create",
            json!({"resource_id": rid, "records": [{"a": 9}]}),
        )
        .await;
        assert_eq!(e["__type"], "Authorization Error", "{kind}");
        // Private dataset: its rows are private too.
        s.ok("package_patch", json!({"id": "cities", "private": true}))
            .await;
        let e = err(&s, None, "datastore_search", json!({"resource_id": rid})).await;
        assert_eq!(e["__type"], "Authorization Error", "{kind}");
        let e = err(&s, Some(&outsider), "datastore_info", json!({"id": rid})).await;
        assert_eq!(e["__type"], "Authorization Error", "{kind}");

        // Deleting the resource drops its table.
        s.ok("resource_delete", json!({"id": rid})).await;
        let e = err(
            &s,
            Some(&s.admin),
            "datastore_search",
            json!({"resource_id": rid}),
        )
        .await;
        assert_eq!(e["__type"], "Not Found Error", "{kind}");
    }
}

#[tokio::test]
async fn search_over_http_as_a_script_would() {
    for kind in stores().await {
        let (s, rid) = server(kind).await;
        s.ok("datastore_create", cities(&rid)).await;
        let url = format!(
            "{}/api/3/action/datastore_search?resource_id={rid}&filters=%7B%22capital%22%3Atrue%7D&limit=5",
            s.base_url
        );
        let body: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
        assert_eq!(body["success"], true, "{kind}: {body}");
        assert_eq!(body["result"]["records"][0]["city"], "Berlin", "{kind}");
        let next = body["result"]["_links"]["next"].as_str().unwrap();
        assert!(
            next.starts_with("/api/3/action/datastore_search?resource_id="),
            "{kind}: {next}"
        );
        let followed: Value = reqwest::get(format!("{}{next}", s.base_url))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            followed["result"]["records"],
            json!([]),
            "{kind}: the next page is past the one row"
        );
        // Hostile parameters: CKAN-shaped errors, never a 500.
        for q in [
            "filters=not-json",
            "limit=-1",
            "limit=abc",
            "offset=-5",
            "sort=%22city%22%3B%20DROP%20TABLE%20x",
            "q=%22%28%29%2A%3A%5E",
            "records_format=xml",
            "fields=city%00",
        ] {
            let r = reqwest::get(format!(
                "{}/api/3/action/datastore_search?resource_id={rid}&{q}",
                s.base_url
            ))
            .await
            .unwrap();
            assert!(r.status().as_u16() < 500, "{kind}: {q}: {}", r.status());
            let body: Value = r.json().await.unwrap();
            assert!(body["success"].is_boolean(), "{kind}: {q}");
        }
        let r = s
            .ok("datastore_search", json!({"resource_id": rid, "limit": 0}))
            .await;
        assert_eq!(r["total"], 4, "{kind}: nothing changed");
    }
}

/// CKAN 2.12's filter operations: comparisons, `$or`/`$and`, lists of dicts, their limits and
/// messages.
#[tokio::test]
async fn filter_operations_as_ckan_2_12() {
    for kind in stores().await {
        let (s, rid) = server(kind).await;
        s.ok("datastore_create", cities(&rid)).await;
        let cities_of = |v: &Value| -> Vec<String> {
            v["records"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["city"].as_str().unwrap().to_string())
                .collect()
        };
        let search = |filters: Value| {
            let s = &s;
            let rid = rid.clone();
            async move {
                s.call(
                    None,
                    "datastore_search",
                    json!({"resource_id": rid, "filters": filters, "sort": "city"}),
                )
                .await
                .map_err(|e| e.to_error_object())
            }
        };
        for (filters, want) in [
            (
                json!({"population": {"gt": 1600000}}),
                vec!["Berlin", "Hamburg"],
            ),
            (
                json!({"population": {"gte": 336465, "lt": 1600000}}),
                vec!["Bonn", "Munich"],
            ),
            (
                json!({"$or": [{"city": "Bonn"}, {"population": {"gte": 3000000}}]}),
                vec!["Berlin", "Bonn"],
            ),
            (
                json!([{"city": "Bonn"}, {"city": "Munich"}]),
                vec!["Bonn", "Munich"],
            ),
            (
                json!({"city": [{"lt": "Bz"}, "Munich"]}),
                vec!["Berlin", "Bonn", "Munich"],
            ),
            (
                json!({"$and": [{"capital": false}, {"$or": [{"city": "Bonn"}, {"city": "Hamburg"}]}]}),
                vec!["Bonn", "Hamburg"],
            ),
            (json!({"_id": {"lte": 2}}), vec!["Berlin", "Hamburg"]),
            (
                json!({"founded": {"lt": "1200-01-01"}}),
                vec!["Hamburg", "Munich"],
            ),
            (json!({"city": {"in": []}}), vec![]),
            (
                json!("{\"population\": {\"gt\": 1600000}}"),
                vec!["Berlin", "Hamburg"],
            ),
        ] {
            let got = search(filters.clone())
                .await
                .unwrap_or_else(|e| panic!("{kind} {filters}: {e}"));
            assert_eq!(cities_of(&got), want, "{kind} {filters}");
        }
        let deep = (0..11).fold(json!({"city": "Bonn"}), |inner, _| json!({"$or": [inner]}));
        let mut many = serde_json::Map::new();
        for i in 0..101 {
            many.insert(format!("$or{i}"), json!([]));
        }
        for (filters, want) in [
            (
                json!({"$not": [{"city": "Bonn"}]}),
                "Unknown operators (must be one of $or, $and): $not",
            ),
            (
                json!({"$or": {"city": "Bonn"}}),
                "Filter operations must be defined as a list of dicts: {'city': 'Bonn'}",
            ),
            (json!({"nope": {"gt": 1}}), "Unknown field: nope"),
            (
                json!({"population": {"like": 1}}),
                "Unknown filter operation: FilterOp(field='population', op='like', value=1)",
            ),
            (deep, "Maximum nesting depth for filter operations reached"),
            (
                Value::Object(many),
                "Maximum number of filter operations exceeded",
            ),
            (json!("not json"), "Cannot parse JSON"),
            (
                json!([1, 2]),
                "Filters must be defined as a dict or a list of dicts",
            ),
            (
                json!({"population": {"gt": "many"}}),
                "invalid input syntax for type integer: \"many\"",
            ),
        ] {
            let e = search(filters.clone())
                .await
                .expect_err(&filters.to_string());
            assert_eq!(e["filters"][0], want, "{kind} {filters}: {e}");
        }
        // Huge lists are refused before they reach the store, by search and by delete, and
        // delete nothing. One list holds at most 10,000 items (the framework's cap), but 100
        // lists could give a million values, past the stores' bound-parameter limits
        // (32,766 / 65,535), where a delete would fail with a 500.
        let list: Vec<Value> = (0..6_000).map(|i| json!(format!("c{i}"))).collect();
        let many = json!({"$or": [{"city": list.clone()}, {"city": list.clone()}, {"city": list}]});
        let e = search(many.clone()).await.expect_err("18,000 values");
        assert_eq!(
            e["filters"][0], "Maximum number of filter values (10000) exceeded",
            "{kind}: {e}"
        );
        let e = err(
            &s,
            Some(&s.admin),
            "datastore_records_delete",
            json!({"resource_id": rid, "force": true, "filters": many}),
        )
        .await;
        assert_eq!(e["__type"], "Validation Error", "{kind}: {e}");
        assert_eq!(
            cities_of(&search(json!({})).await.unwrap()).len(),
            4,
            "{kind}"
        );
        // datastore_delete takes the same filters.
        s.ok(
            "datastore_delete",
            json!({"resource_id": rid, "force": true, "filters": {"population": {"lt": 400000}}}),
        )
        .await;
        let left = search(json!({})).await.unwrap();
        assert_eq!(cities_of(&left), ["Berlin", "Hamburg", "Munich"], "{kind}");
    }
}

/// Aliases (CKAN's views): another name for reading a table, replaced by the next
/// `datastore_create` that gives `aliases`, refused when taken, gone with the table.
#[tokio::test]
async fn aliases_name_a_table_for_reading() {
    for kind in stores().await {
        let (s, rid) = server(kind).await;
        let mut p = cities(&rid);
        p["aliases"] = json!("german-cities, staedte");
        s.ok("datastore_create", p).await;
        let by_alias = s
            .ok(
                "datastore_search",
                json!({"resource_id": "german-cities", "limit": 1}),
            )
            .await;
        assert_eq!(by_alias["total"], 4, "{kind}");
        assert_eq!(by_alias["resource_id"], rid.as_str(), "{kind}");
        let info = s.ok("datastore_info", json!({"id": "staedte"})).await;
        assert_eq!(
            info["meta"]["aliases"],
            json!(["german-cities", "staedte"]),
            "{kind}"
        );
        assert_eq!(info["meta"]["id"], rid.as_str(), "{kind}");
        // Taken names and bad names.
        let other = s
            .ok(
                "datastore_create",
                json!({"resource": {"package_id": "cities"}, "fields": [{"id": "a", "type": "text"}]}),
            )
            .await["resource_id"]
            .as_str()
            .unwrap()
            .to_string();
        for (aliases, want) in [
            (json!(["staedte"]), "The alias \"staedte\" already exists."),
            (json!([rid.clone()]), &*format!("\"{rid}\" already exists")),
            (
                json!(["bad%name"]),
                "\"bad%name\" is not a valid alias name",
            ),
            (json!(["_hidden"]), "\"_hidden\" is not a valid alias name"),
        ] {
            let e = err(
                &s,
                Some(&s.admin),
                "datastore_create",
                json!({"resource_id": other, "aliases": aliases}),
            )
            .await;
            assert_eq!(e["alias"][0], want, "{kind}: {e}");
        }
        // A private dataset's table stays private under an alias.
        s.ok("package_patch", json!({"id": "cities", "private": true}))
            .await;
        let e = err(
            &s,
            None,
            "datastore_search",
            json!({"resource_id": "staedte"}),
        )
        .await;
        assert_eq!(e["__type"], "Authorization Error", "{kind}: {e}");
        // New aliases replace the old ones.
        s.ok(
            "datastore_create",
            json!({"resource_id": rid, "force": true, "aliases": ["cities-de"]}),
        )
        .await;
        let e = err(
            &s,
            Some(&s.admin),
            "datastore_search",
            json!({"resource_id": "staedte"}),
        )
        .await;
        assert_eq!(e["__type"], "Not Found Error", "{kind}: {e}");
        s.ok("datastore_search", json!({"resource_id": "cities-de"}))
            .await;
        // Gone with the table.
        s.ok(
            "datastore_delete",
            json!({"resource_id": rid, "force": true}),
        )
        .await;
        let e = err(
            &s,
            Some(&s.admin),
            "datastore_search",
            json!({"resource_id": "cities-de"}),
        )
        .await;
        assert_eq!(e["__type"], "Not Found Error", "{kind}: {e}");
    }
}

/// Issue 46: a table of 1,000 fields (the documented limit) is made, written and searched on
/// both stores; SQLite refused a full-text expression of more than about 500 columns.
#[tokio::test]
async fn a_table_of_a_thousand_fields() {
    for kind in stores().await {
        let (s, rid) = server(kind).await;
        let fields: Vec<Value> = (0..1000)
            .map(|i| json!({"id": format!("c{i}"), "type": "text"}))
            .collect();
        let record: serde_json::Map<String, Value> = (0..1000)
            .map(|i| (format!("c{i}"), json!(format!("v{i}"))))
            .collect();
        s.ok(
            "datastore_create",
            json!({"resource_id": rid, "force": true, "fields": fields,
                   "records": [record]}),
        )
        .await;
        let r = s
            .ok("datastore_search", json!({"resource_id": rid, "q": "v999"}))
            .await;
        assert_eq!(r["total"], 1, "{kind}");
        assert_eq!(r["records"][0]["c999"], "v999", "{kind}");
    }
}
