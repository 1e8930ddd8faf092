use catalog_framework::prelude::*;
use catalog_framework::runtime::RUNTIME_CONFIG_KEYS;

action_params! {
    /// Return the configuration keys that may be changed at run time (sysadmins only).
    ///
    /// :rtype: list of strings
    pub struct ConfigOptionListParams {}
}

pub(crate) async fn config_option_list(
    ctx: &mut ActionContext,
    p: ConfigOptionListParams,
) -> CkanResult<Value> {
    ctx.check_access("config_option_list", &p.__extras).await?;
    Ok(json!(RUNTIME_CONFIG_KEYS
        .iter()
        .map(|(k, _)| *k)
        .collect::<Vec<_>>()))
}
