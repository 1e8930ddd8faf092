#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use catalog_framework::prelude::*;

register_plugin!("example_custom_action");

/// `dataset_count_by_organization`: the number of active public datasets of each organization.
pub struct DatasetCountByOrganization;

/// The query is written once, in portable SQL (`$N` placeholders, `true`/`false` literals):
/// the same text runs on SQLite and on PostgreSQL.
const COUNT_SQL: &str = "SELECT g.name, g.title, COUNT(p.id) AS package_count \
     FROM catalog_group g \
     LEFT JOIN package p \
       ON p.owner_org = g.id AND p.state = 'active' AND p.private = false \
     WHERE g.is_organization = true AND g.state = 'active'";

#[async_trait]
impl Action for DatasetCountByOrganization {
    // Read-only: answers GET, and runs on a plain pooled connection (no write transaction).
    fn side_effect_free(&self) -> bool {
        true
    }

    fn doc(&self) -> &'static str {
        "Return the number of active public datasets of each active organization, most first.\n\n\
         :param organization: only this organization (id or name); optional\n\
         :type organization: string\n\
         :param limit: at most this many organizations; optional\n\
         :type limit: int\n\
         :rtype: list of dictionaries (name, title, package_count)"
    }

    async fn run(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Value> {
        // Parameters first, with CKAN's coercions and messages ("Invalid integer" …).
        let organization = opt_str(&params, "organization").filter(|s| !s.trim().is_empty());
        let limit = natural(&params, "limit")?;

        // As in CKAN, the action asks for its own check; the auth function below lets
        // anonymous callers through.
        ctx.check_access("dataset_count_by_organization", &params)
            .await?;

        let mut sql = COUNT_SQL.to_string();
        if organization.is_some() {
            sql.push_str(" AND (g.id = $1 OR g.name = $1)");
        }
        sql.push_str(" GROUP BY g.id, g.name, g.title ORDER BY package_count DESC, g.name");
        if limit.is_some() {
            sql.push_str(if organization.is_some() {
                " LIMIT $2"
            } else {
                " LIMIT $1"
            });
        }
        let mut query = sqlx::query(&sql);
        if let Some(org) = &organization {
            query = query.bind(org.clone());
        }
        if let Some(limit) = limit {
            query = query.bind(limit);
        }
        // `ctx.db()` is this call's connection (SQLite or PostgreSQL, through sqlx's `Any`).
        let rows = query.fetch_all(ctx.db().await?).await?;

        if organization.is_some() && rows.is_empty() {
            return Err(not_found("Organization"));
        }
        let counts = rows
            .iter()
            .map(|r| {
                json!({
                    "name": r.s("name"),
                    "title": r.os("title"),
                    "package_count": r.i("package_count"),
                })
            })
            .collect();
        Ok(Value::Array(counts))
    }
}

register_action!("dataset_count_by_organization", DatasetCountByOrganization);

/// Whoever may read the site may count its datasets, logged in or not.
pub struct DatasetCountByOrganizationAuth;

#[async_trait]
impl AuthFunction for DatasetCountByOrganizationAuth {
    // Without this, anonymous callers are refused before `check` runs.
    fn allow_anonymous(&self) -> bool {
        true
    }

    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        // Delegate to an existing rule, as CKAN's auth functions do.
        ctx.check_access("site_read", data).await
    }
}

// Without an auth function the action would be sysadmin-only.
register_auth!(
    "dataset_count_by_organization",
    DatasetCountByOrganizationAuth
);

/// `status_show` as the core plugin answers it, plus `portal_contact`, read from
/// `catalogext.custom_action.contact`.
///
/// The registry keeps only the winning registration of a name, so this override cannot call
/// the default it replaces: it builds the whole answer itself.
pub struct StatusShowWithContact;

#[async_trait]
impl Action for StatusShowWithContact {
    fn side_effect_free(&self) -> bool {
        true
    }

    fn doc(&self) -> &'static str {
        "Return a dict describing the site, with the portal's contact address (portal_contact)."
    }

    async fn run(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Value> {
        // The default auth function of `status_show` (anonymous allowed) still applies.
        ctx.check_access("status_show", &params).await?;
        let contact = ctx
            .config()
            .catalogext
            .values
            .get("custom_action")
            .and_then(|v| v.get("contact"))
            .cloned()
            .unwrap_or(Value::Null);
        let c = &ctx.config().catalog;
        let mut m = Map::new();
        m.insert("site_title".into(), json!(c.site_title));
        m.insert("site_description".into(), json!(c.site_description));
        m.insert("site_url".into(), json!(c.site_url));
        m.insert("error_emails_to".into(), json!(c.email_to));
        m.insert("locale_default".into(), json!(c.locale_default));
        m.insert("extensions".into(), json!(ctx.app.registry.plugins()));
        if !c.hide_version || ctx.is_sysadmin() {
            m.insert("ckan_version".into(), json!("2.11.0"));
            m.insert("catalog_version".into(), json!(env!("CARGO_PKG_VERSION")));
        }
        m.insert("portal_contact".into(), contact);
        Ok(Value::Object(m))
    }
}

// The core plugin registers `status_show` at priority 0; the higher priority wins. At 0 the
// two would clash and the server would refuse to start.
register_action!("status_show", StatusShowWithContact, priority = 10);
