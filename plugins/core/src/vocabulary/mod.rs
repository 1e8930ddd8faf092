//! Tag vocabularies (`vocabulary_*`, and `tag_create` / `tag_delete` for their tags): a named
//! set of tags that datasets carry beside their free tags, searched as `vocab_<name>`.
//! Spec: CKAN 2.12's answers in the wave-2 samples (208–269).

use std::borrow::Cow;
use std::collections::HashSet;

use catalog_framework::error::integrity;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::store::VocabularyRow;
use catalog_framework::typed::{Later, ParamType};

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod list;
pub(crate) mod show;
pub(crate) mod update;

/// A tag of a vocabulary as CKAN's `vocabulary_dictize` and `tag_show` give it.
pub(crate) fn vocabulary_tag_dict(id: &str, name: &str, vocabulary_id: &str) -> Value {
    json!({"id": id, "name": name, "vocabulary_id": vocabulary_id, "display_name": name})
}

/// `{"id", "name", "tags"}`, the tags in creation order.
pub(crate) async fn vocabulary_dict(
    ctx: &mut ActionContext,
    v: &VocabularyRow,
) -> CkanResult<Value> {
    let tags: Vec<Value> = q::vocabulary_tags(ctx.db().await?, &v.id)
        .await?
        .iter()
        .map(|(id, name)| vocabulary_tag_dict(id, name, &v.id))
        .collect();
    Ok(json!({"id": v.id, "name": v.name, "tags": tags}))
}

/// The `id` parameter as CKAN's `vocabulary_show` / `_update` / `_delete` and `tag_delete`
/// read it: a string, a number's digits or `True`; absent or falsy (`""`, `false`, `[]`, `{}`)
/// is `{"id": "id not in data"}` (a string, not a list), a non-empty list or dict `Must be a
/// string`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataId(pub(crate) String);

impl ParamType for DataId {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::String(s) => Ok(DataId(s.clone())),
            Value::Number(n) => Ok(DataId(n.to_string())),
            Value::Bool(true) => Ok(DataId("True".into())),
            _ => Err("Must be a string".into()),
        }
    }
    fn is_blank(v: &Value) -> bool {
        match v {
            Value::Null | Value::Bool(false) => true,
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            _ => false,
        }
    }
    fn schema() -> Value {
        json!({"type": ["string", "number"]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
    fn refusal(key: &str, message: Cow<'static, str>) -> CkanError {
        let mut errs = validation();
        if message == "Missing value" {
            errs.set(key, json!(format!("{key} not in data")));
        } else {
            errs.push(key, message);
        }
        errs.build()
    }
}

/// [`DataId`] on the `id` of a dict (`vocabulary_update`'s).
pub(crate) fn required_id(id: Option<&Value>) -> CkanResult<String> {
    Ok(Later::<DataId>::new("id", id.cloned()).require()?.0)
}

/// A vocabulary by id or name, or 404 `Could not find vocabulary "<ref>"`.
pub(crate) async fn vocabulary_or_404(
    ctx: &mut ActionContext,
    r: &str,
) -> CkanResult<VocabularyRow> {
    q::vocabulary_by_ref(ctx.db().await?, r)
        .await?
        .ok_or_else(|| not_found(format!("Could not find vocabulary \"{r}\"")))
}

/// The vocabulary name rules: 2 to 100 characters, not used by another vocabulary.
pub(crate) async fn check_name(
    ctx: &mut ActionContext,
    name: &str,
    errs: &mut ValidationBuilder,
) -> CkanResult<()> {
    let n = name.chars().count();
    if n < 2 {
        errs.push("name", "Name must be at least 2 characters long");
    }
    if n > 100 {
        errs.push("name", "Name must be a maximum of 100 characters long");
    }
    if q::vocabulary_by_ref(ctx.db().await?, name)
        .await?
        .is_some_and(|v| v.name == name)
    {
        errs.push("name", "That vocabulary name is already in use.");
    }
    Ok(())
}

/// The `tags` of a vocabulary write: names in request order, each once. CKAN's tag errors
/// are flattened into one list under `tags`: the name errors of an item joined with ", ", or
/// the item's other errors as a dict. A `tags` that is not a list is CKAN's Integrity Error.
pub(crate) async fn tag_names(
    ctx: &mut ActionContext,
    p: &Params,
    errs: &mut ValidationBuilder,
) -> CkanResult<Option<Vec<String>>> {
    let items = match p.get("tags") {
        None => return Ok(None),
        Some(Value::Array(items)) => items,
        Some(other) => {
            let class = match other {
                Value::Null => "NoneType",
                Value::String(_) => "str",
                Value::Bool(_) => "bool",
                Value::Number(n) if n.is_f64() => "float",
                Value::Number(_) => "int",
                _ => "dict",
            };
            return Err(integrity(
                format!(
                    "Only lists of dicts can be placed against subschema ('tags',), not <class '{class}'>"
                ),
                Value::Object(p.clone()),
            ));
        }
    };
    let mut names = Vec::new();
    let mut seen = HashSet::new();
    let mut flat: Vec<Value> = Vec::new();
    let mut known_vocabularies: std::collections::HashMap<String, bool> = Default::default();
    for item in items {
        let Some(o) = item.as_object() else {
            return Err(integrity(
                "Only lists of dicts can be placed against subschema ('tags',)",
                Value::Object(p.clone()),
            ));
        };
        let name = match o.get("name") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        let name_errs = if name.is_empty() {
            vec!["Missing value".to_string()]
        } else {
            catalog_framework::validators::tag_errors(&name)
        };
        if !name_errs.is_empty() {
            flat.push(json!(name_errs.join(", ")));
            continue;
        }
        if let Some(v) = o
            .get("vocabulary_id")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
        {
            let known = match known_vocabularies.get(v) {
                Some(k) => *k,
                None => {
                    let k = q::vocabulary_by_ref(ctx.db().await?, v)
                        .await?
                        .is_some_and(|row| row.id == v);
                    known_vocabularies.insert(v.to_string(), k);
                    k
                }
            };
            if !known {
                flat.push(json!({"vocabulary_id": ["Tag vocabulary was not found."]}));
                continue;
            }
        }
        if seen.insert(name.clone()) {
            names.push(name);
        }
    }
    if !flat.is_empty() {
        errs.set("tags", Value::Array(flat));
    }
    Ok(Some(names))
}

/// Adds these tags to a vocabulary, in order, skipping those it has.
pub(crate) async fn add_tags(
    ctx: &mut ActionContext,
    vocabulary_id: &str,
    names: &[String],
) -> CkanResult<()> {
    for name in names {
        q::insert_tag(ctx.db().await?, &q::new_id(), name, vocabulary_id).await?;
    }
    Ok(())
}

/// Takes deleted tags out of the documents of the datasets that carried them (CKAN's
/// package_show reads tags from their table, so a deleted tag disappears from the dataset
/// without a change of `metadata_modified`); the outbox reindexes them.
pub(crate) async fn drop_tags_from_datasets(
    ctx: &mut ActionContext,
    dataset_ids: &[String],
    tag_ids: &HashSet<String>,
) -> CkanResult<()> {
    for id in dataset_ids {
        let Some(data) = q::package_data(ctx.db().await?, id).await? else {
            continue;
        };
        let mut doc: Value = serde_json::from_str(&data)?;
        if let Some(tags) = doc.get_mut("tags").and_then(Value::as_array_mut) {
            tags.retain(|t| !t["id"].as_str().is_some_and(|i| tag_ids.contains(i)));
        }
        q::set_package_data(ctx.db().await?, id, &doc.to_string()).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_in_data_follows_ckan() {
        let id = |v: Option<Value>| Later::<DataId>::new("id", v).require();
        assert_eq!(id(Some(json!("v"))).unwrap().0, "v");
        assert_eq!(id(Some(json!(" "))).unwrap().0, " ");
        assert_eq!(id(Some(json!(0))).unwrap().0, "0");
        assert_eq!(id(Some(json!(true))).unwrap().0, "True");
        for v in [
            None,
            Some(json!(null)),
            Some(json!("")),
            Some(json!(false)),
            Some(json!([])),
            Some(json!({})),
        ] {
            assert_eq!(
                id(v).unwrap_err().to_error_object(),
                json!({"__type": "Validation Error", "id": "id not in data"})
            );
        }
        for v in [json!([1]), json!({"a": 1})] {
            assert_eq!(
                id(Some(v)).unwrap_err().to_error_object(),
                json!({"__type": "Validation Error", "id": ["Must be a string"]})
            );
        }
        assert_eq!(required_id(Some(&json!("w"))).unwrap(), "w");
    }
}
