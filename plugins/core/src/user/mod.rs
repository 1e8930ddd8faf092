//! Users (`user_*`) and what their actions share: the user dict with its dataset count, and the
//! checks of written fields.

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::store::{self as q, UserRow};
use catalog_framework::typed::ParamType;

use crate::dictize::{sorted, user_dict};

pub(crate) mod autocomplete;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod invite;
pub(crate) mod list;
pub(crate) mod show;
pub(crate) mod update;

/// [`dict_params!`](crate::dict_params) with the keys of a user dict.
macro_rules! user_dict_params {
    ($($t:tt)*) => {
        crate::dict_params! {
            [
                /// the name: 2 to 100 lowercase alphanumeric characters, `-` and `_`
                name: crate::InDict<String>,
                /// the e-mail address
                email: crate::InDict<String>,
                /// the password (at least 8 characters)
                password: crate::InDict<String>,
                /// the full name
                fullname: crate::InDict<String>,
                /// a description of the user
                about: crate::InDict<String>,
                /// the URL of the user's picture
                image_url: crate::InDict<String>,
            ]
            $($t)*
        }
    };
}
pub(crate) use user_dict_params;

/// Which of a user's datasets the caller sees: all not deleted (`all`), else the active public
/// ones.
fn created_scope(all: bool) -> q::CreatedScope {
    if all {
        q::CreatedScope::NotDeleted
    } else {
        q::CreatedScope::ActivePublic
    }
}

async fn created_count(ctx: &mut ActionContext, u: &UserRow, all: bool) -> CkanResult<i64> {
    Ok(q::created_package_count(ctx.db().await?, &u.id, created_scope(all)).await?)
}

/// The checked profile fields of a `user_create` or `user_update`.
struct Profile {
    email: Option<String>,
    fullname: Option<String>,
    about: Option<String>,
    image_url: Option<String>,
}

impl Profile {
    /// The columns the write stores: these fields with the user's name, password hash and
    /// sysadmin flag.
    fn write<'a>(
        &'a self,
        name: &'a str,
        password_hash: Option<&'a str>,
        sysadmin: bool,
    ) -> q::UserWrite<'a> {
        q::UserWrite {
            name,
            email: self.email.as_deref(),
            fullname: self.fullname.as_deref(),
            about: self.about.as_deref(),
            image_url: self.image_url.as_deref(),
            password_hash,
            sysadmin,
        }
    }
}

fn is_self_or_sysadmin(ctx: &ActionContext, u: &UserRow) -> bool {
    ctx.is_sysadmin() || ctx.user_id() == Some(u.id.as_str())
}

async fn show_user(ctx: &mut ActionContext, u: &UserRow) -> CkanResult<Map<String, Value>> {
    let private = is_self_or_sysadmin(ctx, u);
    let n = created_count(ctx, u, private).await?;
    Ok(sorted(user_dict(u, n, private)))
}

/// The password of a user write, as CKAN's `user_password_validator` (and, when `required`,
/// `user_password_not_empty`) check it: a value that is not a string (`null` included) is
/// "Passwords must be strings", an empty string is no change, a short one is refused.
fn check_password(p: &Params, errs: &mut ValidationBuilder, required: bool) -> Option<String> {
    let v = p.get("password");
    let mut password = None;
    match v {
        None => {}
        Some(Value::String(s)) if s.is_empty() => {}
        Some(Value::String(s)) => {
            if s.chars().count() < 8 {
                errs.push("password", "Your password must be 8 characters or longer");
            }
            password = Some(s.clone());
        }
        Some(_) => errs.push("password", "Passwords must be strings"),
    }
    if required && !catalog_framework::validators::python_truthy(v) {
        errs.push("password", "Missing value");
    }
    password
}

/// The `plugin_extras` of a sysadmin's user write (CKAN's `ignore_missing, json_object,
/// ignore_not_sysadmin`): the JSON object's text to store, or none to leave them as they are
/// (absent, null or `""`, or another caller's value, which is ignored).
fn check_plugin_extras(p: &Params, errs: &mut ValidationBuilder, sysadmin: bool) -> Option<String> {
    match p.get("plugin_extras") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(v @ Value::Object(_)) => sysadmin.then(|| v.to_string()),
        Some(_) => {
            errs.push("plugin_extras", "The value should be a valid JSON object");
            None
        }
    }
}

/// A user's stored `plugin_extras` as JSON (null when none), shown to sysadmins only.
fn stored_plugin_extras(u: &UserRow) -> Value {
    u.plugin_extras
        .as_deref()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null)
}

/// An e-mail address as the user schemas read it: a string, trimmed (blank is `Missing
/// value`; anything but a string, a number too, is `Must be a string`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EmailText(pub(crate) String);

impl ParamType for EmailText {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::String(s) => Ok(EmailText(s.trim().to_string())),
            _ => Err("Must be a string".into()),
        }
    }
    fn is_blank(v: &Value) -> bool {
        catalog_framework::typed::blank_trimmed(v)
    }
    fn schema() -> Value {
        json!({"type": "string", "format": "email"})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

async fn check_email(
    ctx: &mut ActionContext,
    email: Option<&Value>,
    errs: &mut ValidationBuilder,
    own_id: Option<&str>,
) -> CkanResult<Option<String>> {
    let email = match email {
        Some(v) if !EmailText::is_blank(v) => match EmailText::decode(v) {
            Ok(e) => e.0,
            Err(m) => {
                errs.push("email", m);
                return Ok(None);
            }
        },
        _ => {
            errs.push("email", "Missing value");
            return Ok(None);
        }
    };
    if !catalog_framework::validators::is_valid_email(&email) {
        errs.push("email", format!("Email {email} is not a valid format"));
        return Ok(Some(email));
    }
    let taken = q::users_where(
        ctx.db().await?,
        "LOWER(email) = LOWER($1) AND state = 'active'",
        std::slice::from_ref(&email),
    )
    .await?;
    if taken.iter().any(|u| Some(u.id.as_str()) != own_id) {
        errs.push(
            "email",
            format!(
                "The email address '{}' belongs to a registered user.",
                email.to_lowercase()
            ),
        );
    }
    Ok(Some(email))
}

fn check_about(p: &Params, errs: &mut ValidationBuilder) {
    if let Some(a) = p.get("about").and_then(Value::as_str) {
        if a.contains("http://") || a.contains("https://") {
            errs.push(
                "about",
                "Edit not allowed as it looks like spam. Please avoid links in your description.",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog_framework::typed::Later;

    #[test]
    fn an_email_is_a_trimmed_string() {
        let email = |v: Value| Later::<EmailText>::new("email", Some(v)).get();
        assert_eq!(email(json!(" a@b.c ")).unwrap().unwrap().0, "a@b.c");
        assert_eq!(email(json!("  ")).unwrap(), None);
        assert_eq!(email(json!(null)).unwrap(), None);
        assert_eq!(
            email(json!(5)).unwrap_err().body["email"],
            json!(["Must be a string"])
        );
    }
}
