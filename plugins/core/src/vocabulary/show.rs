use catalog_framework::prelude::*;
use catalog_framework::typed::Later;

use super::{vocabulary_dict, vocabulary_or_404, DataId};

action_params! {
    /// Return a tag vocabulary with its tags.
    ///
    /// :param id: the vocabulary's id or name
    /// :rtype: dictionary
    pub struct VocabularyShowParams {
        /// the vocabulary's id or name (required; checked after the access check)
        id: Later<DataId>,
    }
}

pub(crate) async fn vocabulary_show(
    ctx: &mut ActionContext,
    p: VocabularyShowParams,
) -> CkanResult<Value> {
    ctx.check_access("vocabulary_show", &p.to_params()).await?;
    let r = p.id.require()?.0;
    let v = vocabulary_or_404(ctx, &r).await?;
    vocabulary_dict(ctx, &v).await
}
