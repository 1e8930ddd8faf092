//! DCAT for the catalog: the RDF endpoints of ckanext-dcat (`/dataset/{id}.{ext}`,
//! `/catalog.{ext}`, content negotiation), the `dcat_*` actions, and the profiles
//! `euro_dcat_ap`, `euro_dcat_ap_2`, `euro_dcat_ap_3` (the default) and `schemaorg`.
//! See docs/DCAT.md.
//!
//! Its extension point is the RDF profile: a profile crate depends on this one and uses only
//! [`prelude`] (see examples/dcat-profile and the book's DCAT profile chapter).
//!
//! # Where things live
//!
//! - `lib.rs`: the two actions (`dcat_dataset_show`, `dcat_catalog_show`) and [`prelude`].
//! - `routes.rs`: the HTTP side (the RDF endpoints, content negotiation on `/dataset/{id}` and
//!   `/`); `negotiation.rs`: the `Accept` parsing; `render.rs`: building and serializing the
//!   endpoints' graphs.
//! - `rdf/`: the extension point. `rdf/mod.rs` holds [`DcatProfile`](rdf::DcatProfile), the
//!   settings and the URI rules; `rdf/graph.rs` the graph and its value helpers;
//!   `rdf/serialize.rs` the serializations and parsing them back; `rdf/cache.rs` the cache of
//!   serialized dataset documents.
//! - `profiles/`: DCAT-AP in `profiles/dcat_ap/` (one file per part of the graph, listed in
//!   its `mod.rs`), `schemaorg.rs`, the reverse mapping `parse.rs` (graph → dataset dict), and
//!   what they share: `geo.rs` (geometry literals) and `vocab.rs` (controlled vocabularies).
#![forbid(unsafe_code)]

pub mod negotiation;
pub mod profiles;
pub mod rdf;
pub mod render;
mod routes;

use catalog_framework::prelude::*;
use catalog_framework::typed::{Later, Scalar};

/// What a DCAT profile crate needs, with `catalog_framework::prelude::*`:
/// `use catalog_plugin_dcat::prelude::*;`.
pub mod prelude {
    pub use crate::rdf::graph::{
        absolute_iri, as_subject, bnode, clean_iri, date_literal, field, field_list, field_objects,
        field_str, iri, iri_or_literal, is_http, iso_datetime, lang_lit, list_values, lit, mailto,
        n, term_value, typed, value_str, RdfGraph,
    };
    pub use crate::rdf::model::{BlankNode, Literal, NamedNode, NamedOrBlankNode, Term};
    pub use crate::rdf::serialize::{parse, parse_within, serialize, ParseLimits, RdfFormat};
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
catalog_framework::register_page!(
    "dcat-home",
    routes::DcatPage {
        path: "/",
        html: false
    }
);
catalog_framework::register_page!(
    "dcat-dataset",
    routes::DcatPage {
        path: "/dataset/{file}",
        html: false
    }
);
catalog_framework::register_page!(
    "dcat-dataset-series",
    routes::DcatPage {
        path: "/dataset_series/{file}",
        html: false
    }
);
catalog_framework::register_page!(
    "dcat-home-html",
    routes::DcatPage {
        path: "/",
        html: true
    }
);
catalog_framework::register_page!(
    "dcat-dataset-html",
    routes::DcatPage {
        path: "/dataset/{file}",
        html: true
    }
);
catalog_framework::register_page!(
    "dcat-dataset-series-html",
    routes::DcatPage {
        path: "/dataset_series/{file}",
        html: true
    }
);

/// A [`Scalar`] parameter's text (`None`: absent, null, a list or a dict).
fn scalar(p: &Later<Scalar>) -> CkanResult<Option<String>> {
    Ok(p.get()?.map(|s| s.0))
}

action_params! {
    #[doc = "Return a dataset serialized as RDF.\n\n:param id: the dataset's id or name\n\
             :param _format: rdf, xml (default), ttl, n3 or jsonld\n:param profiles: \
             comma-separated profile names (default: catalogext.dcat.rdf.profiles)\n:rtype: string"]
    pub struct DcatDatasetShowParams {
        /// the dataset's id or name (required; checked after the access check)
        id: Later<String>,
        /// `rdf`, `xml` (default), `ttl`, `n3` or `jsonld`
        format: Later<Scalar> as "_format",
        /// comma-separated profile names (default: catalogext.dcat.rdf.profiles)
        profiles: Later<Scalar>,
    }
}

/// `dcat_dataset_show`: one dataset serialized.
async fn dcat_dataset_show(ctx: &mut ActionContext, p: DcatDatasetShowParams) -> CkanResult<Value> {
    ctx.check_access("dcat_dataset_show", &p.to_params())
        .await?;
    let id = p.id.require()?;
    let ext = scalar(&p.format)?.unwrap_or_else(|| "xml".into());
    let profiles = scalar(&p.profiles)?;
    let (_, body) =
        render::dataset_document(ctx, &id, render::format_of(&ext), profiles.as_deref()).await?;
    Ok(Value::String(String::from_utf8_lossy(&body).into_owned()))
}

action_params! {
    #[doc = "Return a page of the catalog serialized as RDF.\n\n:param _format: rdf, xml \
             (default), ttl, n3 or jsonld\n:param page: page number (from 1)\n\
             :param modified_since: ISO-8601 date\n:param q: search query\n\
             :param fq: filter query\n:param profiles: comma-separated profile names\n\
             :rtype: string"]
    pub struct DcatCatalogShowParams {
        /// `rdf`, `xml` (default), `ttl`, `n3` or `jsonld`
        format: Later<Scalar> as "_format",
        /// the page number (from 1)
        page: Later<Scalar>,
        /// only the datasets modified since (an ISO-8601 date)
        modified_since: Later<Scalar>,
        /// a search query
        q: Later<Scalar>,
        /// a filter query
        fq: Later<Scalar>,
        /// comma-separated profile names (default: catalogext.dcat.rdf.profiles)
        profiles: Later<Scalar>,
    }
}

/// `dcat_catalog_show`: a page of the catalog serialized.
async fn dcat_catalog_show(ctx: &mut ActionContext, p: DcatCatalogShowParams) -> CkanResult<Value> {
    ctx.check_access("dcat_catalog_show", &p.to_params())
        .await?;
    let ext = scalar(&p.format)?.unwrap_or_else(|| "xml".into());
    let format = render::format_of(&ext)?;
    let (page, modified_since, q, fq, profiles) = (
        scalar(&p.page)?,
        scalar(&p.modified_since)?,
        scalar(&p.q)?,
        scalar(&p.fq)?,
        scalar(&p.profiles)?,
    );
    let query = render::CatalogQuery::from_params(|key| match key {
        "page" => page.clone(),
        "modified_since" => modified_since.clone(),
        "q" => q.clone(),
        "fq" => fq.clone(),
        "profiles" => profiles.clone(),
        _ => None,
    });
    let path = render::settings(ctx)?
        .catalog_endpoint
        .replace("{_format}", &ext);
    let body = render::catalog_document(ctx, &query, &path, format).await?;
    Ok(Value::String(String::from_utf8_lossy(&body).into_owned()))
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

register_typed_actions! {
    read dcat_dataset_show(DcatDatasetShowParams) => dcat_dataset_show, auth = Anyone;
    read dcat_catalog_show(DcatCatalogShowParams) => dcat_catalog_show, auth = Anyone;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_read_as_params_text() {
        let read = |v: Value| scalar(&Later::new("k", Some(v))).unwrap();
        assert_eq!(read(json!("ttl")), Some("ttl".into()));
        assert_eq!(read(json!("")), Some(String::new()));
        assert_eq!(read(json!(2)), Some("2".into()));
        assert_eq!(read(json!(true)), Some("True".into()));
        assert_eq!(read(json!(["ttl"])), None);
        assert_eq!(read(json!({"a": 1})), None);
        assert_eq!(read(Value::Null), None);
    }
}
