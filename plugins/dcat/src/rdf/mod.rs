//! DCAT: the [`DcatProfile`] extension point, the `catalogext.dcat.*` settings, ckanext-dcat's
//! URI rules, the RDF graph profiles write into, and its serializations.
//!
//! A profile adds a dataset's (and the catalog's) triples to one shared graph; the endpoints
//! apply the chosen profiles in order (spec/dcat.md §1.3). Profiles that can also read a graph
//! back into a dataset dict implement [`DcatProfile::parse_dataset`].

pub mod cache;
pub mod graph;
pub mod serialize;

/// The RDF model (oxigraph's): profile crates use it from here, with no oxigraph dependency
/// of their own.
pub use oxigraph::model;

use std::collections::BTreeMap;
use std::sync::Arc;

use catalog_framework::prelude::*;
use oxigraph::model::NamedOrBlankNode;

pub use graph::RdfGraph;
pub use serialize::RdfFormat;

/// What a profile is given besides the graph: the configuration and the URI rules.
pub struct DcatContext<'a> {
    pub config: &'a Config,
    pub settings: &'a DcatSettings,
    /// The site's title as it stands now (`config_option_update` may change it at run time).
    pub site_title: String,
}

/// What the catalog node is built from (ckanext-dcat's `catalog_dict`).
#[derive(Debug, Clone, Default)]
pub struct CatalogInfo {
    /// `metadata_modified` of the most recently modified public dataset, if any.
    pub modified: Option<String>,
}

/// An RDF profile (`euro_dcat_ap_3`, `schemaorg`, …), named as ckanext-dcat names it and
/// registered with [`register_dcat_profile!`](crate::register_dcat_profile).
///
/// Profiles are this plugin's extension point: a profile crate depends on
/// `catalog-plugin-dcat` and imports its [`prelude`](crate::prelude).
pub trait DcatProfile: Send + Sync + 'static {
    /// Adds the triples of one dataset (a `package_show` dict) whose node is `node`.
    fn graph_from_dataset(
        &self,
        g: &mut RdfGraph,
        dataset: &Map<String, Value>,
        node: &NamedOrBlankNode,
        cx: &DcatContext<'_>,
    );

    /// Adds the catalog node's triples. The default adds none.
    fn graph_from_catalog(
        &self,
        _g: &mut RdfGraph,
        _catalog: &CatalogInfo,
        _node: &NamedOrBlankNode,
        _cx: &DcatContext<'_>,
    ) {
    }

    /// Reads the dataset at `node` back into `dataset` (the reverse mapping); profiles apply
    /// in order onto one dict. The default reads nothing.
    fn parse_dataset(
        &self,
        _g: &RdfGraph,
        _node: &NamedOrBlankNode,
        _dataset: &mut Map<String, Value>,
        _cx: &DcatContext<'_>,
    ) {
    }
}

catalog_framework::extension_point!(
    /// A [`DcatProfile`], submitted with [`register_dcat_profile!`](crate::register_dcat_profile).
    pub DcatProfileRegistration, Box<dyn DcatProfile>
);

/// Registers a [`DcatProfile`]: `register_dcat_profile!("my_profile", MyProfile);`, or with a
/// priority (higher wins) to replace a profile of the same name.
#[macro_export]
macro_rules! register_dcat_profile {
    ($name:expr, $value:expr) => {
        $crate::register_dcat_profile!($name, $value, priority = 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::__private::register_at!($crate::rdf::DcatProfileRegistration, $name, $value, $p);
    };
}

/// The DCAT plugin's state, built at start-up: the checked `catalogext.dcat.*` settings and
/// the profiles enabled plugins registered.
pub struct Dcat {
    pub settings: DcatSettings,
    profiles: BTreeMap<String, Arc<Box<dyn DcatProfile>>>,
    /// Serialized dataset documents (`/dataset/<id>.<ext>`), by content.
    pub render_cache: cache::RenderCache,
}

impl Dcat {
    /// Reads `catalogext.dcat.*` and resolves the registered profiles; settings that do not
    /// parse or name unregistered profiles are an error (the server refuses to start).
    pub fn load(config: &Config, registry: &Registry) -> anyhow::Result<Dcat> {
        let profiles = registry.resolve::<DcatProfileRegistration>("DCAT profile")?;
        let settings = DcatSettings::from_config(config).map_err(anyhow::Error::msg)?;
        let unknown: Vec<&String> = settings
            .profiles
            .iter()
            .filter(|p| !profiles.contains_key(p.as_str()))
            .collect();
        if !unknown.is_empty() {
            anyhow::bail!(
                "catalogext.dcat.rdf.profiles names unknown profiles {unknown:?} (registered: {:?})",
                profiles.keys().collect::<Vec<_>>()
            );
        }
        Ok(Dcat {
            settings,
            profiles,
            render_cache: Default::default(),
        })
    }

    /// The profile registered under `name`.
    pub fn profile(&self, name: &str) -> Option<&Arc<Box<dyn DcatProfile>>> {
        self.profiles.get(name)
    }

    /// The registered profiles' names, sorted.
    pub fn profile_names(&self) -> Vec<&str> {
        self.profiles.keys().map(String::as_str).collect()
    }

    /// What profiles see besides the graph.
    pub fn context<'a>(&'a self, config: &'a Config) -> DcatContext<'a> {
        DcatContext {
            config,
            settings: &self.settings,
            site_title: config.catalog.site_title.clone(),
        }
    }
}

/// The catalog's publisher: DCAT-AP requires one; ckanext-dcat emits none (spec/dcat.md §9).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CatalogPublisher {
    pub name: String,
    pub uri: Option<String>,
    pub email: Option<String>,
    pub url: Option<String>,
    pub type_uri: Option<String>,
}

/// `catalogext.dcat.*`, checked once at start-up.
#[derive(Debug, Clone, PartialEq)]
pub struct DcatSettings {
    /// `rdf.profiles`: profile names applied in order (default `euro_dcat_ap_3`).
    pub profiles: Vec<String>,
    pub base_uri: Option<String>,
    pub enable_rdf_endpoints: bool,
    pub enable_content_negotiation: bool,
    /// Path of the catalog endpoint, with `{_format}` (default `/catalog.{_format}`).
    pub catalog_endpoint: String,
    pub datasets_per_page: i64,
    /// `output_spatial_format`: `wkt`, `geojson` or both.
    pub output_spatial_formats: Vec<String>,
    /// `resource.inherit.license`.
    pub inherit_license: bool,
    /// `catalog_description`, else `catalog.site_description`, else a sentence naming the site.
    pub catalog_description: String,
    /// `catalog_publisher_*`, else the site's title and URL.
    pub catalog_publisher: CatalogPublisher,
    /// `catalog_language`: the catalog's `dct:language` (an IRI or a language code), else
    /// `catalog.locale_default`.
    pub catalog_language: String,
    /// The catalog URI (rule order of the seed).
    pub catalog_uri: String,
}

impl DcatSettings {
    /// Reads `catalogext.dcat` (nested tables or dotted keys) and checks it.
    pub fn from_config(config: &Config) -> Result<DcatSettings, String> {
        let root = config.catalogext.values.get("dcat");
        let get = |path: &str| -> Option<&Value> {
            let mut cur = root?;
            if let Some(v) = cur.get(path) {
                return Some(v);
            }
            for part in path.split('.') {
                cur = cur.get(part)?;
            }
            Some(cur)
        };
        let string = |path: &str| -> Option<String> {
            get(path).and_then(|v| match v {
                Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
        };
        let boolean = |path: &str, default: bool| -> Result<bool, String> {
            match get(path) {
                None | Some(Value::Null) => Ok(default),
                Some(Value::Bool(b)) => Ok(*b),
                Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                    "true" | "yes" | "on" | "1" => Ok(true),
                    "false" | "no" | "off" | "0" | "" => Ok(false),
                    _ => Err(format!(
                        "catalogext.dcat.{path} must be true or false, not {s:?}"
                    )),
                },
                Some(other) => Err(format!(
                    "catalogext.dcat.{path} must be true or false, not {other}"
                )),
            }
        };
        let words = |path: &str, default: &str| -> Vec<String> {
            match get(path) {
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(|v| v.as_str())
                    .map(str::to_string)
                    .collect(),
                Some(Value::String(s)) => s
                    .split([' ', ','])
                    .filter(|w| !w.is_empty())
                    .map(str::to_string)
                    .collect(),
                _ => default.split(' ').map(str::to_string).collect(),
            }
        };

        let catalog_endpoint =
            string("catalog_endpoint").unwrap_or_else(|| "/catalog.{_format}".into());
        if !catalog_endpoint.starts_with('/') || !catalog_endpoint.contains("{_format}") {
            return Err(format!(
                "catalogext.dcat.catalog_endpoint = {catalog_endpoint:?}: it must start with '/' and contain '{{_format}}'"
            ));
        }
        let datasets_per_page = match get("datasets_per_page") {
            None | Some(Value::Null) => 100,
            Some(v) => v
                .as_i64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                .filter(|n| *n >= 1)
                .ok_or_else(|| {
                    format!("catalogext.dcat.datasets_per_page must be a positive integer, not {v}")
                })?,
        };
        let output_spatial_formats = words("output_spatial_format", "wkt");
        if let Some(bad) = output_spatial_formats
            .iter()
            .find(|f| !matches!(f.as_str(), "wkt" | "geojson"))
        {
            return Err(format!(
                "catalogext.dcat.output_spatial_format: unknown format {bad:?} (wkt, geojson)"
            ));
        }
        let base_uri = string("base_uri");
        if let Some(b) = &base_uri {
            if oxigraph::model::NamedNode::new(b.clone()).is_err() {
                return Err(format!(
                    "catalogext.dcat.base_uri = {b:?} is not a valid URI"
                ));
            }
        }
        let site_url = config.catalog.site_url.trim().to_string();
        let catalog_uri = match (
            &base_uri,
            site_url.is_empty(),
            config.app_instance_uuid.as_deref(),
        ) {
            (Some(b), _, _) => b.clone(),
            (None, false, _) => site_url.clone(),
            (None, true, Some(uuid)) if !uuid.trim().is_empty() => {
                tracing::warn!("catalogext.dcat.base_uri and catalog.site_url are unset: the catalog URI is built from app_instance_uuid");
                format!("http://{}", uuid.trim().trim_matches(['{', '}']))
            }
            _ => {
                tracing::warn!("catalogext.dcat.base_uri, catalog.site_url and app_instance_uuid are unset: the catalog URI is random");
                format!("http://{}", uuid::Uuid::new_v4())
            }
        };
        let title = config.catalog.site_title.clone();
        let catalog_description = string("catalog_description")
            .or_else(|| {
                Some(config.catalog.site_description.trim().to_string()).filter(|s| !s.is_empty())
            })
            .unwrap_or_else(|| format!("The datasets of {title}."));
        let catalog_publisher = CatalogPublisher {
            name: string("catalog_publisher_name").unwrap_or_else(|| title.clone()),
            uri: string("catalog_publisher_uri"),
            email: string("catalog_publisher_email"),
            url: string("catalog_publisher_url")
                .or_else(|| Some(site_url.clone()).filter(|s| !s.is_empty())),
            type_uri: string("catalog_publisher_type"),
        };
        let mut profiles = words("rdf.profiles", "euro_dcat_ap_3");
        if profiles.is_empty() {
            profiles = vec!["euro_dcat_ap_3".into()];
        }
        let rows_max = config.catalog.search.rows_max.max(1);
        let datasets_per_page = if datasets_per_page > rows_max {
            tracing::warn!(datasets_per_page, rows_max, "catalogext.dcat.datasets_per_page is above catalog.search.rows_max: using rows_max");
            rows_max
        } else {
            datasets_per_page
        };
        Ok(DcatSettings {
            profiles,
            base_uri,
            enable_rdf_endpoints: boolean("enable_rdf_endpoints", true)?,
            enable_content_negotiation: boolean("enable_content_negotiation", false)?,
            catalog_endpoint,
            datasets_per_page,
            output_spatial_formats,
            inherit_license: boolean("resource.inherit.license", false)?,
            catalog_description,
            catalog_publisher,
            catalog_language: string("catalog_language").unwrap_or_else(|| {
                Some(config.catalog.locale_default.clone())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "en".into())
            }),
            catalog_uri,
        })
    }
}

impl DcatContext<'_> {
    /// The catalog URI, as configured (no trailing-slash trimming).
    pub fn catalog_uri(&self) -> &str {
        &self.settings.catalog_uri
    }

    fn base(&self) -> &str {
        self.settings.catalog_uri.trim_end_matches('/')
    }

    /// An IRI under the catalog URI: `catalog_iri("/group/x")` → `<catalog uri>/group/x`
    /// (one slash between them whatever the configured URI ends with).
    pub fn catalog_iri(&self, path: &str) -> String {
        format!("{}/{}", self.base(), path.trim_start_matches('/'))
    }

    /// Adds a dataset with each profile in order, onto one graph; returns the dataset's node
    /// (its [`dataset_uri`](Self::dataset_uri)). This is what the endpoints do.
    pub fn add_dataset(
        &self,
        g: &mut RdfGraph,
        dataset: &Map<String, Value>,
        profiles: &[&dyn DcatProfile],
    ) -> NamedOrBlankNode {
        let node: NamedOrBlankNode = graph::iri(&self.dataset_uri(dataset)).into();
        for p in profiles {
            p.graph_from_dataset(g, dataset, &node, self);
        }
        node
    }

    /// Reads the dataset at `node` back with each profile in order, onto one dict.
    pub fn read_dataset(
        &self,
        g: &RdfGraph,
        node: &NamedOrBlankNode,
        profiles: &[&dyn DcatProfile],
    ) -> Map<String, Value> {
        let mut d = Map::new();
        for p in profiles {
            p.parse_dataset(g, node, &mut d, self);
        }
        d
    }

    /// Dataset URI: the `uri` field, else an extra `uri` (not `"None"`), else
    /// catalog URI + `/dataset/` + id.
    pub fn dataset_uri(&self, d: &Map<String, Value>) -> String {
        if let Some(u) = d
            .get("uri")
            .and_then(Value::as_str)
            .filter(|u| !u.trim().is_empty() && graph::absolute_iri(u).is_some())
        {
            // A `uri` that is not an absolute IRI (`10.5281/zenodo.123`) would make the
            // document unparseable: such values fall through to the next rule.
            return u.trim().to_string();
        }
        let extra = d.get("extras").and_then(Value::as_array).and_then(|ex| {
            ex.iter()
                .find(|e| e.get("key").and_then(Value::as_str) == Some("uri"))
                .and_then(|e| e.get("value").and_then(Value::as_str))
                .filter(|v| {
                    !v.trim().is_empty() && *v != "None" && graph::absolute_iri(v).is_some()
                })
        });
        if let Some(u) = extra {
            return u.trim().to_string();
        }
        let id = d.get("id").and_then(Value::as_str).unwrap_or_default();
        format!("{}/dataset/{id}", self.base())
    }

    /// Resource URI: the `uri` field (not `"None"`), else
    /// catalog URI + `/dataset/` + package_id + `/resource/` + id.
    pub fn resource_uri(&self, r: &Map<String, Value>, dataset_id: &str) -> String {
        if let Some(u) = r
            .get("uri")
            .and_then(Value::as_str)
            .filter(|u| !u.trim().is_empty() && *u != "None" && graph::absolute_iri(u).is_some())
        {
            return u.trim().to_string();
        }
        let pkg = r
            .get("package_id")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .unwrap_or(dataset_id);
        let id = r.get("id").and_then(Value::as_str).unwrap_or_default();
        format!("{}/dataset/{pkg}/resource/{id}", self.base())
    }

    /// The organization's URI, the publisher fallback: catalog URI + `/organization/` + id.
    pub fn organization_uri(&self, d: &Map<String, Value>) -> Option<String> {
        let id = d.get("organization")?.get("id")?.as_str()?;
        Some(format!("{}/organization/{id}", self.base()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(dcat: Value) -> Config {
        let mut c = Config::default();
        c.catalogext.values.insert("dcat".into(), dcat);
        c
    }

    #[test]
    fn settings_defaults_and_checks() {
        let s = DcatSettings::from_config(&config(json!({}))).unwrap();
        assert_eq!(s.profiles, ["euro_dcat_ap_3"]);
        assert_eq!(s.datasets_per_page, 100);
        assert_eq!(s.catalog_endpoint, "/catalog.{_format}");
        assert!(s.enable_rdf_endpoints && !s.enable_content_negotiation);
        assert_eq!(s.catalog_uri, "http://127.0.0.1:5000");
        for bad in ["catalog.xml", "/catalog.xml", "catalog.{_format}"] {
            let e =
                DcatSettings::from_config(&config(json!({"catalog_endpoint": bad}))).unwrap_err();
            assert!(e.contains("must start with '/'"), "{e}");
        }
        let s = DcatSettings::from_config(&config(json!({
            "base_uri": "http://data.example.org/",
            "rdf": {"profiles": "euro_dcat_ap_2 schemaorg"},
            "datasets_per_page": "10",
            "enable_content_negotiation": "true",
        })))
        .unwrap();
        assert_eq!(s.profiles, ["euro_dcat_ap_2", "schemaorg"]);
        assert_eq!(s.datasets_per_page, 10);
        assert!(s.enable_content_negotiation);
        assert_eq!(s.catalog_uri, "http://data.example.org/");
        assert!(DcatSettings::from_config(&config(json!({"datasets_per_page": 0}))).is_err());
        assert!(DcatSettings::from_config(&config(json!({"base_uri": "not a uri"}))).is_err());
    }

    #[test]
    fn uri_rules() {
        let c = config(json!({"base_uri": "http://data.example.org/"}));
        let s = DcatSettings::from_config(&c).unwrap();
        let cx = DcatContext {
            config: &c,
            settings: &s,
            site_title: String::new(),
        };
        let d = json!({"id": "abc", "extras": [{"key": "uri", "value": "None"}]});
        assert_eq!(
            cx.dataset_uri(d.as_object().unwrap()),
            "http://data.example.org/dataset/abc"
        );
        let d = json!({"id": "abc", "extras": [{"key": "uri", "value": "http://x/1"}]});
        assert_eq!(cx.dataset_uri(d.as_object().unwrap()), "http://x/1");
        let d = json!({"id": "abc", "uri": "http://y/2", "extras": [{"key": "uri", "value": "http://x/1"}]});
        assert_eq!(cx.dataset_uri(d.as_object().unwrap()), "http://y/2");
        let r = json!({"id": "r1", "package_id": "abc"});
        assert_eq!(
            cx.resource_uri(r.as_object().unwrap(), "abc"),
            "http://data.example.org/dataset/abc/resource/r1"
        );
        let r = json!({"id": "r1", "uri": "None"});
        assert_eq!(
            cx.resource_uri(r.as_object().unwrap(), "abc"),
            "http://data.example.org/dataset/abc/resource/r1"
        );
    }
}
