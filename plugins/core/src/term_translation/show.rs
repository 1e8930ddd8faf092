use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Raw;

action_params! {
    /// Return the translations of terms.
    ///
    /// :param terms: a term or a list of terms (an empty list: every term)
    /// :param lang_codes: optional: a language code or a list of them
    /// :rtype: list of dictionaries
    pub struct TermTranslationShowParams {
        /// a term or a list of terms (an empty list, null or false: every term); required,
        /// checked after the access check
        terms: Raw,
        /// a language code or a list of them; given, even empty or null, it filters
        lang_codes: Raw,
    }
}

/// A string or a list of strings; `None` for an absent, null, false or empty-list value.
fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match v {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Array(a)) if a.is_empty() => None,
        Some(Value::Array(a)) => Some(a.iter().map(text).collect()),
        Some(other) => Some(vec![text(other)]),
    }
}

pub(crate) async fn term_translation_show(
    ctx: &mut ActionContext,
    p: TermTranslationShowParams,
) -> CkanResult<Value> {
    ctx.check_access("term_translation_show", &p.to_params())
        .await?;
    if p.terms.get().is_none() {
        let mut errs = validation();
        errs.set("terms", json!("terms not in data"));
        return Err(errs.build());
    }
    let terms = strings(p.terms.get());
    // `lang_codes` present, even empty, filters (an empty list matches nothing).
    let lang_codes = p
        .lang_codes
        .get()
        .map(|v| strings(Some(v)).unwrap_or_default());
    let rows =
        q::term_translations(ctx.db().await?, terms.as_deref(), lang_codes.as_deref()).await?;
    Ok(Value::Array(
        rows.into_iter()
            .map(|(term, translation, lang)| {
                json!({"term": term, "term_translation": translation, "lang_code": lang})
            })
            .collect(),
    ))
}
