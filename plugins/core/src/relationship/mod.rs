//! Dataset relationships (`package_relationship_*`, `package_relationships_list`): CKAN's eight
//! types in four forward/reverse pairs; only the forward type is stored, `X <reverse> Y` as
//! `Y <forward> X`. Spec: CKAN 2.12's answers in the wave-2 samples (270–335).

use catalog_framework::prelude::*;
use catalog_framework::store::{self as q, PackageRow, RelationshipRow};
use catalog_framework::typed::Raw;

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod list;
pub(crate) mod update;

/// Every type, in the order of CKAN's validation message.
const TYPES: [&str; 8] = [
    "depends_on",
    "dependency_of",
    "derives_from",
    "has_derivation",
    "links_to",
    "linked_from",
    "child_of",
    "parent_of",
];

/// The type that reads the same relationship from the other side.
fn reverse(t: &str) -> &'static str {
    let i = TYPES.iter().position(|x| *x == t).unwrap_or(0);
    TYPES[i ^ 1]
}

/// True for a type that is stored as it is.
fn is_forward(t: &str) -> bool {
    TYPES
        .iter()
        .position(|x| *x == t)
        .is_some_and(|i| i % 2 == 0)
}

fn bad_type(field: &str) -> CkanError {
    validation()
        .field(
            field,
            format!("Value must be one of ['{}']", TYPES.join("', '")),
        )
        .build()
}

/// A parameter as CKAN's Python prints it in a message (`repr`): `'x'`, or `None`.
fn py_repr(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "None".into(),
        Some(Value::String(s)) if s.contains('\'') && !s.contains('"') => format!("\"{s}\""),
        Some(Value::String(s)) => format!("'{}'", s.replace('\'', "\\'")),
        Some(other) => other.to_string(),
    }
}

/// A parameter as text (`""` when absent or null).
fn text(v: Option<&Value>) -> String {
    crate::lookup::text_of(v).unwrap_or_default()
}

/// What create, update and delete share: the three keys present (else one `Missing value`
/// each), then the subject and object datasets (404s), both locked for the write.
struct Triple {
    subject: PackageRow,
    object: PackageRow,
    rel_type: String,
}

/// A relationship's `subject`, `object` and `type` as sent (a null counts as given).
struct TripleArgs<'a> {
    subject: &'a Raw,
    object: &'a Raw,
    rel_type: &'a Raw,
}

async fn triple(ctx: &mut ActionContext, p: TripleArgs<'_>) -> CkanResult<Triple> {
    let mut errs = validation();
    for (key, v) in [
        ("object", p.object),
        ("subject", p.subject),
        ("type", p.rel_type),
    ] {
        if v.get().is_none() {
            errs.push(key, "Missing value");
        }
    }
    errs.finish()?;
    let subject = q::package_by_ref(ctx.db().await?, &text(p.subject.get()))
        .await?
        .ok_or_else(|| {
            not_found(format!(
                "Subject package {} was not found.",
                py_repr(p.subject.get())
            ))
        })?;
    let object = q::package_by_ref(ctx.db().await?, &text(p.object.get()))
        .await?
        .ok_or_else(|| {
            not_found(format!(
                "Object package {} was not found.",
                py_repr(p.object.get())
            ))
        })?;
    // Both documents are rewritten: lock both rows for update at once, in id order, so that
    // writers on the same pair wait for each other instead of deadlocking (a share lock taken
    // first and upgraded later deadlocks on PostgreSQL).
    let mut ids = [subject.id.clone(), object.id.clone()];
    ids.sort();
    for id in ids.iter().take(if ids[0] == ids[1] { 1 } else { 2 }) {
        ctx.package_for_update(id).await?;
    }
    Ok(Triple {
        subject,
        object,
        rel_type: text(p.rel_type.get()),
    })
}

/// Declares the params struct of a relationship write: `subject`, `object` and `type` (each
/// required, a null counting as given), and the action's own fields after them; `triple!(p)`
/// gives its [`TripleArgs`].
macro_rules! relationship_params {
    ($(#[doc = $doc:literal])* $name:ident { $($own:tt)* }) => {
        action_params! {
            $(#[doc = $doc])*
            pub struct $name {
                /// the subject dataset's id or name
                subject: catalog_framework::typed::Raw,
                /// the object dataset's id or name
                object: catalog_framework::typed::Raw,
                /// the relationship's type, read from the subject's side: `depends_on`,
                /// `dependency_of`, `derives_from`, `has_derivation`, `links_to`,
                /// `linked_from`, `child_of` or `parent_of`
                rel_type: catalog_framework::typed::Raw as "type",
                $($own)*
            }
        }
    };
}
pub(crate) use relationship_params;

/// The [`TripleArgs`] of a relationship write's params struct.
macro_rules! triple_args {
    ($p:expr) => {
        super::TripleArgs {
            subject: &$p.subject,
            object: &$p.object,
            rel_type: &$p.rel_type,
        }
    };
}
pub(crate) use triple_args;

/// The `comment` of a relationship write: absent clears it (`""`), null stores none.
fn comment(v: &Raw) -> Option<String> {
    match v.get() {
        None => Some(String::new()),
        Some(Value::Null) => None,
        Some(v) => Some(text(Some(v))),
    }
}

/// CKAN's `get_relationships`: the active relationships of `p` (with `other`) (of type `t`,
/// read from `p`'s side), in listing order.
async fn relationships_of(
    ctx: &mut ActionContext,
    p: &str,
    other: Option<&str>,
    t: Option<&str>,
) -> CkanResult<Vec<RelationshipRow>> {
    let rows = q::relationships_of(ctx.db().await?, p).await?;
    Ok(rows
        .into_iter()
        .filter(|r| {
            let as_subject = r.subject_package_id == p
                && other.is_none_or(|o| r.object_package_id == o)
                && t.is_none_or(|t| r.rel_type == t);
            let as_object = r.object_package_id == p
                && other.is_none_or(|o| r.subject_package_id == o)
                && t.is_none_or(|t| r.rel_type == reverse(t));
            as_subject || as_object
        })
        .collect())
}

/// `{"subject", "type", "object", "comment"}` read from `view`'s side (names, not ids): from
/// the stored object's side the type is reversed, so a self-relationship reads reversed.
/// Without a view, as stored.
async fn relationship_dict(
    ctx: &mut ActionContext,
    r: &RelationshipRow,
    view: Option<&str>,
) -> CkanResult<Value> {
    let name = |row: Option<PackageRow>, id: &str| row.map_or_else(|| id.to_string(), |p| p.name);
    let subject = ctx.package_row(&r.subject_package_id).await?;
    let subject = name(subject, &r.subject_package_id);
    let object = ctx.package_row(&r.object_package_id).await?;
    let object = name(object, &r.object_package_id);
    let (s, t, o) = if view == Some(r.object_package_id.as_str()) {
        (object, reverse(&r.rel_type), subject)
    } else {
        (subject, r.rel_type.as_str(), object)
    };
    Ok(json!({"subject": s, "type": t, "object": o, "comment": r.comment}))
}

/// Writes the relationship and refreshes both datasets' `relationships_as_*`.
async fn save(ctx: &mut ActionContext, r: &RelationshipRow) -> CkanResult<()> {
    q::save_relationship(ctx.db().await?, r).await?;
    refresh_dataset(ctx, &r.subject_package_id, false).await?;
    if r.object_package_id != r.subject_package_id {
        refresh_dataset(ctx, &r.object_package_id, false).await?;
    }
    Ok(())
}

/// Keeps a dataset's document's `relationships_as_subject` / `relationships_as_object` equal to
/// its active relationships (stored side; the shape of CKAN's `package_dictize`), so that
/// package_show reads them with the dataset. Called after every relationship write and every
/// dataset write (`after_dataset_write`: the document was just written without them, so a
/// dataset with no relationship needs nothing more).
pub(crate) async fn refresh_dataset(
    ctx: &mut ActionContext,
    package_id: &str,
    after_dataset_write: bool,
) -> CkanResult<()> {
    let rows = q::relationships_of(ctx.db().await?, package_id).await?;
    if rows.is_empty() && after_dataset_write {
        return Ok(());
    }
    let Some(data) = q::package_data(ctx.db().await?, package_id).await? else {
        return Ok(());
    };
    let mut doc: Map<String, Value> = serde_json::from_str(&data)?;
    let item = |r: &RelationshipRow| {
        json!({
            "__extras": {"object_package_id": r.object_package_id, "subject_package_id": r.subject_package_id},
            "comment": r.comment, "id": r.id, "type": r.rel_type,
        })
    };
    let as_subject: Vec<Value> = rows
        .iter()
        .filter(|r| r.subject_package_id == package_id)
        .map(item)
        .collect();
    let as_object: Vec<Value> = rows
        .iter()
        .filter(|r| r.object_package_id == package_id)
        .map(item)
        .collect();
    let empty = as_subject.is_empty() && as_object.is_empty();
    let had =
        doc.contains_key("relationships_as_subject") || doc.contains_key("relationships_as_object");
    if empty && !had {
        return Ok(());
    }
    if empty {
        doc.shift_remove("relationships_as_subject");
        doc.shift_remove("relationships_as_object");
    } else {
        doc.insert("relationships_as_subject".into(), Value::Array(as_subject));
        doc.insert("relationships_as_object".into(), Value::Array(as_object));
    }
    q::set_package_data(ctx.db().await?, package_id, &serde_json::to_string(&doc)?).await?;
    Ok(())
}

/// The auth data of a relationship write: the subject and object as given, and the stored
/// relationship's id for the messages that name it.
fn auth_data(t: &Triple, relationship_id: Option<&str>) -> Params {
    let mut m = Map::new();
    m.insert("subject".into(), json!(t.subject.id));
    m.insert("object".into(), json!(t.object.id));
    if let Some(id) = relationship_id {
        m.insert("relationship_id".into(), json!(id));
    }
    m
}

/// The update path, shared by create of an existing relationship: sets the comment if it
/// changed and answers from the stored subject's side.
async fn update_comment(
    ctx: &mut ActionContext,
    mut r: RelationshipRow,
    comment: Option<String>,
) -> CkanResult<Value> {
    if r.comment != comment {
        r.comment = comment;
        save(ctx, &r).await?;
    }
    let view = r.subject_package_id.clone();
    relationship_dict(ctx, &r, Some(&view)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_pair_up() {
        assert_eq!(reverse("depends_on"), "dependency_of");
        assert_eq!(reverse("parent_of"), "child_of");
        assert!(is_forward("links_to") && !is_forward("linked_from"));
        assert_eq!(py_repr(Some(&json!("a'b"))), "\"a'b\"");
        assert_eq!(py_repr(None), "None");
    }
}
