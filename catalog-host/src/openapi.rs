//! The OpenAPI 3.1 description of the Action API, generated from the registry: one path per
//! registered action (plugins' included), its request schema from the action's params struct,
//! CKAN's envelope and error object as the responses. Served at `/api/3/openapi.json`.

use serde_json::{json, Map, Value};

use catalog_framework::app::{Config, Registry};

/// The first paragraph of a help text, on one line (an operation's summary).
fn summary(doc: &str) -> String {
    doc.split("\n\n")
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The responses every action may give: the success envelope, and the error envelope with
/// CKAN's status codes.
fn responses() -> Value {
    let error = json!({"$ref": "#/components/responses/Error"});
    json!({
        "200": {"$ref": "#/components/responses/Success"},
        "400": error,
        "403": error,
        "404": error,
        "409": error,
        "default": error,
    })
}

/// Query parameters of a read action's GET: each property of its params schema (a GET sends
/// every value as text; lists as repeated keys).
fn query_parameters(schema: &Value) -> Vec<Value> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, s)| {
            let mut p = json!({
                "name": name,
                "in": "query",
                "required": required.contains(&name.as_str()),
                "schema": {"type": "string"},
            });
            if let Some(d) = s.get("description") {
                p["description"] = d.clone();
            }
            p
        })
        .collect()
}

/// The whole document.
pub fn document(registry: &Registry, config: &Config) -> Value {
    let mut paths = Map::new();
    for (name, action) in registry.actions() {
        let doc = action.doc();
        let schema = action
            .params_schema()
            .unwrap_or_else(|| json!({"type": "object"}));
        let mut item = Map::new();
        let mut op = json!({
            "operationId": name,
            "summary": summary(doc),
            "description": doc,
            "requestBody": {
                "required": false,
                "content": {"application/json": {"schema": schema}},
            },
            "responses": responses(),
        });
        if action.side_effect_free() {
            item.insert(
                "get".into(),
                json!({
                    "operationId": format!("{name}_get"),
                    "summary": summary(doc),
                    "description": doc,
                    "parameters": query_parameters(&schema),
                    "responses": responses(),
                }),
            );
        } else {
            op["security"] = json!([{"apiToken": []}, {"apiKey": []}]);
        }
        item.insert("post".into(), op);
        paths.insert(format!("/api/3/action/{name}"), Value::Object(item));
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": format!("{} Action API", config.catalog.site_title),
            "version": "3",
            "description": "CKAN's Action API (version 3). Every action answers the envelope \
                {help, success, result}; a failure answers {help, success: false, error} with \
                the error's __type and CKAN's status code. Read actions answer GET as well.",
        },
        "servers": [{"url": config.site_url()}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "apiToken": {"type": "apiKey", "in": "header", "name": "Authorization"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-CATALOG-API-Key"},
            },
            "responses": {
                "Success": {
                    "description": "The action's result in CKAN's envelope.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Success"}}},
                },
                "Error": {
                    "description": "CKAN's error envelope; a request refused before the action runs \
                        (malformed JSON, an unknown action, a GET of a write action, a method \
                        other than GET and POST) is answered, as CKAN answers it, with a bare JSON string.",
                    "content": {"application/json": {"schema": {"anyOf": [
                        {"$ref": "#/components/schemas/Failure"},
                        {"type": "string"},
                    ]}}},
                },
            },
            "schemas": {
                "Success": {
                    "type": "object",
                    "required": ["success", "result"],
                    "properties": {
                        "help": {"type": "string"},
                        "success": {"const": true},
                        "result": {},
                    },
                },
                "Failure": {
                    "type": "object",
                    "required": ["success", "error"],
                    "properties": {
                        "help": {"type": "string"},
                        "success": {"const": false},
                        "error": {"$ref": "#/components/schemas/Error"},
                    },
                },
                "Error": {
                    "type": "object",
                    "required": ["__type"],
                    "properties": {
                        "__type": {
                            "type": "string",
                            "examples": ["Validation Error", "Authorization Error", "Not Found Error", "Search Query Error", "Internal Server Error"],
                        },
                        "message": {"type": "string"},
                    },
                    "additionalProperties": true,
                },
            },
        },
    })
}
