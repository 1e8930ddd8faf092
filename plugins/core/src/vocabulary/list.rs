use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::vocabulary_dict;

action_params! {
    /// Return every tag vocabulary with its tags, in creation order.
    ///
    /// :rtype: list of dictionaries
    pub struct VocabularyListParams {}
}

pub(crate) async fn vocabulary_list(
    ctx: &mut ActionContext,
    p: VocabularyListParams,
) -> CkanResult<Value> {
    ctx.check_access("vocabulary_list", &p.__extras).await?;
    let mut out = Vec::new();
    for v in q::vocabularies(ctx.db().await?).await? {
        out.push(vocabulary_dict(ctx, &v).await?);
    }
    Ok(Value::Array(out))
}
