#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use catalog_framework::prelude::*;

register_plugin!("example_custom_action");

action_params! {
    /// Return the number of active public datasets of each organization that has some, most
    /// first.
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
///
/// The framework decoded the parameters with CKAN's coercions and messages ("Invalid
/// integer", "Must be a natural number", every field's error at once) before this runs.
pub async fn dataset_count_by_organization(
    ctx: &mut ActionContext,
    params: CountParams,
) -> CkanResult<Value> {
    // As in CKAN, the action asks for its own check; the auth function below lets anonymous
    // callers through.
    ctx.check_access("dataset_count_by_organization", &params.__extras)
        .await?;

    // Other actions are called through the context: same caller, same transaction, and each
    // applies its own rules (package_search shows public datasets only).
    let mut search = Map::new();
    search.insert("rows".into(), json!(0));
    search.insert("facet.field".into(), json!(["organization"]));
    search.insert("facet.limit".into(), json!(-1));
    if let Some(org) = &params.organization {
        let mut show = Map::new();
        show.insert("id".into(), json!(org));
        show.insert("include_datasets".into(), json!(false));
        let found = ctx
            .call("organization_show", show)
            .await
            .map_err(|_| not_found("Organization"))?;
        search.insert(
            "fq".into(),
            json!(format!("organization:{}", found["name"])),
        );
    }
    let result = ctx.call("package_search", search).await?;

    // Each facet item: the organization's name, its title (`display_name`) and its count.
    let mut counts: Vec<Value> = result["search_facets"]["organization"]["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            json!({
                "name": item["name"],
                "title": item["display_name"],
                "package_count": item["count"],
            })
        })
        .collect();
    counts.sort_by(|a, b| {
        let count = |v: &Value| v["package_count"].as_u64().unwrap_or(0);
        count(b)
            .cmp(&count(a))
            .then_with(|| a["name"].as_str().cmp(&b["name"].as_str()))
    });
    if let Some(limit) = params.limit {
        counts.truncate(limit.0 as usize);
    }
    Ok(Value::Array(counts))
}

// Registered as a read (GET allowed, no write transaction) with its auth function; its help
// text is the params struct's doc comment.
register_typed_actions! {
    read dataset_count_by_organization(CountParams) => dataset_count_by_organization,
        auth = DatasetCountByOrganizationAuth;
}

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
