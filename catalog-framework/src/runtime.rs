//! Runtime-editable configuration (CKAN's `config_option_update`): the few site settings a
//! sysadmin may change while the service runs, kept in the store's `system_info` table over the
//! configured values. Every node holds them in memory; a write marks `catalog.config_update`,
//! and each node reloads when it sees that mark change (the background sync, every two seconds;
//! the node that wrote at once).

use std::collections::BTreeMap;
use std::sync::RwLock;

use sqlx::AnyConnection;

use crate::config::Config;

/// The keys `config_option_update` may change, in `config_option_list`'s order (CKAN's
/// `update_configuration_schema`, without `ckan.site_url`: the address is part of every URI the
/// service writes, so it stays a start-up setting), with their defaults. `logo_upload` and
/// `clear_logo_upload` are CKAN's upload pseudo-keys: accepted and never stored.
pub const RUNTIME_CONFIG_KEYS: &[(&str, &str)] = &[
    ("catalog.site_title", ""),
    ("catalog.site_logo", "/base/images/ckan-logo.png"),
    ("catalog.site_description", ""),
    ("catalog.site_about", ""),
    ("catalog.site_intro_text", ""),
    ("catalog.site_custom_css", ""),
    ("catalog.theme", "css/main"),
    ("logo_upload", ""),
    ("clear_logo_upload", ""),
];

/// The `system_info` key whose change tells every node to reload.
pub const CONFIG_UPDATE_KEY: &str = "catalog.config_update";

/// A key in our spelling: CKAN's `ckan.` prefix becomes `catalog.`.
pub fn canonical_key(key: &str) -> String {
    match key.strip_prefix("ckan.") {
        Some(rest) => format!("catalog.{rest}"),
        None => key.to_string(),
    }
}

/// The values set at run time, over the configured ones.
#[derive(Default)]
pub struct RuntimeConfig {
    /// `(the catalog.config_update mark they were read at, the values)`.
    values: RwLock<(Option<String>, BTreeMap<String, String>)>,
}

impl RuntimeConfig {
    /// The current value of a runtime-editable key (our spelling): set at run time, else
    /// configured, else the default. `None` for any other key.
    pub fn get(&self, config: &Config, key: &str) -> Option<String> {
        let default = RUNTIME_CONFIG_KEYS
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, d)| *d)?;
        if let Some(v) = self.values.read().expect("poisoned").1.get(key) {
            return Some(v.clone());
        }
        let c = &config.catalog;
        Some(match key {
            "catalog.site_title" => c.site_title.clone(),
            "catalog.site_description" => c.site_description.clone(),
            _ => c
                .other
                .get(key.trim_start_matches("catalog."))
                .map(|v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_else(|| default.to_string()),
        })
    }

    /// Sets values in this node's memory, after the writing action stored them; the mark is
    /// forgotten, so the next check reloads from the store (which also undoes them if the
    /// write did not commit).
    pub fn set_local(&self, values: &BTreeMap<String, String>) {
        let mut w = self.values.write().expect("poisoned");
        w.0 = None;
        w.1.extend(values.iter().map(|(k, v)| (k.clone(), v.clone())));
    }

    /// Reloads from the store when the update mark changed since the last load.
    pub async fn refresh(&self, conn: &mut AnyConnection) -> sqlx::Result<()> {
        let mark: Option<(String,)> =
            sqlx::query_as("SELECT value FROM system_info WHERE key = $1")
                .bind(CONFIG_UPDATE_KEY)
                .fetch_optional(&mut *conn)
                .await?;
        let mark = mark.map(|(m,)| m);
        if mark.is_some() && self.values.read().expect("poisoned").0 == mark {
            return Ok(());
        }
        let rows = crate::store::system_info(conn).await?;
        let values = rows
            .into_iter()
            .filter(|(k, _)| RUNTIME_CONFIG_KEYS.iter().any(|(r, _)| r == k))
            .collect();
        *self.values.write().expect("poisoned") = (mark, values);
        Ok(())
    }
}
