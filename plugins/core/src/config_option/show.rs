use catalog_framework::prelude::*;
use catalog_framework::runtime::canonical_key;
use catalog_framework::typed::Later;

use super::editable;
use crate::shapes::{LaterExt, StrOrNum};

action_params! {
    /// Return the current value of a runtime-editable configuration key (sysadmins only).
    ///
    /// :param key: the key (`catalog.site_title`; CKAN's `ckan.site_title` too)
    /// :rtype: string
    pub struct ConfigOptionShowParams {
        /// the option's key (`catalog.site_title`, or CKAN's `ckan.site_title`); required,
        /// checked after the access check
        key: Later<StrOrNum>,
    }
}

pub(crate) async fn config_option_show(
    ctx: &mut ActionContext,
    p: ConfigOptionShowParams,
) -> CkanResult<Value> {
    ctx.check_access("config_option_show", &p.to_params())
        .await?;
    let key = p
        .key
        .value()
        .map(|k| k.0)
        .filter(|k| !k.is_empty())
        .ok_or_else(|| missing("key"))?;
    if !editable(&key) {
        return Err(validation_message(format!(
            "Configuration option '{key}' can not be shown"
        )));
    }
    Ok(json!(ctx.app.site_setting(&canonical_key(&key))))
}
