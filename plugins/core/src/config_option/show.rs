use catalog_framework::prelude::*;

use super::editable;

action_params! {
    /// Return the current value of a runtime-editable configuration key (sysadmins only).
    ///
    /// :param key: the key (`catalog.site_title`; CKAN's `ckan.site_title` too)
    /// :rtype: string
    pub struct ConfigOptionShowParams {}
}

pub async fn config_option_show(
    ctx: &mut ActionContext,
    p: ConfigOptionShowParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    ctx.check_access("config_option_show", &p).await?;
    let key = match p.get("key") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err(missing("key")),
    };
    if !editable(&key) {
        return Err(validation_message(format!(
            "Configuration option '{key}' can not be shown"
        )));
    }
    Ok(json!(ctx.app.site_setting(&canonical_key(&key))))
}
