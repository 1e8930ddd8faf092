use catalog_framework::prelude::*;

use super::{required_id, vocabulary_dict, vocabulary_or_404};

action_params! {
    /// Return a tag vocabulary with its tags.
    ///
    /// :param id: the vocabulary's id or name
    /// :rtype: dictionary
    pub struct VocabularyShowParams {}
}

pub async fn vocabulary_show(
    ctx: &mut ActionContext,
    p: VocabularyShowParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    ctx.check_access("vocabulary_show", &p).await?;
    let r = required_id(&p)?;
    let v = vocabulary_or_404(ctx, &r).await?;
    vocabulary_dict(ctx, &v).await
}
