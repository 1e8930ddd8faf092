use std::collections::BTreeMap;

use catalog_framework::prelude::*;
use catalog_framework::runtime::{canonical_key, CONFIG_UPDATE_KEY};
use catalog_framework::store as q;
use catalog_framework::store::time::now_iso;

use super::editable;

action_params! {
    /// Change runtime-editable configuration values (sysadmins only): the parameters are the
    /// keys and their new values. Every node sees the change (within the background sync's two
    /// seconds; the node that answers, at once).
    ///
    /// :rtype: dictionary of the keys changed and their values
    pub struct ConfigOptionUpdateParams {}
}

/// CKAN's upload pseudo-keys: accepted, never stored or returned.
const UPLOAD_KEYS: [&str; 2] = ["logo_upload", "clear_logo_upload"];

pub(crate) async fn config_option_update(
    ctx: &mut ActionContext,
    p: ConfigOptionUpdateParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    ctx.check_access("config_option_update", &p).await?;
    let unsupported: Vec<&str> = p
        .keys()
        .map(String::as_str)
        .filter(|k| !editable(k))
        .collect();
    if !unsupported.is_empty() {
        return Err(validation_message(format!(
            "Configuration option(s) '{}' can not be updated",
            unsupported.join(" ")
        )));
    }
    // Keys in the spelling given, sorted (CKAN's answer is sorted); null drops a key.
    let mut given: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in &p {
        if UPLOAD_KEYS.contains(&k.as_str()) {
            continue;
        }
        let value = match v {
            Value::Null => continue,
            Value::String(s) => s.clone(),
            Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            other => other.to_string(),
        };
        given.insert(k.clone(), value);
    }
    if given.is_empty() {
        return Ok(json!({}));
    }
    let now = now_iso();
    let mut stored = BTreeMap::new();
    for (k, v) in &given {
        let key = canonical_key(k);
        q::set_system_info(ctx.db().await?, &key, v, &now).await?;
        stored.insert(key, v.clone());
    }
    q::set_system_info(ctx.db().await?, CONFIG_UPDATE_KEY, &q::new_id(), &now).await?;
    ctx.app.runtime.set_local(&stored);
    Ok(json!(given))
}
