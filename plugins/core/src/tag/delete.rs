use std::collections::HashSet;

use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use super::find_tag;
use crate::shapes::{LaterExt, Scalar};
use crate::vocabulary::{drop_tags_from_datasets, DataId};

action_params! {
    /// Delete a tag (sysadmins only): a vocabulary's, or a free one. The datasets that carry
    /// it lose it and are reindexed.
    ///
    /// :param id: the tag's id or name
    /// :param vocabulary_id: the vocabulary's id or name (for a vocabulary tag named by name)
    pub struct TagDeleteParams {
        /// the tag's id or name
        id: Later<DataId>,
        /// the vocabulary's id or name (for a vocabulary tag named by name)
        vocabulary_id: Later<Scalar>,
    }
}

pub(crate) async fn tag_delete(ctx: &mut ActionContext, p: TagDeleteParams) -> CkanResult<Value> {
    let r = p.id.require()?.0;
    let vocabulary_ref = p.vocabulary_id.value().map(|v| v.0);
    let (tag_id, _, _) = find_tag(ctx, &r, vocabulary_ref.as_deref())
        .await?
        .ok_or_else(|| not_found(format!("Could not find tag \"{r}\"")))?;
    ctx.check_access("tag_delete", &p.to_params()).await?;
    let datasets = q::delete_tag(ctx.db().await?, &tag_id).await?;
    drop_tags_from_datasets(ctx, &datasets, &HashSet::from([tag_id])).await?;
    Ok(Value::Null)
}
