use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::{InDict, Later};

use crate::shapes::DictList;
use crate::task_status::text_param;

action_params! {
    /// Set the translation of a term into a language (sysadmins only).
    ///
    /// :param term: the term
    /// :param term_translation: its translation
    /// :param lang_code: the language code
    /// :rtype: dictionary
    pub struct TermTranslationUpdateParams {
        /// the term
        term: InDict<String>,
        /// its translation
        term_translation: InDict<String>,
        /// the language code
        lang_code: InDict<String>,
    }
}

pub(crate) async fn term_translation_update(
    ctx: &mut ActionContext,
    p: TermTranslationUpdateParams,
) -> CkanResult<Value> {
    update_one(ctx, &p.__extras).await
}

/// A term translation dict (validated whole, as CKAN's schema does) written.
async fn update_one(ctx: &mut ActionContext, p: &Params) -> CkanResult<Value> {
    ctx.check_access("term_translation_update", p).await?;
    let mut errs = validation();
    let mut required = |key: &str| {
        text_param(p.get(key)).unwrap_or_else(|| {
            errs.push(key, "Missing value");
            String::new()
        })
    };
    let lang_code = required("lang_code");
    let term = required("term");
    let translation = required("term_translation");
    errs.finish()?;
    q::save_term_translation(ctx.db().await?, &term, &translation, &lang_code).await?;
    Ok(json!({"lang_code": lang_code, "term": term, "term_translation": translation}))
}

action_params! {
    /// Set several term translations (sysadmins only); all or nothing.
    ///
    /// :param data: list of dicts with `term`, `term_translation` and `lang_code`
    /// :rtype: dictionary with `success`
    pub struct TermTranslationUpdateManyParams {
        /// a non-empty list of dicts with `term`, `term_translation` and `lang_code`
        data: Later<DictList>,
    }
}

pub(crate) async fn term_translation_update_many(
    ctx: &mut ActionContext,
    p: TermTranslationUpdateManyParams,
) -> CkanResult<Value> {
    let not_list = || {
        let mut errs = validation();
        errs.set("error", json!("Must be a list of dicts"));
        errs.build()
    };
    // Absent, empty or no list at all: one message.
    let items = match p.data.get() {
        Ok(Some(DictList(items))) if !items.is_empty() => items,
        _ => return Err(not_list()),
    };
    for item in &items {
        let Some(item) = item.as_object() else {
            return Err(not_list());
        };
        update_one(ctx, item).await?;
    }
    Ok(json!({"success": format!("{} rows updated", items.len())}))
}
