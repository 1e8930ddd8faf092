//! The model types every layer shares: an action's parameters, the caller, a plugin's
//! migration, the list of plugins to enable.

use serde_json::{Map, Value};

/// Parameters of an action: the decoded JSON object (or query string / form fields).
pub type Params = Map<String, Value>;

/// The authenticated caller.
#[derive(Debug, Clone)]
pub struct Principal {
    pub id: String,
    pub name: String,
    pub sysadmin: bool,
    pub state: String,
}

/// One schema migration of a plugin: applied once per database, in version order.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Orders the plugin's migrations and records which ran (`0001_init`, `0002_…`).
    pub version: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

/// A [`Migration`] from its files, its version written once: `migration!("migrations",
/// "0001_init")` is `migrations/sqlite/0001_init.sql` and `migrations/postgres/0001_init.sql`
/// (paths relative to the file that names them, as `include_str!`'s);
/// `migration!("migrations", "0002_follower", portable)` is one file for both stores,
/// `migrations/0002_follower.sql`.
#[macro_export]
macro_rules! migration {
    ($dir:literal, $version:literal) => {
        $crate::Migration {
            version: $version,
            sqlite: include_str!(concat!($dir, "/sqlite/", $version, ".sql")),
            postgres: include_str!(concat!($dir, "/postgres/", $version, ".sql")),
        }
    };
    ($dir:literal, $version:literal, portable) => {
        $crate::Migration {
            version: $version,
            sqlite: include_str!(concat!($dir, "/", $version, ".sql")),
            postgres: include_str!(concat!($dir, "/", $version, ".sql")),
        }
    };
}

/// `catalog.plugins`: a list (`["core", "dcat"]`) or, as CKAN writes it, one string of names
/// separated by spaces or commas (`"core dcat"`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PluginList(pub Vec<String>);

impl<'de> serde::Deserialize<'de> for PluginList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            One(String),
            Many(Vec<String>),
        }
        let names = match Raw::deserialize(d)? {
            Raw::One(s) => s
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            Raw::Many(v) => v,
        };
        Ok(PluginList(names))
    }
}

/// The top-level keys of CKAN's dataset schema: what the default schema keeps (anything else
/// is dropped), what a schema file's field never is, what the search index never mirrors.
pub const SCHEMA_FIELDS: &[&str] = &[
    "id",
    "name",
    "title",
    "author",
    "author_email",
    "maintainer",
    "maintainer_email",
    "license_id",
    "notes",
    "url",
    "version",
    "state",
    "type",
    "owner_org",
    "private",
    "tags",
    "tag_string",
    "extras",
    "resources",
    "groups",
    "plugin_data",
    "metadata_modified",
    "metadata_created",
    "creator_user_id",
];

/// Keys `package_show` computes; never stored from input.
pub const COMPUTED_KEYS: &[&str] = &[
    "num_resources",
    "num_tags",
    "organization",
    "isopen",
    "license_title",
    "license_url",
    "relationships_as_object",
    "relationships_as_subject",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_lists_parse_from_lists_and_ckan_strings() {
        let a: PluginList =
            serde_json::from_value(serde_json::json!("core  dcat,search-tantivy")).unwrap();
        assert_eq!(a.0, ["core", "dcat", "search-tantivy"]);
        let b: PluginList = serde_json::from_value(serde_json::json!(["core"])).unwrap();
        assert_eq!(b.0, ["core"]);
    }
}
