//! Runtime configuration (`config_option_*`): the site settings a sysadmin may change while the
//! service runs (`catalog_framework`'s `RUNTIME_CONFIG_KEYS`), stored in `system_info` and seen by
//! every node. Keys in our spelling (`catalog.site_title`) or CKAN's (`ckan.site_title`).
//! Spec: the wave-2 samples 435–453.

pub(crate) mod list;
pub(crate) mod show;
pub(crate) mod update;

use catalog_framework::runtime::{canonical_key, RUNTIME_CONFIG_KEYS};

/// True for a key `config_option_update` may change (either spelling).
fn editable(key: &str) -> bool {
    let key = canonical_key(key);
    RUNTIME_CONFIG_KEYS.iter().any(|(k, _)| *k == key)
}
