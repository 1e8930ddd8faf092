use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::store::VocabularyRow;
use catalog_framework::typed::InDict;

use super::{add_tags, check_name, tag_names, vocabulary_dict};

action_params! {
    /// Create a tag vocabulary (sysadmins only).
    ///
    /// :param name: the vocabulary's name, 2 to 100 characters, unique
    /// :param tags: optional list of tag dicts (`{"name": …}`) to add to it
    /// :param id: a sysadmin may give the id (a UUID), as for datasets, so that a dump's
    ///   vocabulary ids survive a load
    /// :rtype: dictionary
    pub struct VocabularyCreateParams {
        /// the vocabulary's name, 2 to 100 characters, unique
        name: InDict<String>,
        /// a list of tag dicts (`{"name": …}`) to add to it
        tags: InDict<Value>,
        /// the vocabulary's id (a UUID; sysadmins only)
        id: InDict<String>,
    }
}

pub(crate) async fn vocabulary_create(
    ctx: &mut ActionContext,
    p: VocabularyCreateParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    ctx.check_access("vocabulary_create", &p).await?;
    let mut errs = validation();
    let id = match p
        .get("id")
        .filter(|v| !matches!(v, Value::Null) && v.as_str() != Some(""))
    {
        None => q::new_id(),
        Some(given) => match given
            .as_str()
            .and_then(catalog_framework::validators::uuid_parse)
        {
            Some(id) if ctx.is_sysadmin() => {
                if q::vocabulary_by_ref(ctx.db().await?, &id).await?.is_some() {
                    errs.push("id", "Id already exists");
                }
                id
            }
            _ => {
                errs.push("id", "The input field id was not expected.");
                q::new_id()
            }
        },
    };
    let name = match p.get("name") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => {
            errs.push("name", "Missing value");
            String::new()
        }
    };
    if !name.is_empty() {
        check_name(ctx, &name, &mut errs).await?;
    }
    let tags = tag_names(ctx, &p, &mut errs).await?;
    errs.finish()?;
    let row = VocabularyRow { id, name };
    if !q::insert_vocabulary(ctx.db().await?, &row).await? {
        // A writer that got there first, between the check and the insert.
        return Err(validation()
            .field("name", "That vocabulary name is already in use.")
            .build());
    }
    add_tags(ctx, &row.id, &tags.unwrap_or_default()).await?;
    vocabulary_dict(ctx, &row).await
}
