//! DCAT for the catalog: the RDF endpoints of ckanext-dcat (`/dataset/{id}.{ext}`,
//! `/catalog.{ext}`, content negotiation), the `dcat_*` actions, and the profiles
//! `euro_dcat_ap`, `euro_dcat_ap_2`, `euro_dcat_ap_3` (the default) and `schemaorg`.
//! See docs/DCAT.md.
//!
//! Its extension point is the RDF profile: a profile crate depends on this one and uses only
//! [`prelude`] (see examples/dcat-profile and the book's DCAT profile chapter).
#![forbid(unsafe_code)]

pub mod negotiation;
pub mod profiles;
pub mod rdf;
pub mod render;
mod routes;

use catalog_framework::prelude::*;

/// What a DCAT profile crate needs, with `catalog_framework::prelude::*`:
/// `use catalog_plugin_dcat::prelude::*;`.
pub mod prelude {
    pub use crate::rdf::graph::{
        absolute_iri, as_subject, bnode, clean_iri, date_literal, field, field_list, field_objects,
        field_str, iri, iri_or_literal, is_http, iso_datetime, lang_lit, list_values, lit, mailto,
        n, term_value, typed, value_str, RdfGraph,
    };
    pub use crate::rdf::model::{BlankNode, Literal, NamedNode, NamedOrBlankNode, Term};
    pub use crate::rdf::serialize::{parse, serialize, RdfFormat};
    pub use crate::rdf::{
        CatalogInfo, Dcat, DcatContext, DcatProfile, DcatProfileRegistration, DcatSettings,
    };
    pub use crate::register_dcat_profile;
}

#[doc(hidden)]
pub mod __private {
    pub use catalog_framework::register_at;
}

/// The plugin: reads and checks `catalogext.dcat.*` against the registered profiles at
/// start-up and keeps the result ([`rdf::Dcat`]) for its routes and actions.
struct DcatPlugin;

#[async_trait]
impl Plugin for DcatPlugin {
    fn name(&self) -> &'static str {
        "dcat"
    }
    fn configure(&self, setup: &mut Setup<'_>) -> anyhow::Result<()> {
        let dcat = rdf::Dcat::load(setup.config, setup.registry)?;
        setup.insert(dcat);
        Ok(())
    }
    fn summary(&self, registry: &Registry) -> Vec<(&'static str, Value)> {
        let names = registry
            .resolve::<rdf::DcatProfileRegistration>("DCAT profile")
            .map(|m| m.into_keys().collect::<Vec<_>>())
            .unwrap_or_default();
        vec![("dcat_profiles", names.into())]
    }
}

register_plugin!(DcatPlugin);
register_routes!("dcat", routes::routes);

/// `dcat_dataset_show`: one dataset serialized (`id`, `_format` default `xml`, `profiles`).
struct DcatDatasetShow;

#[async_trait]
impl Action for DcatDatasetShow {
    fn side_effect_free(&self) -> bool {
        true
    }
    fn doc(&self) -> &'static str {
        "Return a dataset serialized as RDF.\n\n:param id: the dataset's id or name\n:param _format: rdf, xml (default), ttl, n3 or jsonld\n:param profiles: comma-separated profile names (default: catalogext.dcat.rdf.profiles)\n:rtype: string"
    }
    async fn run(&self, ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
        ctx.check_access("dcat_dataset_show", &p).await?;
        let id = req_str(&p, "id")?;
        let ext = opt_str(&p, "_format").unwrap_or_else(|| "xml".into());
        let profiles = opt_str(&p, "profiles");
        let (_, body) =
            render::dataset_document(ctx, &id, render::format_of(&ext), profiles.as_deref())
                .await?;
        Ok(Value::String(String::from_utf8_lossy(&body).into_owned()))
    }
}

/// `dcat_catalog_show`: a page of the catalog serialized.
struct DcatCatalogShow;

#[async_trait]
impl Action for DcatCatalogShow {
    fn side_effect_free(&self) -> bool {
        true
    }
    fn doc(&self) -> &'static str {
        "Return a page of the catalog serialized as RDF.\n\n:param _format: rdf, xml (default), ttl, n3 or jsonld\n:param page: page number (from 1)\n:param modified_since: ISO-8601 date\n:param q: search query\n:param fq: filter query\n:param profiles: comma-separated profile names\n:rtype: string"
    }
    async fn run(&self, ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
        ctx.check_access("dcat_catalog_show", &p).await?;
        let ext = opt_str(&p, "_format").unwrap_or_else(|| "xml".into());
        let format = render::format_of(&ext)?;
        let query = render::CatalogQuery::from_params(&p);
        let path = render::settings(ctx)?
            .catalog_endpoint
            .replace("{_format}", &ext);
        let body = render::catalog_document(ctx, &query, &path, format).await?;
        Ok(Value::String(String::from_utf8_lossy(&body).into_owned()))
    }
}

/// The DCAT actions are open to everyone; `package_show` / `package_search` decide what a
/// caller sees.
struct Anyone;

#[async_trait]
impl AuthFunction for Anyone {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, _ctx: &mut ActionContext, _data: &Params) -> CkanResult<()> {
        Ok(())
    }
}

register_action!("dcat_dataset_show", DcatDatasetShow);
register_action!("dcat_catalog_show", DcatCatalogShow);
register_auth!("dcat_dataset_show", Anyone);
register_auth!("dcat_catalog_show", Anyone);
