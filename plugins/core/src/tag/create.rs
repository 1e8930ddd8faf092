use catalog_framework::prelude::*;
use catalog_framework::store as q;

use crate::vocabulary::vocabulary_tag_dict;

action_params! {
    /// Add a tag to a vocabulary (sysadmins only). Free tags are created by dataset writes.
    ///
    /// :param name: the tag's name
    /// :param vocabulary_id: the vocabulary's id (not its name)
    /// :rtype: dictionary
    pub struct TagCreateParams {}
}

pub async fn tag_create(ctx: &mut ActionContext, p: TagCreateParams) -> CkanResult<Value> {
    let p = p.__extras;
    ctx.check_access("tag_create", &p).await?;
    let mut errs = validation();
    if p.get("id")
        .is_some_and(|v| !v.is_null() && v.as_str() != Some(""))
    {
        errs.push("id", "The input field id was not expected.");
    }
    let name = match p.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    if name.is_empty() {
        errs.push("name", "Missing value");
    } else {
        for e in catalog_plugin_schema::tag_errors(&name) {
            errs.push("name", e);
        }
    }
    let vocab_ref = match p.get("vocabulary_id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
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
