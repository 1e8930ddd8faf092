//! Related items, as CKAN 2.5 kept them (`related_create`, `related_update`, `related_delete`,
//! `related_show`, `related_list`): an app, idea or visualization with a title, a URL and an
//! image, optionally linked to datasets. CKAN removed them in 2.6 (ckanext-showcase replaced
//! them); old clients still call `related_list` and `related_show`, so the older release's
//! answers are kept here. Activities for related items are not recorded.
#![forbid(unsafe_code)]

use std::collections::HashMap;

use catalog_framework::authz;
use catalog_framework::migration;
use catalog_framework::prelude::*;
use catalog_framework::store::time::now_iso;
use catalog_framework::store::RowExt;
use catalog_framework::typed::{InDict, Later, StrOrNum, Truthy};
use sqlx::AnyConnection;

/// The plugin: its tables.
pub struct RelatedPlugin;

const MIGRATIONS: &[Migration] = &[migration!("../migrations", "0001_related", portable)];

impl Plugin for RelatedPlugin {
    fn name(&self) -> &'static str {
        "related"
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }
}

register_plugin!(RelatedPlugin);

/// One related item as stored.
#[derive(Debug, Clone)]
struct Related {
    id: String,
    rel_type: String,
    title: Option<String>,
    description: Option<String>,
    image_url: Option<String>,
    url: Option<String>,
    created: String,
    owner_id: Option<String>,
    view_count: i64,
    featured: i64,
}

const COLUMNS: &str =
    "id, type, title, description, image_url, url, created, owner_id, view_count, featured";

fn from_row(r: &sqlx::any::AnyRow) -> Related {
    Related {
        id: r.s("id"),
        rel_type: r.s("type"),
        title: r.os("title"),
        description: r.os("description"),
        image_url: r.os("image_url"),
        url: r.os("url"),
        created: r.s("created"),
        owner_id: r.os("owner_id"),
        view_count: r.i("view_count"),
        featured: r.i("featured"),
    }
}

/// CKAN's `related_dictize` (`table_dictize`: every column, in table order).
fn dictize(r: &Related) -> Value {
    json!({
        "id": r.id, "type": r.rel_type, "title": r.title, "description": r.description,
        "image_url": r.image_url, "url": r.url, "created": r.created, "owner_id": r.owner_id,
        "view_count": r.view_count, "featured": r.featured,
    })
}

async fn by_id(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Option<Related>> {
    let row = sqlx::query(&format!("SELECT {COLUMNS} FROM related WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.as_ref().map(from_row))
}

/// The datasets an item is linked to (active links), in link order.
async fn linked_datasets(conn: &mut AnyConnection, related_id: &str) -> sqlx::Result<Vec<String>> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT dataset_id FROM related_dataset WHERE related_id = $1 AND status = 'active' ORDER BY id",
    )
    .bind(related_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|(d,)| d).collect())
}

fn text(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// A [`StrOrNum`] parameter's text (`None`: absent, null, or neither a string nor a number).
fn str_or_num(p: &Later<StrOrNum>) -> CkanResult<Option<String>> {
    Ok(p.get()?.map(|s| s.0))
}

/// CKAN's `url_validator`: empty, or http(s) with a host of letters, digits, dots and dashes.
fn valid_url(u: &str) -> bool {
    if u.is_empty() {
        return true;
    }
    let Some((scheme, rest)) = u.split_once("://") else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.split(':').next().unwrap_or("");
    matches!(scheme, "http" | "https")
        && !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
}

/// The item's fields from a create or update: `title` and `type` required on create;
/// `image_url` and `url` checked; `featured` an integer.
fn validate(p: &Params, create: bool) -> CkanResult<Map<String, Value>> {
    let mut errs = validation();
    let mut out = Map::new();
    for key in ["title", "type"] {
        match text(p.get(key)).filter(|s| !s.is_empty()) {
            Some(v) => {
                out.insert(key.into(), json!(v));
            }
            None if create || p.get(key).is_some_and(|v| !v.is_null()) => {
                errs.push(key, "Missing value")
            }
            None => {}
        }
    }
    if let Some(d) = p.get("description").filter(|v| !v.is_null()) {
        out.insert(
            "description".into(),
            json!(text(p.get("description")).unwrap_or_else(|| d.to_string())),
        );
    }
    for key in ["image_url", "url"] {
        if let Some(v) = text(p.get(key)) {
            if valid_url(&v) {
                out.insert(key.into(), json!(v));
            } else {
                errs.push(key, "Please provide a valid URL");
            }
        }
    }
    match p.get("featured") {
        None | Some(Value::Null) => {}
        Some(v) => match v
            .as_i64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        {
            Some(n) => {
                out.insert("featured".into(), json!(n));
            }
            None => errs.push("featured", "Invalid integer"),
        },
    }
    errs.finish()?;
    Ok(out)
}

/// `featured` asked for (present and not 0) by a non-sysadmin.
fn wants_featured(p: &Params) -> bool {
    match p.get("featured") {
        None | Some(Value::Null) => false,
        Some(Value::Number(n)) => n.as_i64() != Some(0),
        Some(_) => true,
    }
}

action_params! {
    /// Create a related item (an app, idea or visualization), optionally linked to a dataset.
    /// CKAN 2.5's action; removed in CKAN 2.6.
    ///
    /// :param title: required
    /// :param type: required (`idea`, `application`, `visualization` …)
    /// :param description: optional
    /// :param url: optional
    /// :param image_url: optional
    /// :param dataset_id: optional: the dataset's id or name
    /// :param featured: optional, sysadmins only
    /// :rtype: dictionary
    pub struct RelatedCreateParams {
        /// the title
        title: InDict<String>,
        /// `idea`, `application`, `visualization` …
        rel_type: InDict<String> as "type",
        /// a description
        description: InDict<String>,
        /// its URL
        url: InDict<String>,
        /// the URL of its image
        image_url: InDict<String>,
        /// the id or name of the dataset to link it to
        dataset_id: InDict<String>,
        /// featured (an integer; sysadmins only)
        featured: InDict<i64>,
    }
}

async fn related_create(ctx: &mut ActionContext, p: RelatedCreateParams) -> CkanResult<Value> {
    let p = p.__extras;
    ctx.check_access("related_create", &p).await?;
    let fields = validate(&p, true)?;
    let dataset = match text(p.get("dataset_id")).filter(|s| !s.is_empty()) {
        None => None,
        Some(d) => {
            let row = ctx.package_row(&d).await?.ok_or_else(|| {
                validation()
                    .field("dataset_id", "Dataset not found")
                    .build()
            })?;
            // Nothing is attached to a dataset the caller may not read (CKAN lets any user
            // attach an item to any dataset; docs/API-COMPAT.md).
            if !authz::can_read_package(ctx, &row).await? {
                return Err(not_authorized(format!(
                    "User {} not authorized to read package {d}",
                    ctx.user_name()
                )));
            }
            Some(row)
        }
    };
    let item = Related {
        id: catalog_framework::store::new_id(),
        rel_type: fields["type"].as_str().unwrap_or_default().to_string(),
        title: fields
            .get("title")
            .and_then(Value::as_str)
            .map(str::to_string),
        description: fields
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string),
        image_url: fields
            .get("image_url")
            .and_then(Value::as_str)
            .map(str::to_string),
        url: fields
            .get("url")
            .and_then(Value::as_str)
            .map(str::to_string),
        created: now_iso(),
        owner_id: ctx.user_id().map(str::to_string),
        view_count: 0,
        featured: fields.get("featured").and_then(Value::as_i64).unwrap_or(0),
    };
    let conn = ctx.db().await?;
    sqlx::query(
        "INSERT INTO related (id, type, title, description, image_url, url, created, owner_id, view_count, featured, seq) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, (SELECT COALESCE(MAX(seq), 0) + 1 FROM related))",
    )
    .bind(&item.id)
    .bind(&item.rel_type)
    .bind(&item.title)
    .bind(&item.description)
    .bind(&item.image_url)
    .bind(&item.url)
    .bind(&item.created)
    .bind(&item.owner_id)
    .bind(item.featured)
    .execute(&mut *conn)
    .await?;
    if let Some(d) = dataset {
        sqlx::query("INSERT INTO related_dataset (id, dataset_id, related_id, status) VALUES ($1, $2, $3, 'active')")
            .bind(catalog_framework::store::new_id())
            .bind(&d.id)
            .bind(&item.id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(dictize(&item))
}

/// `id` as CKAN's `get_or_bust` reads it (from its [`text`]).
fn required_id(id: Option<String>) -> CkanResult<String> {
    id.filter(|s| !s.is_empty()).ok_or_else(|| missing("id"))
}

action_params! {
    /// Update a related item (its owner, or a sysadmin); fields not given keep their values.
    ///
    /// :param id: the related item's id
    /// :rtype: dictionary
    pub struct RelatedUpdateParams {
        /// the related item's id
        id: InDict<String>,
        /// a new title
        title: InDict<String>,
        /// a new type
        rel_type: InDict<String> as "type",
        /// a new description
        description: InDict<String>,
        /// a new URL
        url: InDict<String>,
        /// a new image URL
        image_url: InDict<String>,
        /// featured (an integer; sysadmins only)
        featured: InDict<i64>,
    }
}

async fn related_update(ctx: &mut ActionContext, p: RelatedUpdateParams) -> CkanResult<Value> {
    let p = p.__extras;
    let id = required_id(text(p.get("id")))?;
    let mut item = by_id(ctx.db().await?, &id)
        .await?
        .ok_or_else(|| not_found("Item was not found."))?;
    let mut auth = p.clone();
    auth.insert("__owner_id".into(), json!(item.owner_id));
    auth.insert("__featured".into(), json!(item.featured));
    ctx.check_access("related_update", &auth).await?;
    let fields = validate(&p, false)?;
    let s = |k: &str| fields.get(k).and_then(Value::as_str).map(str::to_string);
    if let Some(v) = s("title") {
        item.title = Some(v);
    }
    if let Some(v) = s("type") {
        item.rel_type = v;
    }
    if fields.contains_key("description") {
        item.description = s("description");
    }
    if fields.contains_key("image_url") {
        item.image_url = s("image_url");
    }
    if fields.contains_key("url") {
        item.url = s("url");
    }
    if let Some(f) = fields.get("featured").and_then(Value::as_i64) {
        item.featured = f;
    }
    sqlx::query(
        "UPDATE related SET type = $2, title = $3, description = $4, image_url = $5, url = $6, featured = $7 WHERE id = $1",
    )
    .bind(&item.id)
    .bind(&item.rel_type)
    .bind(&item.title)
    .bind(&item.description)
    .bind(&item.image_url)
    .bind(&item.url)
    .bind(item.featured)
    .execute(&mut *ctx.db().await?)
    .await?;
    Ok(dictize(&item))
}

action_params! {
    /// Delete a related item (its owner, whoever may delete its first dataset, or a sysadmin).
    ///
    /// :param id: the related item's id
    pub struct RelatedDeleteParams {
        /// the related item's id
        id: Later<StrOrNum>,
    }
}

async fn related_delete(ctx: &mut ActionContext, p: RelatedDeleteParams) -> CkanResult<Value> {
    let id = required_id(str_or_num(&p.id)?)?;
    let item = by_id(ctx.db().await?, &id)
        .await?
        .ok_or_else(|| not_found(""))?;
    let datasets = linked_datasets(ctx.db().await?, &item.id).await?;
    let mut auth = p.to_params();
    auth.insert("__owner_id".into(), json!(item.owner_id));
    auth.insert("__dataset_id".into(), json!(datasets.first()));
    ctx.check_access("related_delete", &auth).await?;
    let conn = ctx.db().await?;
    sqlx::query("DELETE FROM related_dataset WHERE related_id = $1")
        .bind(&item.id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM related WHERE id = $1")
        .bind(&item.id)
        .execute(&mut *conn)
        .await?;
    Ok(Value::Null)
}

action_params! {
    /// Return a related item.
    ///
    /// :param id: the related item's id
    /// :rtype: dictionary
    pub struct RelatedShowParams {
        /// the related item's id
        id: Later<StrOrNum>,
    }
}

async fn related_show(ctx: &mut ActionContext, p: RelatedShowParams) -> CkanResult<Value> {
    let id = required_id(str_or_num(&p.id)?)?;
    ctx.check_access("related_show", &p.to_params()).await?;
    let item = by_id(ctx.db().await?, &id)
        .await?
        .ok_or_else(|| not_found(""))?;
    if !visible(ctx, &item.id, &mut HashMap::new()).await? {
        return Err(not_authorized(format!(
            "User {} not authorized to read related item {id}",
            ctx.user_name()
        )));
    }
    // CKAN 2.5 passes the row through its schema again: `created` is dropped, `view_count`
    // goes under `__extras`, empty optional fields are left out.
    let mut m = Map::new();
    m.insert("id".into(), json!(item.id));
    m.insert("title".into(), json!(item.title));
    if let Some(d) = &item.description {
        m.insert("description".into(), json!(d));
    }
    m.insert("type".into(), json!(item.rel_type));
    for (k, v) in [("image_url", &item.image_url), ("url", &item.url)] {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    }
    m.insert("owner_id".into(), json!(item.owner_id));
    m.insert("featured".into(), json!(item.featured));
    m.insert("__extras".into(), json!({"view_count": item.view_count}));
    Ok(Value::Object(m))
}

action_params! {
    /// Return the related items of a dataset (newest first), or, without a dataset, every
    /// related item, filtered by `type_filter` and `featured` and sorted by `sort`.
    ///
    /// :param id: optional: the dataset's id or name
    /// :param type_filter: optional
    /// :param sort: optional: `view_count_asc`, `view_count_desc`, `created_asc`, `created_desc`
    /// :param featured: optional: only featured items
    /// :rtype: list of dictionaries
    pub struct RelatedListParams {
        /// the dataset's id or name
        id: Later<StrOrNum>,
        /// only the items of this type (without a dataset)
        type_filter: Later<StrOrNum>,
        /// `view_count_asc`, `view_count_desc`, `created_asc` or `created_desc` (without a
        /// dataset)
        sort: Later<StrOrNum>,
        /// only featured items (without a dataset)
        featured: Later<Truthy>,
    }
}

async fn related_list(ctx: &mut ActionContext, p: RelatedListParams) -> CkanResult<Value> {
    ctx.check_access("related_list", &p.to_params()).await?;
    let dataset = match str_or_num(&p.id)?.filter(|s| !s.is_empty()) {
        Some(d) => ctx.package_row(&d).await?.map(|row| (d, row)),
        None => None,
    };
    let rows = match dataset {
        Some((sent, d)) => {
            // CKAN leaves a dataset's related items to anyone; only those of datasets the
            // caller may read are listed here.
            if !authz::can_read_package(ctx, &d).await? {
                return Err(not_authorized(format!(
                    "User {} not authorized to read package {sent}",
                    ctx.user_name()
                )));
            }
            sqlx::query(&format!(
                "SELECT {COLUMNS} FROM related WHERE id IN \
                 (SELECT related_id FROM related_dataset WHERE dataset_id = $1 AND status = 'active') \
                 ORDER BY created DESC, seq DESC"
            ))
            .bind(&d.id)
            .fetch_all(&mut *ctx.db().await?)
            .await?
        }
        None => {
            let order = match str_or_num(&p.sort)?.as_deref() {
                Some("view_count_asc") => "view_count ASC, seq",
                Some("view_count_desc") => "view_count DESC, seq",
                Some("created_asc") => "created ASC, seq",
                Some("created_desc") => "created DESC, seq DESC",
                _ => "seq",
            };
            let featured = p.featured.get()?.is_some_and(|f| f.0);
            let type_filter = str_or_num(&p.type_filter)?.unwrap_or_default();
            sqlx::query(&format!(
                "SELECT {COLUMNS} FROM related WHERE ($1 = '' OR type = $1) AND ($2 = 0 OR featured <> 0) ORDER BY {order}"
            ))
            .bind(&type_filter)
            .bind(i64::from(featured))
            .fetch_all(&mut *ctx.db().await?)
            .await?
        }
    };
    // Every item of a private dataset the caller may not read is left out.
    let mut readable = HashMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let item = from_row(r);
        if visible(ctx, &item.id, &mut readable).await? {
            out.push(dictize(&item));
        }
    }
    Ok(Value::Array(out))
}

/// Whether the caller may see an item: one linked to no dataset, or to a dataset the caller
/// may read (`readable` remembers the datasets already checked).
async fn visible(
    ctx: &mut ActionContext,
    related_id: &str,
    readable: &mut HashMap<String, bool>,
) -> CkanResult<bool> {
    if ctx.is_sysadmin() {
        return Ok(true);
    }
    let datasets = linked_datasets(ctx.db().await?, related_id).await?;
    if datasets.is_empty() {
        return Ok(true);
    }
    for d in &datasets {
        if authz::may_read_dataset(ctx, d, readable).await? {
            return Ok(true);
        }
    }
    Ok(false)
}

register_typed_actions! {
    write related_create(RelatedCreateParams) => related_create, auth = AuthCreate;
    write related_update(RelatedUpdateParams) => related_update, auth = AuthUpdate;
    write related_delete(RelatedDeleteParams) => related_delete, auth = AuthDelete;
    read related_show(RelatedShowParams) => related_show, auth = AuthPublic;
    read related_list(RelatedListParams) => related_list, auth = AuthPublic;
}

struct AuthPublic;
#[async_trait]
impl AuthFunction for AuthPublic {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, _: &mut ActionContext, _: &Params) -> CkanResult<()> {
        Ok(())
    }
}

struct AuthCreate;
#[async_trait]
impl AuthFunction for AuthCreate {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        if ctx.user_id().is_none() {
            return Err(not_authorized(
                "You must be logged in to add a related item",
            ));
        }
        if wants_featured(data) {
            return Err(not_authorized(
                "You must be a sysadmin to create a featured related item",
            ));
        }
        Ok(())
    }
}

struct AuthUpdate;
#[async_trait]
impl AuthFunction for AuthUpdate {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        let owner = data.get("__owner_id").and_then(Value::as_str);
        if ctx.user_id().is_none() || ctx.user_id() != owner {
            return Err(not_authorized("Only the owner can update a related item"));
        }
        let stored = data.get("__featured").and_then(Value::as_i64).unwrap_or(0);
        let asked = data.get("featured").filter(|v| !v.is_null()).map(|v| {
            v.as_i64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        });
        if asked.is_some_and(|a| a != Some(stored)) {
            return Err(not_authorized(
                "You must be a sysadmin to change a related item's featured field.",
            ));
        }
        Ok(())
    }
}

struct AuthDelete;
#[async_trait]
impl AuthFunction for AuthDelete {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        let denied = || not_authorized("Only the owner can delete a related item");
        if let Some(ds) = data.get("__dataset_id").and_then(Value::as_str) {
            let mut d = Map::new();
            d.insert("id".into(), json!(ds));
            return ctx
                .check_access("package_delete", &d)
                .await
                .map_err(|_| denied());
        }
        let owner = data.get("__owner_id").and_then(Value::as_str);
        if ctx.user_id().is_none() || ctx.user_id() != owner {
            return Err(denied());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_parameters_read_strings_and_numbers() {
        let read = |v: Value| str_or_num(&Later::new("id", Some(v))).unwrap();
        assert_eq!(read(json!("abc")), Some("abc".into()));
        assert_eq!(read(json!("")), Some(String::new()));
        assert_eq!(read(json!(12)), Some("12".into()));
        assert_eq!(read(json!(true)), None);
        assert_eq!(read(json!(["abc"])), None);
        assert_eq!(read(Value::Null), None);
        assert_eq!(
            required_id(read(json!(true)))
                .unwrap_err()
                .to_error_object(),
            json!({"__type": "Validation Error", "id": ["Missing value"]})
        );
    }

    #[test]
    fn urls_as_ckans_validator() {
        assert!(valid_url(""));
        assert!(valid_url("http://example.org/app"));
        assert!(valid_url("https://example.org:8080/x?y"));
        assert!(!valid_url("ftp://example.org/"));
        assert!(!valid_url("example.org"));
        assert!(!valid_url("http://exa mple.org/"));
    }
}
