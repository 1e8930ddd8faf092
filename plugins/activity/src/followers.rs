//! Followers (CKAN 2.12's core follower actions): `follow_*`, `unfollow_*`, `am_following_*`
//! and `*_follower_count` for users, datasets and groups (organizations are followed as
//! groups), with CKAN's order of checks and its messages.

use catalog_framework::prelude::*;
use catalog_framework::store::subquery;
use catalog_framework::store::time::now_iso;
use catalog_framework::typed::{Later, Scalar};

/// What can be followed, and how CKAN names it in its messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Dataset,
    Group,
}

impl Kind {
    /// `users`, `datasets`, `groups` (in "You must be logged in to follow …").
    fn plural(self) -> &'static str {
        match self {
            Kind::User => "users",
            Kind::Dataset => "datasets",
            Kind::Group => "groups",
        }
    }
    /// `user`, `dataset`, `group` (in "Error validating the schema of the … to follow.").
    fn singular(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Dataset => "dataset",
            Kind::Group => "group",
        }
    }
    /// `User`, `Dataset`, `Group` (in "Not found: …").
    fn title(self) -> &'static str {
        match self {
            Kind::User => "User",
            Kind::Dataset => "Dataset",
            Kind::Group => "Group",
        }
    }
}

/// The id of the object an `id` (id or name) names, deleted ones included, as CKAN's
/// `*_id_or_name_exists` validators find them; with its state.
async fn object(
    ctx: &mut ActionContext,
    kind: Kind,
    r: &str,
) -> CkanResult<Option<(String, String)>> {
    Ok(match kind {
        Kind::User => ctx.user_row(r).await?.map(|u| (u.id, u.state)),
        Kind::Dataset => ctx.package_row(r).await?.map(|p| (p.id, p.state)),
        Kind::Group => ctx.group_row(r).await?.map(|g| (g.id, g.state)),
    })
}

/// The logged-in caller's id, or CKAN's 403 (`You must be logged in to <verb> <kind>`).
fn caller(ctx: &ActionContext, verb: &str, kind: Kind) -> CkanResult<String> {
    ctx.user_id()
        .map(str::to_string)
        .ok_or_else(|| not_authorized(format!("You must be logged in to {verb} {}", kind.plural())))
}

/// A [`Scalar`] parameter's text (`None`: absent, null, a list or a dict).
fn scalar(p: &Later<Scalar>) -> CkanResult<Option<String>> {
    Ok(p.get()?.map(|s| s.0))
}

/// `id` as CKAN's validators read it: a non-empty string (or number).
fn id_param(id: &Later<Scalar>) -> CkanResult<Option<String>> {
    Ok(scalar(id)?.filter(|s| !s.trim().is_empty()))
}

/// `follow_*`: the caller follows the object; following it again returns the same record.
async fn follow(ctx: &mut ActionContext, id: Option<String>, kind: Kind) -> CkanResult<Value> {
    let me = caller(ctx, "follow", kind)?;
    // CKAN 2.12 checks that the caller may read a dataset or group before anything else.
    match kind {
        Kind::Dataset | Kind::Group => {
            let what = if kind == Kind::Dataset {
                "Package"
            } else {
                "Group"
            };
            let id = id.clone().ok_or_else(|| {
                validation_message(format!("Missing id, can not get {what} object"))
            })?;
            let (action, (oid, _)) = match object(ctx, kind, &id).await? {
                Some(o) if kind == Kind::Dataset => ("package_show", o),
                Some(o) => ("group_show", o),
                None => return Err(not_found("")),
            };
            let mut auth = Params::new();
            auth.insert("id".into(), json!(oid));
            ctx.check_access(action, &auth).await?;
        }
        Kind::User => {}
    }
    let schema_error = || {
        validation_message(format!(
            "Error validating the schema of the {} to follow.",
            kind.singular()
        ))
    };
    let Some(id) = id else {
        return Err(schema_error());
    };
    let (oid, _) = object(ctx, kind, &id).await?.ok_or_else(schema_error)?;
    if oid == me {
        return Err(validation_message("You cannot follow yourself"));
    }
    let conn = ctx.db().await?;
    let existing: Option<String> = sqlx::query_scalar(
        "SELECT datetime FROM follower WHERE follower_id = $1 AND object_id = $2",
    )
    .bind(&me)
    .bind(&oid)
    .fetch_optional(&mut *conn)
    .await?;
    let datetime = match existing {
        Some(d) => d,
        None => {
            let now = now_iso();
            sqlx::query(
                "INSERT INTO follower (follower_id, object_id, object_type, datetime) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (follower_id, object_id) DO NOTHING",
            )
            .bind(&me)
            .bind(&oid)
            .bind(kind.singular())
            .bind(&now)
            .execute(&mut *conn)
            .await?;
            now
        }
    };
    Ok(json!({"follower_id": me, "object_id": oid, "datetime": datetime}))
}

/// `unfollow_*`: null whether or not the caller followed the object.
async fn unfollow(ctx: &mut ActionContext, id: Option<String>, kind: Kind) -> CkanResult<Value> {
    let me = caller(ctx, "unfollow", kind)?;
    let schema_error =
        || validation_message("Error validating the schema of the object to unfollow.");
    let id = id.ok_or_else(schema_error)?;
    let (oid, _) = object(ctx, kind, &id).await?.ok_or_else(schema_error)?;
    sqlx::query("DELETE FROM follower WHERE follower_id = $1 AND object_id = $2")
        .bind(&me)
        .bind(&oid)
        .execute(ctx.db().await?)
        .await?;
    Ok(Value::Null)
}

/// The object of a read action's `id`, or CKAN's field errors (`Missing value`,
/// `Not found: User`).
async fn object_for_read(
    ctx: &mut ActionContext,
    id: Option<&str>,
    kind: Kind,
) -> CkanResult<String> {
    let id = id.ok_or_else(|| missing("id"))?;
    match object(ctx, kind, id).await? {
        Some((oid, _)) => Ok(oid),
        None => Err(validation()
            .field("id", format!("Not found: {}", kind.title()))
            .build()),
    }
}

/// `am_following_*`: whether the logged-in caller follows the object.
async fn am_following(
    ctx: &mut ActionContext,
    id: Option<String>,
    kind: Kind,
) -> CkanResult<Value> {
    let oid = object_for_read(ctx, id.as_deref(), kind).await?;
    let me = ctx
        .user_id()
        .map(str::to_string)
        .ok_or_else(|| not_authorized(""))?;
    let found: Option<String> = sqlx::query_scalar(
        "SELECT object_id FROM follower WHERE follower_id = $1 AND object_id = $2",
    )
    .bind(&me)
    .bind(&oid)
    .fetch_optional(ctx.db().await?)
    .await?;
    Ok(json!(found.is_some()))
}

/// `*_follower_count`: the object's followers, deleted users and deleted objects left out.
async fn follower_count(
    ctx: &mut ActionContext,
    id: Option<String>,
    kind: Kind,
) -> CkanResult<Value> {
    let oid = object_for_read(ctx, id.as_deref(), kind).await?;
    let (_, state) = object(ctx, kind, &oid).await?.unwrap_or_default();
    if state == "deleted" {
        return Ok(json!(0));
    }
    let n: i64 = sqlx::query_scalar(&format!(
        "SELECT COUNT(*) FROM follower f WHERE f.object_id = $1 AND f.follower_id IN ({})",
        subquery::LIVE_USERS
    ))
    .bind(&oid)
    .fetch_one(ctx.db().await?)
    .await?;
    Ok(json!(n))
}

/// The keys of CKAN's `user_list_dictize`, in its order: what follower lists show of a user.
const USER_LIST_KEYS: &[&str] = &[
    "id",
    "name",
    "fullname",
    "created",
    "about",
    "last_active",
    "activity_streams_email_notifications",
    "sysadmin",
    "state",
    "image_url",
    "display_name",
    "email_hash",
    "number_created_packages",
    "image_display_url",
];

/// `*_follower_list`: the object's followers (deleted users left out), oldest follow first.
/// Sysadmins only, checked before the id, as in CKAN.
async fn follower_list(
    ctx: &mut ActionContext,
    id: Option<String>,
    kind: Kind,
) -> CkanResult<Value> {
    if !(ctx.is_sysadmin() || ctx.ignore_auth) {
        return Err(not_authorized("Not authorized"));
    }
    let oid = object_for_read(ctx, id.as_deref(), kind).await?;
    let ids: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT f.follower_id FROM follower f WHERE f.object_id = $1 AND f.follower_id IN ({}) \
         ORDER BY f.datetime, f.follower_id",
        subquery::LIVE_USERS
    ))
    .bind(&oid)
    .fetch_all(ctx.db().await?)
    .await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        out.push(user_list_dict(ctx, &id).await?);
    }
    Ok(Value::Array(out))
}

/// A user as `user_list_dictize` shows one.
async fn user_list_dict(ctx: &mut ActionContext, id: &str) -> CkanResult<Value> {
    let mut q = Params::new();
    q.insert("id".into(), json!(id));
    let shown = ctx.call_ignoring_auth("user_show", q).await?;
    let user: Map<String, Value> = USER_LIST_KEYS
        .iter()
        .map(|k| (k.to_string(), shown.get(*k).cloned().unwrap_or(Value::Null)))
        .collect();
    Ok(Value::Object(user))
}

/// What a followee count or list covers.
#[derive(Clone, Copy)]
enum Followees {
    All,
    Users,
    Datasets,
    Groups,
    Organizations,
}

impl Followees {
    /// The kinds of object it covers, in the order CKAN's `followee_list` lists them, each
    /// with its name there.
    fn kinds(self) -> &'static [Followees] {
        match self {
            Followees::All => &[
                Followees::Users,
                Followees::Datasets,
                Followees::Groups,
                Followees::Organizations,
            ],
            Followees::Users => &[Followees::Users],
            Followees::Datasets => &[Followees::Datasets],
            Followees::Groups => &[Followees::Groups],
            Followees::Organizations => &[Followees::Organizations],
        }
    }

    fn type_name(self) -> &'static str {
        match self {
            Followees::Users => "user",
            Followees::Datasets => "dataset",
            Followees::Groups => "group",
            Followees::Organizations | Followees::All => "organization",
        }
    }

    /// The followed objects of one kind (`$1`: the follower), deleted ones left out:
    /// `SELECT <what> FROM …`.
    fn sql(self, what: &str) -> String {
        let (live, object_type) = match self {
            Followees::Users => (subquery::LIVE_USERS, "user"),
            Followees::Datasets => (subquery::LIVE_PACKAGES, "dataset"),
            Followees::Groups => (subquery::LIVE_GROUPS, "group"),
            Followees::Organizations | Followees::All => (subquery::LIVE_ORGANIZATIONS, "group"),
        };
        format!(
            "SELECT {what} FROM follower f \
             WHERE f.follower_id = $1 AND f.object_type = '{object_type}' \
             AND f.object_id IN ({live})"
        )
    }
}

/// `followee_count` and `*_followee_count`: how many objects of a kind a user follows, deleted
/// ones left out. (CKAN 2.12 counts followed groups whatever the kind: see docs/API-COMPAT.md.)
async fn followee_count(
    ctx: &mut ActionContext,
    id: Option<String>,
    which: Followees,
) -> CkanResult<Value> {
    let me = object_for_read(ctx, id.as_deref(), Kind::User).await?;
    let mut total = 0i64;
    for kind in which.kinds() {
        let n: i64 = sqlx::query_scalar(&kind.sql("COUNT(*)"))
            .bind(&me)
            .fetch_one(ctx.db().await?)
            .await?;
        total += n;
    }
    Ok(json!(total))
}

/// The followee lists' check, CKAN's `_followee_list`: a user may list what they follow, a
/// sysadmin what anyone follows; nobody else, and never an anonymous caller.
async fn may_list_followees(ctx: &mut ActionContext, id: Option<&str>) -> CkanResult<()> {
    if ctx.is_sysadmin() || ctx.ignore_auth {
        return Ok(());
    }
    let denied = || not_authorized("Not authorized");
    let me = ctx.user_id().map(str::to_string).ok_or_else(denied)?;
    let requested = match id {
        Some(id) => ctx.user_row(id).await?.map(|u| u.id),
        None => None,
    };
    if requested.as_deref() == Some(me.as_str()) {
        Ok(())
    } else {
        Err(denied())
    }
}

/// One followed object as the followee lists show it: `user_list_dictize`'s keys for a user,
/// `package_dictize` for a dataset (none when the caller may not read it), `group_dictize`
/// (datasets and users included, no follower count) for a group or organization.
async fn followee_dict(
    ctx: &mut ActionContext,
    kind: Followees,
    id: &str,
) -> CkanResult<Option<Value>> {
    let mut p = Params::new();
    p.insert("id".into(), json!(id));
    Ok(Some(match kind {
        Followees::Users => user_list_dict(ctx, id).await?,
        Followees::Datasets => match ctx.call("package_show", p).await {
            Ok(d) => d,
            Err(e) if e.kind == ErrorKind::Authorization => return Ok(None),
            Err(e) => return Err(e),
        },
        Followees::Groups | Followees::Organizations | Followees::All => {
            for k in ["include_datasets", "include_users"] {
                p.insert(k.into(), json!(true));
            }
            p.insert("include_followers".into(), json!(false));
            let action = if matches!(kind, Followees::Groups) {
                "group_show"
            } else {
                "organization_show"
            };
            let mut d = ctx.call_ignoring_auth(action, p).await?;
            if let Some(m) = d.as_object_mut() {
                m.remove("num_followers");
            }
            d
        }
    }))
}

/// The objects of the kinds `which` covers that the user `id` follows, oldest follow first,
/// each with its kind.
async fn followees(
    ctx: &mut ActionContext,
    id: Option<&str>,
    which: Followees,
) -> CkanResult<Vec<(Followees, Value)>> {
    may_list_followees(ctx, id).await?;
    let me = object_for_read(ctx, id, Kind::User).await?;
    let mut out = Vec::new();
    for kind in which.kinds() {
        let sql = format!(
            "{} ORDER BY f.datetime, f.object_id",
            kind.sql("f.object_id")
        );
        let ids: Vec<String> = sqlx::query_scalar(&sql)
            .bind(&me)
            .fetch_all(ctx.db().await?)
            .await?;
        for id in ids {
            if let Some(d) = followee_dict(ctx, *kind, &id).await? {
                out.push((*kind, d));
            }
        }
    }
    Ok(out)
}

/// `user_/dataset_/group_/organization_followee_list`: the dicts of what a user follows.
async fn followee_list(
    ctx: &mut ActionContext,
    id: Option<String>,
    which: Followees,
) -> CkanResult<Value> {
    let found = followees(ctx, id.as_deref(), which).await?;
    Ok(Value::Array(found.into_iter().map(|(_, d)| d).collect()))
}

/// `followee_list`: everything a user follows as `{type, display_name, dict}`, sorted by
/// display name (code point order, as Python sorts), those whose display name starts with `q`
/// (case-insensitive) when it is given.
async fn all_followees(
    ctx: &mut ActionContext,
    (id, q): (Option<String>, Option<String>),
) -> CkanResult<Value> {
    let found = followees(ctx, id.as_deref(), Followees::All).await?;
    let q = q.map(|q| q.trim().to_lowercase());
    let mut items: Vec<(String, Value)> = found
        .into_iter()
        .map(|(kind, d)| {
            let name = ["display_name", "fullname", "title", "name"]
                .iter()
                .find_map(|k| d.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
                .unwrap_or_default()
                .to_string();
            let item = json!({"type": kind.type_name(), "display_name": name, "dict": d});
            (name, item)
        })
        .filter(|(name, _)| match &q {
            Some(q) if !q.is_empty() => name.trim().to_lowercase().starts_with(q.as_str()),
            _ => true,
        })
        .collect();
    // Stable, as Python's sort: equal names keep the kinds' order.
    items.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Value::Array(items.into_iter().map(|(_, v)| v).collect()))
}

/// Declares each follower action (`read`/`write`, name, params struct, fn and its argument,
/// help text, the doc of its `id`): the params struct, a module named after the action with its
/// fn, and the registration with the (open) auth function; the actions check the caller
/// themselves, in CKAN's order.
macro_rules! follower_actions {
    ($( $kind:ident $name:ident($params:ident) => $f:ident($arg:expr), $doc:literal, $id:literal; )*) => {
        $(
            action_params! {
                #[doc = $doc]
                pub struct $params {
                    #[doc = $id]
                    id: Later<Scalar>,
                }
            }

            mod $name {
                use super::*;

                pub(super) async fn run(ctx: &mut ActionContext, p: $params) -> CkanResult<Value> {
                    ctx.check_access(stringify!($name), &p.to_params()).await?;
                    $f(ctx, id_param(&p.id)?, $arg).await
                }
            }
        )*

        register_typed_actions! {
            $( $kind $name($params) => $name::run, auth = crate::actions::ActivityShowAuth; )*
        }
    };
}

follower_actions! {
    write follow_user(FollowUserParams) => follow(Kind::User),
        "Start following a user.\n\n:param id: the id or name of the user\n:rtype: dictionary (follower_id, object_id, datetime)",
        "the id or name of the user";
    write follow_dataset(FollowDatasetParams) => follow(Kind::Dataset),
        "Start following a dataset.\n\n:param id: the id or name of the dataset\n:rtype: dictionary (follower_id, object_id, datetime)",
        "the id or name of the dataset";
    write follow_group(FollowGroupParams) => follow(Kind::Group),
        "Start following a group or organization.\n\n:param id: the id or name of the group\n:rtype: dictionary (follower_id, object_id, datetime)",
        "the id or name of the group";
    write unfollow_user(UnfollowUserParams) => unfollow(Kind::User),
        "Stop following a user.\n\n:param id: the id or name of the user",
        "the id or name of the user";
    write unfollow_dataset(UnfollowDatasetParams) => unfollow(Kind::Dataset),
        "Stop following a dataset.\n\n:param id: the id or name of the dataset",
        "the id or name of the dataset";
    write unfollow_group(UnfollowGroupParams) => unfollow(Kind::Group),
        "Stop following a group or organization.\n\n:param id: the id or name of the group",
        "the id or name of the group";
    read am_following_user(AmFollowingUserParams) => am_following(Kind::User),
        "Return whether you follow a user.\n\n:param id: the id or name of the user\n:rtype: bool",
        "the id or name of the user";
    read am_following_dataset(AmFollowingDatasetParams) => am_following(Kind::Dataset),
        "Return whether you follow a dataset.\n\n:param id: the id or name of the dataset\n:rtype: bool",
        "the id or name of the dataset";
    read am_following_group(AmFollowingGroupParams) => am_following(Kind::Group),
        "Return whether you follow a group or organization.\n\n:param id: the id or name of the group\n:rtype: bool",
        "the id or name of the group";
    read user_follower_count(UserFollowerCountParams) => follower_count(Kind::User),
        "Return how many users follow a user.\n\n:param id: the id or name of the user\n:rtype: int",
        "the id or name of the user";
    read dataset_follower_count(DatasetFollowerCountParams) => follower_count(Kind::Dataset),
        "Return how many users follow a dataset.\n\n:param id: the id or name of the dataset\n:rtype: int",
        "the id or name of the dataset";
    read group_follower_count(GroupFollowerCountParams) => follower_count(Kind::Group),
        "Return how many users follow a group.\n\n:param id: the id or name of the group\n:rtype: int",
        "the id or name of the group";
    read organization_follower_count(OrganizationFollowerCountParams) => follower_count(Kind::Group),
        "Return how many users follow an organization.\n\n:param id: the id or name of the organization\n:rtype: int",
        "the id or name of the organization";
    read user_follower_list(UserFollowerListParams) => follower_list(Kind::User),
        "Return the users who follow a user. Sysadmins only.\n\n:param id: the id or name of the user\n:rtype: list of dictionaries",
        "the id or name of the user";
    read dataset_follower_list(DatasetFollowerListParams) => follower_list(Kind::Dataset),
        "Return the users who follow a dataset. Sysadmins only.\n\n:param id: the id or name of the dataset\n:rtype: list of dictionaries",
        "the id or name of the dataset";
    read group_follower_list(GroupFollowerListParams) => follower_list(Kind::Group),
        "Return the users who follow a group. Sysadmins only.\n\n:param id: the id or name of the group\n:rtype: list of dictionaries",
        "the id or name of the group";
    read organization_follower_list(OrganizationFollowerListParams) => follower_list(Kind::Group),
        "Return the users who follow an organization. Sysadmins only.\n\n:param id: the id or name of the organization\n:rtype: list of dictionaries",
        "the id or name of the organization";
    read followee_count(FolloweeCountParams) => followee_count(Followees::All),
        "Return how many users, datasets, groups and organizations a user follows.\n\n:param id: the id or name of the user\n:rtype: int",
        "the id or name of the user";
    read user_followee_count(UserFolloweeCountParams) => followee_count(Followees::Users),
        "Return how many users a user follows.\n\n:param id: the id or name of the user\n:rtype: int",
        "the id or name of the user";
    read dataset_followee_count(DatasetFolloweeCountParams) => followee_count(Followees::Datasets),
        "Return how many datasets a user follows.\n\n:param id: the id or name of the user\n:rtype: int",
        "the id or name of the user";
    read group_followee_count(GroupFolloweeCountParams) => followee_count(Followees::Groups),
        "Return how many groups a user follows.\n\n:param id: the id or name of the user\n:rtype: int",
        "the id or name of the user";
    read organization_followee_count(OrganizationFolloweeCountParams) => followee_count(Followees::Organizations),
        "Return how many organizations a user follows.\n\n:param id: the id or name of the user\n:rtype: int",
        "the id or name of the user";
    read user_followee_list(UserFolloweeListParams) => followee_list(Followees::Users),
        "Return the users a user follows. Allowed for the user themself and sysadmins.\n\n:param id: the id or name of the user\n:rtype: list of dictionaries",
        "the id or name of the user";
    read dataset_followee_list(DatasetFolloweeListParams) => followee_list(Followees::Datasets),
        "Return the datasets a user follows. Allowed for the user themself and sysadmins.\n\n:param id: the id or name of the user\n:rtype: list of dictionaries",
        "the id or name of the user";
    read group_followee_list(GroupFolloweeListParams) => followee_list(Followees::Groups),
        "Return the groups a user follows. Allowed for the user themself and sysadmins.\n\n:param id: the id or name of the user\n:rtype: list of dictionaries",
        "the id or name of the user";
    read organization_followee_list(OrganizationFolloweeListParams) => followee_list(Followees::Organizations),
        "Return the organizations a user follows. Allowed for the user themself and sysadmins.\n\n:param id: the id or name of the user\n:rtype: list of dictionaries",
        "the id or name of the user";
}

action_params! {
    #[doc = "Return everything a user follows: users, datasets, groups and organizations. Allowed for the user themself and sysadmins.\n\n:param id: the id or name of the user\n:param q: only objects whose display name starts with this (case-insensitive) (optional)\n:rtype: list of dictionaries, each with keys type, display_name and dict"]
    pub struct FolloweeListParams {
        /// the id or name of the user
        id: Later<Scalar>,
        /// only the objects whose display name starts with this (case-insensitive)
        q: Later<Scalar>,
    }
}

/// `followee_list`, with the caller checked as the other follower actions are.
async fn followee_list_action(ctx: &mut ActionContext, p: FolloweeListParams) -> CkanResult<Value> {
    ctx.check_access("followee_list", &p.to_params()).await?;
    all_followees(ctx, (id_param(&p.id)?, scalar(&p.q)?)).await
}

register_typed_actions! {
    read followee_list(FolloweeListParams) => followee_list_action, auth = crate::actions::ActivityShowAuth;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_as_params_text() {
        let id = |v: Value| id_param(&Later::new("id", Some(v))).unwrap();
        assert_eq!(id(json!("alice")), Some("alice".into()));
        assert_eq!(id(json!(7)), Some("7".into()));
        assert_eq!(id(json!(true)), Some("True".into()));
        assert_eq!(id(json!("  ")), None);
        assert_eq!(id(json!(["alice"])), None);
        assert_eq!(id(json!({})), None);
        assert_eq!(id(Value::Null), None);
        assert_eq!(
            scalar(&Later::new("q", Some(json!(" Ab ")))).unwrap(),
            Some(" Ab ".into())
        );
    }
}
