#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use catalog_framework::prelude::*;

register_plugin!("example_custom_action");

/// The query is written once, in portable SQL (`$N` placeholders, `true`/`false` literals):
/// the same text runs on SQLite and on PostgreSQL.
const COUNT_SQL: &str = "SELECT g.name, g.title, COUNT(p.id) AS package_count \
     FROM catalog_group g \
     LEFT JOIN package p \
       ON p.owner_org = g.id AND p.state = 'active' AND p.private = false \
     WHERE g.is_organization = true AND g.state = 'active'";

action_params! {
    /// Return the number of active public datasets of each active organization, most first.
    ///
    /// :param organization: only this organization (id or name); optional
    /// :type organization: string
    /// :param limit: at most this many organizations; optional
    /// :type limit: int
    /// :rtype: list of dictionaries (name, title, package_count)
    pub struct CountParams {
        /// only this organization (id or name)
        organization: Option<String>,
        /// at most this many organizations
        limit: Option<Natural>,
    }
}

/// `dataset_count_by_organization`: the number of active public datasets of each organization.
pub struct DatasetCountByOrganization;

#[async_trait]
impl TypedAction for DatasetCountByOrganization {
    type Params = CountParams;
    // Read-only: answers GET, and runs on a plain pooled connection (no write transaction).
    const READ: bool = true;

    // The framework decoded the parameters with CKAN's coercions and messages ("Invalid
    // integer", "Must be a natural number", every field's error at once) before this runs.
    async fn run(&self, ctx: &mut ActionContext, params: CountParams) -> CkanResult<Value> {
        let CountParams {
            organization,
            limit,
            __extras,
        } = params;
        let limit = limit.map(|n| n.0);

        // As in CKAN, the action asks for its own check; the auth function below lets
        // anonymous callers through.
        ctx.check_access("dataset_count_by_organization", &__extras)
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

// `Typed` adapts it to the registry; help_show returns the params struct's doc comment.
register_action!(
    "dataset_count_by_organization",
    Typed(DatasetCountByOrganization)
);

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
/// `catalogext.custom_action.contact`: a chained action (CKAN's `@chained_action`) that calls
/// the implementation it wraps and adds one key.
pub struct StatusShowWithContact;

#[async_trait]
impl ChainedAction for StatusShowWithContact {
    fn doc(&self) -> Option<&'static str> {
        Some("Return a dict describing the site, with the portal's contact address (portal_contact).")
    }

    async fn run(
        &self,
        next: &dyn Action,
        ctx: &mut ActionContext,
        params: Params,
    ) -> CkanResult<Value> {
        // The wrapped action checks access (status_show's auth function) and builds the dict.
        let mut status = next.run(ctx, params).await?;
        let contact = ctx
            .config()
            .catalogext
            .values
            .get("custom_action")
            .and_then(|v| v.get("contact"))
            .cloned()
            .unwrap_or(Value::Null);
        status["portal_contact"] = contact;
        Ok(status)
    }
}

register_chained_action!("status_show", StatusShowWithContact);
