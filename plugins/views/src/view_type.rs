//! The `ResourceView` extension point: a view type (CKAN's `IResourceView` plugin) says what it
//! is as data ([`ViewInfo`]: titles, icon, flags and its config keys with their rules) and
//! whether a default view of it suits a resource ([`ResourceView::can_view`]).

use catalog_framework::prelude::*;

/// A config key's validation rule: CKAN's validator chains that view plugins use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConfigRule {
    /// `ignore_empty, unicode_safe`: a missing, null or `""` value drops the key; any other
    /// value is kept as text (`5` becomes `"5"`).
    OptionalText,
    /// `ignore_missing`: a missing or null value drops the key; any other value is kept as
    /// sent.
    Optional,
    /// `default(x), boolean_validator`: missing, null or `""` take the default; `true`,
    /// `"true"`, `"yes"`, `"t"`, `"y"`, `"1"` (any case) and `1` are true, anything else false.
    Bool(bool),
    /// `default(x), natural_number_validator`: missing, null or `""` take the default; else an
    /// integer ≥ 0 (`Invalid integer`, `Must be a natural number`).
    Natural(i64),
    /// `default(x)`: missing, null or `""` take the default; else kept as sent.
    Default(&'static str),
}

/// One key of a view type's config.
#[derive(Debug, Clone, Copy)]
pub struct ConfigKey {
    pub name: &'static str,
    pub rule: ConfigRule,
    /// A setting whose value replaces the rule's default (`catalog.datatables.ellipsis_length`;
    /// CKAN's `ckan.*` spelling is read too).
    pub default_from: Option<&'static str>,
}

impl ConfigKey {
    /// A key without a setting.
    pub const fn new(name: &'static str, rule: ConfigRule) -> ConfigKey {
        ConfigKey {
            name,
            rule,
            default_from: None,
        }
    }
}

/// What a view type is (CKAN's `IResourceView.info()`), as data.
#[derive(Debug, Clone, Copy)]
pub struct ViewInfo {
    /// The type's title (`Image`).
    pub title: &'static str,
    /// The icon's name (Font Awesome).
    pub icon: &'static str,
    /// The title of the type's default views.
    pub default_title: &'static str,
    /// Offered for every resource whatever its format (CKAN's `always_available`).
    pub always_available: bool,
    /// Its default views are made only for resources in the DataStore, and only when DataStore
    /// views are asked for (`create_datastore_views`).
    pub requires_datastore: bool,
    /// Accepts `filter_fields` and `filter_values` (CKAN's `filterable`).
    pub filterable: bool,
    /// Rendered in an iframe.
    pub iframed: bool,
    /// Its config keys: anything else in a create or update is refused (`__extras`).
    pub schema: &'static [ConfigKey],
}

/// Settings a view type's [`ResourceView::can_view`] consults.
#[derive(Debug, Clone)]
pub struct ViewContext {
    /// `catalog.site_url`, without a trailing slash.
    pub site_url: String,
    /// `catalog.preview.image_formats` (default `png jpeg jpg gif`), lower case.
    pub image_formats: Vec<String>,
    /// `catalog.preview.text_formats` (default `text/plain txt plain`), lower case.
    pub text_formats: Vec<String>,
    /// `catalog.preview.xml_formats` (default `xml rdf rdf+xml owl+xml atom rss`), lower case.
    pub xml_formats: Vec<String>,
    /// `catalog.preview.json_formats` (default `json`), lower case.
    pub json_formats: Vec<String>,
    /// `catalog.preview.jsonp_formats` (default `jsonp`), lower case.
    pub jsonp_formats: Vec<String>,
}

impl ViewContext {
    /// A resource's `format`, lower case (`""` when it has none).
    pub fn format(resource: &Map<String, Value>) -> String {
        resource
            .get("format")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_lowercase()
    }

    /// Whether the resource is served from this site: an upload, or a URL with the site's
    /// scheme, host and port (CKAN's `on_same_domain`).
    pub fn on_same_domain(&self, resource: &Map<String, Value>) -> bool {
        if resource.get("url_type").and_then(Value::as_str) == Some("upload") {
            return true;
        }
        let url = resource
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match (origin(&self.site_url), origin(url)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }
}

/// `(scheme, host, port)` of an absolute http(s) URL, lower case, the port defaulted.
fn origin(url: &str) -> Option<(String, String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let (host, port) = match host_port.strip_prefix('[') {
        // An IPv6 literal: `[::1]` or `[::1]:5000`.
        Some(v6) => {
            let (addr, rest) = v6.split_once(']')?;
            let port = match rest.strip_prefix(':') {
                Some(p) => p.parse().ok()?,
                None if rest.is_empty() => default_port,
                None => return None,
            };
            (format!("[{addr}]"), port)
        }
        None => match host_port.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()?),
            None => (host_port.to_string(), default_port),
        },
    };
    if host.is_empty() {
        return None;
    }
    Some((scheme, host.to_ascii_lowercase(), port))
}

/// A view type (`image_view`, `datatables_view`, …), named as CKAN names it and registered
/// with [`register_resource_view!`](crate::register_resource_view).
///
/// View types are this plugin's extension point: a crate that adds one depends on
/// `catalog-plugin-views` and imports its [`prelude`](crate::prelude).
pub trait ResourceView: Send + Sync + 'static {
    /// What the type is.
    fn info(&self) -> &'static ViewInfo;

    /// Whether a default view of this type suits the resource (CKAN's `can_view`; consulted
    /// only for default views: a view of any type can be created for any resource).
    /// `resource` is the stored resource dict, `package` its dataset's. The default: never.
    fn can_view(
        &self,
        _resource: &Map<String, Value>,
        _package: &Map<String, Value>,
        _cx: &ViewContext,
    ) -> bool {
        false
    }
}

catalog_framework::extension_point!(
    /// A [`ResourceView`], submitted with [`register_resource_view!`](crate::register_resource_view).
    pub ResourceViewRegistration, Box<dyn ResourceView>
);

/// Registers a [`ResourceView`]: `register_resource_view!("my_view", MyView);`, or with a
/// priority (higher wins) to replace a view type of the same name.
#[macro_export]
macro_rules! register_resource_view {
    ($name:expr, $value:expr) => {
        $crate::register_resource_view!($name, $value, priority = 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::__private::register_at!(
            $crate::view_type::ResourceViewRegistration,
            $name,
            $value,
            $p
        );
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert_eq!(
            origin("http://Example.org/a.txt"),
            Some(("http".into(), "example.org".into(), 80))
        );
        assert_eq!(
            origin("https://example.org:8443"),
            Some(("https".into(), "example.org".into(), 8443))
        );
        assert_eq!(
            origin("http://user@[::1]:5000/x"),
            Some(("http".into(), "[::1]".into(), 5000))
        );
        assert_eq!(
            origin("http://[::1]/x"),
            Some(("http".into(), "[::1]".into(), 80))
        );
        assert_eq!(origin("readme.txt"), None);
        assert_eq!(origin("ftp://example.org/a"), None);
    }
}
