use std::collections::HashSet;

use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::InDict;

use super::{
    add_tags, check_name, drop_tags_from_datasets, required_id, tag_names, vocabulary_dict,
    vocabulary_or_404,
};

action_params! {
    /// Update a tag vocabulary (sysadmins only): its name, and with `tags` its whole tag set
    /// (tags not listed are deleted, from the datasets too; new names are added).
    ///
    /// :param id: the vocabulary's id or name
    /// :param name: optional new name
    /// :param tags: optional list of tag dicts
    /// :rtype: dictionary
    pub struct VocabularyUpdateParams {
        /// the vocabulary's id or name
        id: InDict<String>,
        /// a new name
        name: InDict<String>,
        /// the whole tag set: a list of tag dicts (`{"name": …}`)
        tags: InDict<Value>,
    }
}

pub(crate) async fn vocabulary_update(
    ctx: &mut ActionContext,
    p: VocabularyUpdateParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    let r = required_id(p.get("id"))?;
    let mut v = vocabulary_or_404(ctx, &r).await?;
    ctx.check_access("vocabulary_update", &p).await?;
    let mut errs = validation();
    let new_name = match p.get("name") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(_) => {
            errs.push("name", "Must be a string");
            None
        }
    }
    .filter(|n| *n != v.name);
    if let Some(n) = &new_name {
        check_name(ctx, n, &mut errs).await?;
    }
    let tags = tag_names(ctx, &p, &mut errs).await?;
    errs.finish()?;
    if let Some(n) = new_name {
        if !q::rename_vocabulary(ctx.db().await?, &v.id, &n).await? {
            return Err(validation()
                .field("name", "That vocabulary name is already in use.")
                .build());
        }
        v.name = n;
    }
    if let Some(names) = tags {
        let keep: HashSet<&String> = names.iter().collect();
        let mut gone = HashSet::new();
        let mut datasets = Vec::new();
        for (tag_id, tag_name) in q::vocabulary_tags(ctx.db().await?, &v.id).await? {
            if !keep.contains(&tag_name) {
                datasets.extend(q::delete_tag(ctx.db().await?, &tag_id).await?);
                gone.insert(tag_id);
            }
        }
        datasets.sort_unstable();
        datasets.dedup();
        drop_tags_from_datasets(ctx, &datasets, &gone).await?;
        add_tags(ctx, &v.id, &names).await?;
    }
    vocabulary_dict(ctx, &v).await
}
