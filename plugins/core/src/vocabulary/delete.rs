use std::collections::HashSet;

use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use super::{drop_tags_from_datasets, vocabulary_or_404, DataId};

action_params! {
    /// Delete a tag vocabulary (sysadmins only) with its tags, which the datasets that
    /// carried them lose.
    ///
    /// :param id: the vocabulary's id or name
    pub struct VocabularyDeleteParams {
        /// the vocabulary's id or name
        id: Later<DataId>,
    }
}

pub(crate) async fn vocabulary_delete(
    ctx: &mut ActionContext,
    p: VocabularyDeleteParams,
) -> CkanResult<Value> {
    let r = p.id.require()?.0;
    let v = vocabulary_or_404(ctx, &r).await?;
    ctx.check_access("vocabulary_delete", &p.to_params())
        .await?;
    let tag_ids: HashSet<String> = q::vocabulary_tags(ctx.db().await?, &v.id)
        .await?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let datasets = q::delete_vocabulary(ctx.db().await?, &v.id).await?;
    drop_tags_from_datasets(ctx, &datasets, &tag_ids).await?;
    Ok(Value::Null)
}
