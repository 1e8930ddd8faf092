use catalog_framework::prelude::*;
use catalog_framework::search::{Query, SearchRequest};
use catalog_framework::store as q;
use catalog_framework::typed::{AsBool, Later};

use super::find_tag;
use crate::search;
use crate::shapes::{LaterExt, Scalar};
use crate::vocabulary::vocabulary_tag_dict;

action_params! {
    /// Return a tag.
    pub struct TagShowParams {
        /// the tag's id or name
        id: String,
        /// the vocabulary's id or name (for a vocabulary tag named by name)
        vocabulary_id: Later<Scalar>,
        /// include the (at most 1000) public datasets with the tag (default false)
        include_datasets: Later<AsBool>,
    }
}

pub(crate) async fn tag_show(ctx: &mut ActionContext, p: TagShowParams) -> CkanResult<Value> {
    ctx.check_access("tag_show", &p.to_params()).await?;
    let id = p.id;
    let vocabulary_ref = p.vocabulary_id.value().map(|v| v.0);
    let (tag_id, name, vocabulary_id) = find_tag(ctx, &id, vocabulary_ref.as_deref())
        .await?
        .ok_or_else(|| not_found(""))?;
    let vocabulary = if vocabulary_id.is_empty() {
        None
    } else {
        q::vocabulary_by_ref(ctx.db().await?, &vocabulary_id).await?
    };
    let mut m = match &vocabulary {
        Some(v) => match vocabulary_tag_dict(&tag_id, &name, &v.id) {
            Value::Object(m) => m,
            _ => Map::new(),
        },
        None => {
            let mut m = Map::new();
            m.insert("display_name".into(), json!(name));
            m.insert("id".into(), json!(tag_id));
            m.insert("name".into(), json!(name));
            m.insert("vocabulary_id".into(), Value::Null);
            m
        }
    };
    if p.include_datasets.or(false)? {
        let field = match &vocabulary {
            Some(v) => format!("vocab_{}", v.name),
            None => "tags".to_string(),
        };
        let pkgs = tag_datasets(ctx, &field, &name).await?;
        m.insert("packages".into(), Value::Array(pkgs));
    }
    Ok(Value::Object(m))
}

/// `tag_show`'s `packages`: up to 1000 public, active datasets with the tag, from the index;
/// no permission labels apply (CKAN's `tag_dictize`).
async fn tag_datasets(ctx: &mut ActionContext, field: &str, tag: &str) -> CkanResult<Vec<Value>> {
    let sort = search::parse_sort(&ctx.config().catalog.search.default_package_sort)?;
    let req = SearchRequest {
        query: Query::and(vec![
            Query::term("capacity", "public"),
            Query::term(field, tag),
        ]),
        filters: vec![Query::term("state", "active")],
        sort,
        start: 0,
        rows: 1000,
        facet_fields: Vec::new(),
        facet_limit: None,
        facet_mincount: 1,
    };
    let hits = ctx.search(&req).await?;
    hits.docs
        .iter()
        .map(|d| serde_json::from_str(d).map_err(|e| internal(format!("stored search dict: {e}"))))
        .collect()
}
