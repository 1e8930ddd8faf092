//! `user_invite`: a pending user, a membership, and a mail with a password-reset link.

use catalog_framework::mail::Mail;
use catalog_framework::params::text;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::store::time::now_iso;
use catalog_framework::typed::Later;

use super::{check_email, EmailText};
use crate::dictize::{sorted, user_dict};
use crate::ids::new_id;

action_params! {
    /// Invite a new user: create a pending user named after the e-mail address, make it a
    /// member of a group or organization with a role, and mail it a link to set its password.
    ///
    /// You must be allowed to add members to the group. Without a reachable SMTP server
    /// (`catalog.smtp.server`) the mail fails and no user is created.
    ///
    /// :param email: the e-mail address of the user to invite
    /// :param group_id: the id or name of the group or organization
    /// :param role: `member`, `editor` or `admin`
    /// :returns: the new user
    pub struct UserInviteParams {
        /// the e-mail address of the user to invite (required, as are the two others: checked
        /// after the access check, each `Missing value` at once)
        email: Later<EmailText>,
        /// the id or name of the group or organization
        group_id: Later<String>,
        /// `member`, `editor` or `admin`
        role: Later<String>,
    }
}

const ROLES: &[(&str, &str)] = &[
    ("admin", "Admin"),
    ("editor", "Editor"),
    ("member", "Member"),
];

/// CKAN's `user_invite`: auth (`membership` on the group), the invite schema (`email`,
/// `group_id`, `role`: `Missing value` each), the group (404), the role, then the mail, then
/// the writes.
///
/// The mail goes first, with every check made and the user's id, name and reset key chosen,
/// and the writes after it: the call holds no transaction (nor SQLite's write lock, nor even a
/// pooled connection) while the SMTP server answers, and a mail that fails leaves nothing
/// behind, as CKAN's answer says ("the user was not created"). CKAN creates the user first and
/// deletes it (to state `deleted`) when the mail fails; here no row is written at all. The
/// writes can still fail after the mail in a race (the address registered meanwhile): the
/// call then answers that error and the invitee's link leads nowhere.
pub(crate) async fn user_invite(ctx: &mut ActionContext, p: UserInviteParams) -> CkanResult<Value> {
    ctx.check_access("user_invite", &p.to_params()).await?;
    let mut errs = ValidationBuilder::default();
    let email = check_email(ctx, p.email.raw(), &mut errs, None).await?;
    for (k, v) in [("group_id", &p.group_id), ("role", &p.role)] {
        // Given as CKAN's schema sees it: a non-blank scalar (a boolean too, which the
        // decoding below then refuses).
        if text(v.raw()).is_none_or(|s| s.trim().is_empty()) {
            errs.push(k, "Missing value");
        }
    }
    errs.finish()?;
    let email = email.ok_or_else(|| missing("email"))?;
    let group_ref = p.group_id.require()?;
    let role = p.role.require()?;
    let group = ctx
        .group_row(&group_ref)
        .await?
        .filter(|g| g.state != "deleted")
        .ok_or_else(|| not_found(""))?;
    let Some((_, role_name)) = ROLES.iter().find(|(r, _)| *r == role) else {
        return Err(validation().field("role", "role does not exist.").build());
    };
    let name = free_name(ctx, &email).await?;
    let id = new_id();
    let reset_key = hex::encode(rand_bytes());

    let config = ctx.config().clone();
    let link = format!("{}/user/reset/{id}?key={reset_key}", config.site_url());
    let kind = if group.is_organization {
        "organization"
    } else {
        "group"
    };
    let site_title = ctx.app.site_title();
    let body = invite_body(
        &name,
        &site_title,
        config.site_url(),
        kind,
        &group.display_name(),
        role_name,
        &link,
    );
    let message = Mail {
        to_name: name.clone(),
        to_email: email.clone(),
        subject: format!("Invite for {site_title}"),
        body,
    };
    ctx.release_read_connection();
    if let Err(e) = ctx.app.mailer.send(&config, &message).await {
        tracing::warn!(error = %e, "user_invite: the invite mail was not sent");
        return Err(validation_message(format!(
            "Error sending the invite email, the user was not created: {e}"
        )));
    }

    ctx.begin_write().await;
    // Checked again in the transaction: the address may have been registered meanwhile.
    let mut errs = ValidationBuilder::default();
    check_email(ctx, p.email.raw(), &mut errs, None).await?;
    errs.finish()?;
    let write = q::UserWrite {
        name: &name,
        email: Some(&email),
        fullname: None,
        about: None,
        image_url: None,
        password_hash: None,
        sysadmin: false,
    };
    q::insert_user(ctx.db().await?, &id, "pending", &now_iso(), false, &write).await?;
    q::set_user_reset_key(ctx.db().await?, &id, Some(&reset_key)).await?;
    let u = ctx
        .user_row(&id)
        .await?
        .ok_or_else(|| internal("user vanished"))?;
    let record = serde_json::to_value(&u)?;
    ctx.emit(Entity::User, Change::Created, &u.id, None, Some(record));
    let mut member = Params::new();
    member.insert("id".into(), json!(group.id));
    member.insert("username".into(), json!(id));
    member.insert("role".into(), json!(role));
    ctx.call(&format!("{kind}_member_create"), member).await?;
    Ok(Value::Object(sorted(user_dict(&u, 0, true))))
}

/// CKAN's `_get_random_username_from_email`: the address's local part with every character
/// but letters, digits and `_` turned into `-`, lower-cased, then `-` and a random number below
/// 10000, tried until free (100 times at most). Only ASCII letters and digits stay, as user
/// names allow no others.
async fn free_name(ctx: &mut ActionContext, email: &str) -> CkanResult<String> {
    let local = email.split('@').next().unwrap_or_default();
    let cleaned: String = local
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    for _ in 0..100 {
        let b = rand_bytes();
        let n = u16::from_le_bytes([b[0], b[1]]) % 10000;
        let name = format!("{cleaned}-{n}");
        if q::users_where(ctx.db().await?, "name = $1", std::slice::from_ref(&name))
            .await?
            .is_empty()
        {
            return Ok(name);
        }
    }
    Err(validation_message(
        "Unable to generate a unique username from the e-mail address",
    ))
}

/// 16 random bytes (CKAN's reset key is `os.urandom(16)` in hex).
fn rand_bytes() -> [u8; 16] {
    *uuid::Uuid::new_v4().as_bytes()
}

/// CKAN's `emails/invite_user.txt`.
fn invite_body(
    user_name: &str,
    site_title: &str,
    site_url: &str,
    group_type: &str,
    group_title: &str,
    role_name: &str,
    reset_link: &str,
) -> String {
    format!(
        "Dear {user_name},\n\n\
         You have been invited to {site_title}.\n\n\
         A user has already been created for you with the username {user_name}. You can change it later.\n\n\
         You have been added to the {group_type} {group_title} with the following role: {role_name}.\n\n\
         To accept this invite, please reset your password at:\n\n   \
         {reset_link}\n\n\n\
         Have a nice day.\n\n\
         --\n\
         Message sent by {site_title} ({site_url})\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_carries_the_link_and_the_role() {
        let b = invite_body(
            "ann-42",
            "Catalog",
            "http://x",
            "organization",
            "Org",
            "Editor",
            "http://x/user/reset/1?key=k",
        );
        assert!(b.contains("\n   http://x/user/reset/1?key=k\n"));
        assert!(b.contains("the organization Org with the following role: Editor."));
    }
}
