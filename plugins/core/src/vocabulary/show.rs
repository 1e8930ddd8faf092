use catalog_framework::prelude::*;

use super::{required_id, vocabulary_dict, vocabulary_or_404};

action_params! {
    /// Return a tag vocabulary with its tags.
    ///
    /// :param id: the vocabulary's id or name
    /// :rtype: dictionary
    pub struct VocabularyShowParams {
        /// the vocabulary's id or name (required; checked after the access check)
        id: Option<Value>,
    }
}

pub(crate) async fn vocabulary_show(
    ctx: &mut ActionContext,
    p: VocabularyShowParams,
) -> CkanResult<Value> {
    ctx.check_access("vocabulary_show", &p.to_params()).await?;
    let r = required_id(p.id.as_ref())?;
    let v = vocabulary_or_404(ctx, &r).await?;
    vocabulary_dict(ctx, &v).await
}
