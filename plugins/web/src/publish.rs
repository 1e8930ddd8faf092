//! Publishing through the web: CKAN's two-stage dataset creation (the metadata, then the data,
//! with a file upload), editing and deleting datasets and resources, and following a dataset.
//! Every write is the Action API's action run as the visitor, in its own transaction; a form
//! the action refuses comes back with the action's messages next to their fields, and nothing
//! is changed.

use axum::extract::{OriginalUri, Request, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use catalog_framework::prelude::*;

use crate::forms::{field_errors, form_page, posted, posted_with_files, redirect, to_login, Form};
use crate::i18n;
use crate::render::Visit;
use crate::visit::{error_page, params, visit};

pub(crate) fn routes(mut r: Router<AppState>) -> Router<AppState> {
    for p in i18n::prefixes() {
        r = r
            .route(
                &format!("{p}/dataset/new"),
                get(dataset_new_form).post(dataset_new),
            )
            .route(
                &format!("{p}/dataset/edit/{{id}}"),
                get(dataset_edit_form).post(dataset_edit),
            )
            .route(
                &format!("{p}/dataset/delete/{{id}}"),
                get(dataset_delete_form).post(dataset_delete),
            )
            .route(
                &format!("{p}/dataset/{{id}}/resource/new"),
                get(resource_new_form).post(resource_new),
            )
            .route(
                &format!("{p}/dataset/{{id}}/resource/{{rid}}/edit"),
                get(resource_edit_form).post(resource_edit),
            )
            .route(
                &format!("{p}/dataset/{{id}}/resource/{{rid}}/delete"),
                get(resource_delete_form).post(resource_delete),
            )
            .route(&format!("{p}/dataset/follow/{{id}}"), post(follow))
            .route(&format!("{p}/dataset/unfollow/{{id}}"), post(unfollow));
    }
    r
}

/// The dataset form's fields (CKAN's names).
const DATASET_FIELDS: &[&str] = &[
    "title",
    "name",
    "notes",
    "url",
    "version",
    "author",
    "author_email",
    "maintainer",
    "maintainer_email",
    "license_id",
];

/// The resource form's text fields (the file is `upload`).
const RESOURCE_FIELDS: &[&str] = &["url", "name", "description", "format"];

/// The path's segments after the locale prefix, percent-decoded.
fn segments(uri: &Uri) -> Vec<String> {
    uri.path()
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect()
}

/// The segment after `marker` (`dataset`, `edit`, `resource`…).
fn after(uri: &Uri, marker: &str) -> String {
    let segs = segments(uri);
    segs.iter()
        .position(|s| s == marker)
        .and_then(|i| segs.get(i + 1).cloned())
        .unwrap_or_default()
}

/// The dataset's id of `/dataset/<verb>/<id>`: the last segment.
fn last(uri: &Uri) -> String {
    segments(uri).pop().unwrap_or_default()
}

/// A page that needs a logged-in visitor: the login page for anyone else.
fn need_login(visit: &Visit, uri: &Uri) -> Option<Response> {
    if visit.user.is_some() {
        return None;
    }
    let back = match uri.query() {
        Some(q) => format!("{}?{q}", uri.path()),
        None => uri.path().to_string(),
    };
    Some(to_login(visit, &back))
}

/// A dataset's dict as the form shows it: `tag_string` for the tags, `private` as CKAN's
/// `True`/`False`.
fn dataset_values(d: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for f in DATASET_FIELDS {
        out.insert((*f).into(), json!(d[*f].as_str().unwrap_or_default()));
    }
    let tags: Vec<&str> = d["tags"]
        .as_array()
        .map(|ts| ts.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    out.insert("tag_string".into(), json!(tags.join(", ")));
    out.insert("owner_org".into(), d["owner_org"].clone());
    out.insert(
        "private".into(),
        json!(if d["private"] == json!(true) {
            "True"
        } else {
            "False"
        }),
    );
    Value::Object(out)
}

/// The sent form as the form shows it again.
fn form_values(form: &Form, fields: &[&str]) -> Value {
    let mut out = serde_json::Map::new();
    for f in fields {
        out.insert((*f).into(), json!(form.get(f).unwrap_or_default()));
    }
    Value::Object(out)
}

/// A URL name from a title (CKAN's `munge_title_to_name`, which its form script also
/// suggests): the form works without the script, an empty name takes the title's. No title,
/// no name: the action then says what is missing.
fn slug(title: &str) -> String {
    if title.trim().is_empty() {
        return String::new();
    }
    catalog_framework::munge::munge_title_to_name(title)
}

/// The action's params from the dataset form: the text fields, the tags of `tag_string`, the
/// organization and visibility.
fn dataset_params(form: &Form) -> Params {
    let mut p = Params::new();
    for f in DATASET_FIELDS {
        p.insert((*f).into(), json!(form.text(f)));
    }
    if form.text("name").is_empty() {
        p.insert("name".into(), json!(slug(&form.text("title"))));
    }
    let tags: Vec<Value> = form
        .text("tag_string")
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| json!({"name": t}))
        .collect();
    p.insert("tags".into(), Value::Array(tags));
    let org = form.text("owner_org");
    if !org.is_empty() {
        p.insert("owner_org".into(), json!(org));
    }
    p.insert("private".into(), json!(form.get("private") == Some("True")));
    p
}

/// The dataset form's errors: the action's, with the tags' shown at `tag_string`.
fn dataset_errors(e: &CkanError) -> Value {
    let mut errors = field_errors(e);
    if let Some(m) = errors.as_object_mut() {
        if let Some(t) = m.remove("tags") {
            m.insert("tag_string".into(), t);
        }
    }
    errors
}

/// What the dataset form offers: the organizations the visitor may publish in, the licenses.
async fn dataset_choices(ctx: &mut ActionContext) -> (Value, Value) {
    let orgs = ctx
        .call(
            "organization_list_for_user",
            params(json!({"permission": "create_dataset"})),
        )
        .await
        .unwrap_or_else(|_| json!([]));
    let licenses = ctx
        .call("license_list", Params::new())
        .await
        .unwrap_or_else(|_| json!([]));
    (orgs, licenses)
}

/// Renders the dataset form (`stage`: the creation's first step; else editing `pkg`).
async fn dataset_form(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    status: StatusCode,
    pkg: Option<&Value>,
    data: Value,
    errors: Value,
) -> Response {
    let mut ctx = visit.context(app);
    let (organizations, licenses) = dataset_choices(&mut ctx).await;
    let action = match pkg {
        Some(d) => format!(
            "{}/dataset/edit/{}",
            visit.prefix,
            d["name"].as_str().unwrap_or_default()
        ),
        None => format!("{}/dataset/new", visit.prefix),
    };
    form_page(
        app,
        visit,
        headers,
        "dataset/new.html",
        status,
        json!({
            "pkg": pkg, "data": data, "errors": errors, "form_action": action,
            "organizations": organizations, "licenses": licenses, "stage": pkg.is_none(),
        }),
    )
}

fn status_of(errors: &Value) -> StatusCode {
    if errors.as_object().is_some_and(|m| !m.is_empty()) {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    }
}

/// `GET /dataset/new`: the first stage, the dataset's metadata.
async fn dataset_new_form(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let mut ctx = visit.context(&app);
    if let Err(e) = ctx.check_access("package_create", &Params::new()).await {
        return need_login(&visit, &uri)
            .unwrap_or_else(|| error_page(&app, &visit, &headers, &e, "Dataset not found"));
    }
    let data = json!({"private": "True"});
    dataset_form(
        &app,
        &visit,
        &headers,
        StatusCode::OK,
        None,
        data,
        json!({}),
    )
    .await
}

/// `POST /dataset/new`: the dataset created as a draft, then on to its first resource.
async fn dataset_new(State(app): State<AppState>, req: Request) -> Response {
    let (parts, visit, form) = match posted(&app, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let mut p = dataset_params(&form);
    p.insert("state".into(), json!("draft"));
    // As CKAN's form: the draft state may be set by whoever may create the dataset.
    let mut ctx = visit.context(&app);
    ctx.allow_state_change = true;
    match ctx.run_top("package_create", p).await {
        Ok(d) => redirect(&format!(
            "{}/dataset/{}/resource/new",
            visit.prefix,
            d["name"].as_str().unwrap_or_default()
        )),
        Err(e) if e.kind == ErrorKind::Validation => {
            let mut data = form_values(&form, DATASET_FIELDS);
            data["tag_string"] = json!(form.text("tag_string"));
            data["owner_org"] = json!(form.text("owner_org"));
            data["private"] = json!(form.text("private"));
            let errors = dataset_errors(&e);
            let status = status_of(&errors);
            dataset_form(&app, &visit, &parts.headers, status, None, data, errors).await
        }
        Err(e) => need_login(&visit, &parts.uri)
            .unwrap_or_else(|| error_page(&app, &visit, &parts.headers, &e, "Dataset not found")),
    }
}

/// The dataset of an edit page, when the visitor may edit it; `Err` is the answer instead.
async fn editable(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    uri: &Uri,
    id: &str,
) -> Result<Value, Response> {
    let mut ctx = visit.context(app);
    let d = ctx
        .call("package_show", params(json!({"id": id})))
        .await
        .map_err(|e| error_page(app, visit, headers, &e, "Dataset not found"))?;
    if let Err(e) = ctx
        .check_access("package_update", &params(json!({"id": d["id"]})))
        .await
    {
        return Err(need_login(visit, uri)
            .unwrap_or_else(|| error_page(app, visit, headers, &e, "Dataset not found")));
    }
    Ok(d)
}

/// `GET /dataset/edit/<id>`.
async fn dataset_edit_form(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let d = match editable(&app, &visit, &headers, &uri, &last(&uri)).await {
        Ok(d) => d,
        Err(r) => return r,
    };
    let data = dataset_values(&d);
    dataset_form(
        &app,
        &visit,
        &headers,
        StatusCode::OK,
        Some(&d),
        data,
        json!({}),
    )
    .await
}

/// `POST /dataset/edit/<id>`: the form's fields patched onto the dataset (resources, extras
/// and what the form does not show are kept).
async fn dataset_edit(State(app): State<AppState>, req: Request) -> Response {
    let (parts, visit, form) = match posted(&app, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let d = match editable(&app, &visit, &parts.headers, &parts.uri, &last(&parts.uri)).await {
        Ok(d) => d,
        Err(r) => return r,
    };
    let mut p = dataset_params(&form);
    p.insert("id".into(), d["id"].clone());
    if form.text("owner_org").is_empty() {
        p.remove("owner_org");
    }
    match visit.context(&app).run_top("package_patch", p).await {
        Ok(saved) => redirect(&format!(
            "{}/dataset/{}",
            visit.prefix,
            saved["name"].as_str().unwrap_or_default()
        )),
        Err(e) if e.kind == ErrorKind::Validation => {
            let mut data = form_values(&form, DATASET_FIELDS);
            data["tag_string"] = json!(form.text("tag_string"));
            data["owner_org"] = json!(form.text("owner_org"));
            data["private"] = json!(form.text("private"));
            let errors = dataset_errors(&e);
            let status = status_of(&errors);
            dataset_form(&app, &visit, &parts.headers, status, Some(&d), data, errors).await
        }
        Err(e) => error_page(&app, &visit, &parts.headers, &e, "Dataset not found"),
    }
}

/// A confirmation page before a delete.
fn confirm_page(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    what: &str,
    action: String,
    cancel: String,
) -> Response {
    form_page(
        app,
        visit,
        headers,
        "confirm_delete.html",
        StatusCode::OK,
        json!({"what": what, "form_action": action, "cancel": cancel}),
    )
}

/// `GET /dataset/delete/<id>`: are you sure?
async fn dataset_delete_form(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let d = match editable(&app, &visit, &headers, &uri, &last(&uri)).await {
        Ok(d) => d,
        Err(r) => return r,
    };
    let name = d["name"].as_str().unwrap_or_default();
    let title = d["title"]
        .as_str()
        .filter(|t| !t.is_empty())
        .unwrap_or(name);
    confirm_page(
        &app,
        &visit,
        &headers,
        title,
        format!("{}/dataset/delete/{name}", visit.prefix),
        format!("{}/dataset/edit/{name}", visit.prefix),
    )
}

/// `POST /dataset/delete/<id>`: `package_delete`, then the search page.
async fn dataset_delete(State(app): State<AppState>, req: Request) -> Response {
    let (parts, visit, _) = match posted(&app, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let id = last(&parts.uri);
    match visit
        .context(&app)
        .run_top("package_delete", params(json!({"id": id})))
        .await
    {
        Ok(_) => redirect(&format!("{}/dataset/", visit.prefix)),
        Err(e) => error_page(&app, &visit, &parts.headers, &e, "Dataset not found"),
    }
}

/// Renders the resource form: a new resource of `pkg` (during creation when `pkg` is a draft)
/// or `res` edited.
#[allow(clippy::too_many_arguments)]
fn resource_form(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    status: StatusCode,
    pkg: &Value,
    res: Option<&Value>,
    data: Value,
    errors: Value,
) -> Response {
    let name = pkg["name"].as_str().unwrap_or_default();
    let action = match res {
        Some(r) => format!(
            "{}/dataset/{name}/resource/{}/edit",
            visit.prefix,
            r["id"].as_str().unwrap_or_default()
        ),
        None => format!("{}/dataset/{name}/resource/new", visit.prefix),
    };
    form_page(
        app,
        visit,
        headers,
        "dataset/resource_form.html",
        status,
        json!({
            "pkg": pkg, "res": res, "data": data, "errors": errors, "form_action": action,
            "stage": res.is_none() && pkg["state"] == "draft",
        }),
    )
}

/// `GET /dataset/<id>/resource/new`.
async fn resource_new_form(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let d = match editable(&app, &visit, &headers, &uri, &after(&uri, "dataset")).await {
        Ok(d) => d,
        Err(r) => return r,
    };
    resource_form(
        &app,
        &visit,
        &headers,
        StatusCode::OK,
        &d,
        None,
        json!({}),
        json!({}),
    )
}

/// The files of a resource form: the `upload` field's, when a file was chosen (a browser
/// sends an empty part without a name when none was).
fn chosen_upload(form: &Form) -> Vec<catalog_framework::context::Upload> {
    form.uploads
        .iter()
        .filter(|u| u.field == "upload" && !u.filename.is_empty())
        .cloned()
        .collect()
}

/// The resource action's params from the form; the uploaded file, if any, goes with them.
fn resource_params(form: &Form, uploads: &[catalog_framework::context::Upload]) -> Params {
    let mut p = Params::new();
    for f in RESOURCE_FIELDS {
        p.insert((*f).into(), json!(form.text(f)));
    }
    if let Some(u) = uploads.first() {
        p.insert("upload".into(), json!(u.filename));
    }
    p
}

/// Whether the dataset is published from a draft when the creation's last step ends
/// (`catalog.dataset.create_on_ui_requires_resources`, CKAN's default true).
fn requires_resources(app: &AppState) -> bool {
    app.config
        .catalog
        .other
        .get("dataset")
        .and_then(|d| d.get("create_on_ui_requires_resources"))
        .map(|v| !matches!(v, Value::Bool(false)) && v != "false")
        .unwrap_or(true)
}

/// `POST /dataset/<id>/resource/new`: `save` is CKAN's button value — `again` (save and add
/// another), `go-dataset` (back to the metadata), else finish (a draft becomes active).
async fn resource_new(State(app): State<AppState>, req: Request) -> Response {
    let (parts, visit, form) = match posted_with_files(&app, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let d = match editable(
        &app,
        &visit,
        &parts.headers,
        &parts.uri,
        &after(&parts.uri, "dataset"),
    )
    .await
    {
        Ok(d) => d,
        Err(r) => return r,
    };
    let name = d["name"].as_str().unwrap_or_default().to_string();
    let save = form.get("save").unwrap_or("go-metadata").to_string();
    if save == "go-dataset" {
        return redirect(&format!("{}/dataset/edit/{name}", visit.prefix));
    }
    let uploads = chosen_upload(&form);
    let given = !uploads.is_empty() || RESOURCE_FIELDS.iter().any(|f| !form.text(f).is_empty());
    let again = |errors: Value| {
        resource_form(
            &app,
            &visit,
            &parts.headers,
            StatusCode::BAD_REQUEST,
            &d,
            None,
            form_values(&form, RESOURCE_FIELDS),
            errors,
        )
    };
    if given {
        let mut p = resource_params(&form, &uploads);
        p.insert("package_id".into(), d["id"].clone());
        let mut ctx = visit.context(&app);
        ctx.uploads = uploads;
        match ctx.run_top("resource_create", p).await {
            Ok(_) => {}
            Err(e) if e.kind == ErrorKind::Validation => return again(field_errors(&e)),
            Err(e) => return error_page(&app, &visit, &parts.headers, &e, "Dataset not found"),
        }
        if save == "again" {
            return redirect(&format!("{}/dataset/{name}/resource/new", visit.prefix));
        }
    } else {
        let has_resources = d["resources"].as_array().is_some_and(|r| !r.is_empty());
        if save == "again" || (!has_resources && requires_resources(&app)) {
            return again(json!({"url": "You must add at least one data resource"}));
        }
    }
    if d["state"] == "draft" {
        let p = params(json!({"id": d["id"], "state": "active"}));
        let mut ctx = visit.context(&app);
        ctx.allow_state_change = true;
        if let Err(e) = ctx.run_top("package_patch", p).await {
            return error_page(&app, &visit, &parts.headers, &e, "Dataset not found");
        }
    }
    redirect(&format!("{}/dataset/{name}", visit.prefix))
}

/// The dataset and the resource of a resource's edit page; `Err` is the answer instead.
async fn editable_resource(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    uri: &Uri,
) -> Result<(Value, Value), Response> {
    let d = editable(app, visit, headers, uri, &after(uri, "dataset")).await?;
    let rid = after(uri, "resource");
    let res = d["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["id"] == rid.as_str()))
        .cloned()
        .ok_or_else(|| {
            let e = not_found("Resource not found");
            error_page(app, visit, headers, &e, "Resource not found")
        })?;
    Ok((d, res))
}

/// `GET /dataset/<id>/resource/<rid>/edit`.
async fn resource_edit_form(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let (d, res) = match editable_resource(&app, &visit, &headers, &uri).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let mut data = serde_json::Map::new();
    for f in RESOURCE_FIELDS {
        data.insert((*f).into(), json!(res[*f].as_str().unwrap_or_default()));
    }
    resource_form(
        &app,
        &visit,
        &headers,
        StatusCode::OK,
        &d,
        Some(&res),
        Value::Object(data),
        json!({}),
    )
}

/// `POST /dataset/<id>/resource/<rid>/edit`: `resource_patch` with the form (a new file
/// replaces the old; a new link replaces an uploaded file).
async fn resource_edit(State(app): State<AppState>, req: Request) -> Response {
    let (parts, visit, form) = match posted_with_files(&app, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let (d, res) = match editable_resource(&app, &visit, &parts.headers, &parts.uri).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let uploads = chosen_upload(&form);
    let mut p = resource_params(&form, &uploads);
    p.insert("id".into(), res["id"].clone());
    if uploads.is_empty() && form.text("url") != res["url"].as_str().unwrap_or_default() {
        p.insert("url_type".into(), json!(""));
    }
    let mut ctx = visit.context(&app);
    ctx.uploads = uploads;
    match ctx.run_top("resource_patch", p).await {
        Ok(_) => redirect(&format!(
            "{}/dataset/{}/resource/{}",
            visit.prefix,
            d["name"].as_str().unwrap_or_default(),
            res["id"].as_str().unwrap_or_default()
        )),
        Err(e) if e.kind == ErrorKind::Validation => resource_form(
            &app,
            &visit,
            &parts.headers,
            StatusCode::BAD_REQUEST,
            &d,
            Some(&res),
            form_values(&form, RESOURCE_FIELDS),
            field_errors(&e),
        ),
        Err(e) => error_page(&app, &visit, &parts.headers, &e, "Resource not found"),
    }
}

/// `GET /dataset/<id>/resource/<rid>/delete`: are you sure?
async fn resource_delete_form(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let (d, res) = match editable_resource(&app, &visit, &headers, &uri).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let name = d["name"].as_str().unwrap_or_default();
    let rid = res["id"].as_str().unwrap_or_default();
    let what = res["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .unwrap_or(rid);
    confirm_page(
        &app,
        &visit,
        &headers,
        what,
        format!("{}/dataset/{name}/resource/{rid}/delete", visit.prefix),
        format!("{}/dataset/{name}/resource/{rid}", visit.prefix),
    )
}

/// `POST /dataset/<id>/resource/<rid>/delete`: `resource_delete`, then the dataset's page.
async fn resource_delete(State(app): State<AppState>, req: Request) -> Response {
    let (parts, visit, _) = match posted(&app, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let (d, res) = match editable_resource(&app, &visit, &parts.headers, &parts.uri).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    match visit
        .context(&app)
        .run_top("resource_delete", params(json!({"id": res["id"]})))
        .await
    {
        Ok(_) => redirect(&format!(
            "{}/dataset/{}",
            visit.prefix,
            d["name"].as_str().unwrap_or_default()
        )),
        Err(e) => error_page(&app, &visit, &parts.headers, &e, "Resource not found"),
    }
}

/// `POST /dataset/follow/<id>` and `/dataset/unfollow/<id>`: back to the dataset's page.
async fn follow_or_unfollow(app: AppState, req: Request, action: &str) -> Response {
    let (parts, visit, _) = match posted(&app, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let id = last(&parts.uri);
    if let Some(r) = need_login(&visit, &parts.uri) {
        return r;
    }
    let mut ctx = visit.context(&app);
    let d = match ctx.call("package_show", params(json!({"id": id}))).await {
        Ok(d) => d,
        Err(e) => return error_page(&app, &visit, &parts.headers, &e, "Dataset not found"),
    };
    match visit
        .context(&app)
        .run_top(action, params(json!({"id": d["id"]})))
        .await
    {
        // Following twice, or unfollowing what one does not follow, changes nothing.
        Ok(_) => {}
        Err(e) if e.kind == ErrorKind::Validation || e.kind == ErrorKind::NotFound => {}
        Err(e) => return error_page(&app, &visit, &parts.headers, &e, "Dataset not found"),
    }
    redirect(&format!(
        "{}/dataset/{}",
        visit.prefix,
        d["name"].as_str().unwrap_or_default()
    ))
}

async fn follow(State(app): State<AppState>, req: Request) -> Response {
    follow_or_unfollow(app, req, "follow_dataset").await
}

async fn unfollow(State(app): State<AppState>, req: Request) -> Response {
    follow_or_unfollow(app, req, "unfollow_dataset").await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_titles() {
        assert_eq!(slug("Air Quality 2026 (Berlin)"), "air-quality-2026-berlin");
        assert_eq!(slug("   "), "");
        assert_eq!(slug("Ölpreise — Größe"), "olpreise-grosse");
        assert_eq!(slug(&"x".repeat(300)).len(), 95);
    }
}
