use catalog_framework::prelude::*;

use crate::licenses::LICENSES;

action_params! {
    /// Return the licenses available for datasets.
    pub struct LicenseListParams {}
}

pub(crate) async fn license_list(
    ctx: &mut ActionContext,
    p: LicenseListParams,
) -> CkanResult<Value> {
    ctx.check_access("license_list", &p.__extras).await?;
    Ok(Value::Array(LICENSES.iter().map(|l| l.to_json()).collect()))
}
