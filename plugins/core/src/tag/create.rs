use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use crate::shapes::{LaterExt, StrOrNum};
use crate::vocabulary::vocabulary_tag_dict;

action_params! {
    /// Add a tag to a vocabulary (sysadmins only). Free tags are created by dataset writes.
    ///
    /// :param name: the tag's name
    /// :param vocabulary_id: the vocabulary's id (not its name)
    /// :rtype: dictionary
    pub struct TagCreateParams {
        /// the tag's name (required; checked after the access check)
        name: Later<StrOrNum>,
        /// the vocabulary's id, not its name (required)
        vocabulary_id: Later<StrOrNum>,
    }
}

pub(crate) async fn tag_create(ctx: &mut ActionContext, p: TagCreateParams) -> CkanResult<Value> {
    ctx.check_access("tag_create", &p.to_params()).await?;
    let mut errs = validation();
    // An id is refused, not a parameter: it stays in `__extras`.
    if p.__extras
        .get("id")
        .is_some_and(|v| !v.is_null() && v.as_str() != Some(""))
    {
        errs.push("id", "The input field id was not expected.");
    }
    let name = p.name.value().map(|n| n.0).unwrap_or_default();
    if name.is_empty() {
        errs.push("name", "Missing value");
    } else {
        for e in catalog_framework::validators::tag_errors(&name) {
            errs.push("name", e);
        }
    }
    let vocab_ref = p.vocabulary_id.value().map(|v| v.0).unwrap_or_default();
    let mut vocabulary_id = None;
    if vocab_ref.is_empty() {
        errs.push("vocabulary_id", "Missing value");
    } else {
        // Only the id finds the vocabulary here, as in CKAN's `vocabulary_id_exists`.
        match q::vocabulary_by_ref(ctx.db().await?, &vocab_ref).await? {
            Some(v) if v.id == vocab_ref => vocabulary_id = Some(v.id),
            _ => errs.push("vocabulary_id", "Tag vocabulary was not found."),
        }
        if name.is_empty() {
            errs.push("vocabulary_id", "No tag name");
        } else if let Some(v) = &vocabulary_id {
            if !q::tags_by_name(ctx.db().await?, v, std::slice::from_ref(&name))
                .await?
                .is_empty()
            {
                errs.push(
                    "vocabulary_id",
                    format!("Tag {name} already belongs to vocabulary {vocab_ref}"),
                );
            }
        }
    }
    errs.finish()?;
    let vocabulary_id = vocabulary_id.ok_or_else(|| internal("vocabulary checked above"))?;
    let id = q::new_id();
    if !q::insert_tag(ctx.db().await?, &id, &name, &vocabulary_id).await? {
        return Err(validation()
            .field(
                "vocabulary_id",
                format!("Tag {name} already belongs to vocabulary {vocab_ref}"),
            )
            .build());
    }
    let mut dict = vocabulary_tag_dict(&id, &name, &vocabulary_id);
    dict["packages"] = json!([]);
    Ok(dict)
}
