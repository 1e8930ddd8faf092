//! Ratings (CKAN ≤2.8's `rating_create`, the REST rating register): a logged-in user rates a
//! dataset 1–5, one rating per user per dataset (a second one replaces the first). The
//! dataset's REST form carries `ratings_average` and `ratings_count`.

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::store::time::now_iso;
use catalog_framework::typed::{Later, ParamType};

use super::shared::{fail, params, Answer};
use crate::common::{not_found_error, LegacyRequest};

const MIN_RATING: i64 = 1;
const MAX_RATING: i64 = 5;

/// The average rating (`None` when unrated, as CKAN's `get_average_rating`) and the count.
pub(crate) async fn summary(lr: &LegacyRequest, pkg_id: &str) -> CkanResult<(Option<f64>, i64)> {
    let mut ctx = lr.context();
    summary_in(&mut ctx, pkg_id).await
}

async fn summary_in(ctx: &mut ActionContext, pkg_id: &str) -> CkanResult<(Option<f64>, i64)> {
    let conn = ctx.db().await?;
    let (count, total): (i64, Option<f64>) =
        sqlx::query_as("SELECT COUNT(*), SUM(rating) FROM rating WHERE package_id = $1")
            .bind(pkg_id)
            .fetch_one(&mut *conn)
            .await?;
    let average = match total {
        Some(t) if count > 0 && t != 0.0 => Some(t / count as f64),
        _ => None,
    };
    Ok((average, count))
}

/// The rating as an integer: a JSON integer or a string holding one.
fn rating_value(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

const NO_PACKAGE: &str = "You must supply a package id or name (parameter \"package\").";
const NO_RATING: &str = "You must supply a rating (parameter \"rating\").";

/// `package`: the dataset's name or id, a non-empty string; anything else (a number too) is
/// CKAN's message, unkeyed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PackageRef(pub(crate) String);

impl ParamType for PackageRef {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::String(s) if !s.is_empty() => Ok(PackageRef(s.clone())),
            _ => Err(NO_PACKAGE.into()),
        }
    }
    fn schema() -> Value {
        json!({"type": "string", "minLength": 1})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
    fn refusal(_key: &str, message: Cow<'static, str>) -> CkanError {
        validation_message(message.into_owned())
    }
}

/// `rating`: an integer from 1 to 5 (a JSON integer or integer text; `""` is not given),
/// refused with CKAN's messages, unkeyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rating(pub(crate) i64);

impl ParamType for Rating {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        let rating = rating_value(v).ok_or("Rating must be an integer value.")?;
        if !(MIN_RATING..=MAX_RATING).contains(&rating) {
            return Err(format!("Rating must be between {MIN_RATING} and {MAX_RATING}.").into());
        }
        Ok(Rating(rating))
    }
    fn is_blank(v: &Value) -> bool {
        catalog_framework::typed::blank_text(v)
    }
    fn schema() -> Value {
        json!({"type": ["integer", "string"], "minimum": MIN_RATING, "maximum": MAX_RATING})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
    fn refusal(_key: &str, message: Cow<'static, str>) -> CkanError {
        validation_message(message.into_owned())
    }
}

action_params! {
    /// Rate a dataset (CKAN ≤2.8). You must be logged in; a second rating by the same user
    /// replaces the first.
    ///
    /// :param package: the name or id of the dataset to rate
    /// :param rating: an integer between 1 and 5
    /// :returns: `{"rating average": …, "rating count": …}` for the dataset
    pub struct RatingCreateParams {
        /// the name or id of the dataset to rate (required; checked after the access check)
        package: Later<PackageRef>,
        /// an integer between 1 and 5 (required)
        rating: Later<Rating>,
    }
}

async fn rating_create(ctx: &mut ActionContext, p: RatingCreateParams) -> CkanResult<Value> {
    ctx.check_access("rating_create", &p.to_params()).await?;
    let Some(PackageRef(package_ref)) = p.package.get()? else {
        return Err(validation_message(NO_PACKAGE));
    };
    let Some(Rating(rating)) = p.rating.get()? else {
        return Err(validation_message(NO_RATING));
    };
    let Some(pkg) = ctx.package_row(&package_ref).await? else {
        return Err(validation_message(format!("Not found: '{package_ref}'")));
    };
    // The dataset must be one the caller may read.
    ctx.call("package_show", params(json!({ "id": pkg.id })))
        .await?;
    let user_id = ctx
        .user_id()
        .map(str::to_string)
        .ok_or_else(|| not_authorized("You must be logged in to rate a dataset"))?;
    let conn = ctx.db().await?;
    let updated = sqlx::query(
        "UPDATE rating SET rating = $1, created = $2 WHERE package_id = $3 AND user_id = $4",
    )
    .bind(rating as f64)
    .bind(now_iso())
    .bind(&pkg.id)
    .bind(&user_id)
    .execute(&mut *conn)
    .await?;
    if updated.rows_affected() == 0 {
        sqlx::query(
            "INSERT INTO rating (id, package_id, user_id, rating, created) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(catalog_framework::store::new_id())
        .bind(&pkg.id)
        .bind(&user_id)
        .bind(rating as f64)
        .bind(now_iso())
        .execute(&mut *conn)
        .await?;
    }
    let (average, count) = summary_in(ctx, &pkg.id).await?;
    Ok(json!({"rating average": average, "rating count": count}))
}

/// Any logged-in user may rate a dataset they can read (the action checks the reading).
pub(crate) struct RatingCreateAuth;

#[async_trait]
impl AuthFunction for RatingCreateAuth {
    async fn check(&self, _: &mut ActionContext, _: &Params) -> CkanResult<()> {
        Ok(())
    }
}

register_typed_actions! {
    write rating_create(RatingCreateParams) => rating_create, auth = RatingCreateAuth;
}

/// `POST /rest/rating` with `{"package", "rating"}`: 201 with the dataset's average and count;
/// `Location` names the caller's rating of that dataset.
pub(crate) async fn create(lr: &LegacyRequest) -> Answer {
    let body = lr.body_object()?;
    let package = body.get("package").cloned().unwrap_or(Value::Null);
    let answer = lr.run("rating_create", body).await.map_err(fail)?;
    let location = format!(
        "{}/api/{}/rest/rating/{}",
        lr.api_base(),
        lr.version.number(),
        package.as_str().unwrap_or("None")
    );
    Ok(lr.created(&location, &answer))
}

/// `GET /rest/rating/<dataset ref>`: the caller's rating of that dataset, with the dataset's
/// average and count; 404 when the caller has not rated it.
pub(crate) async fn show(lr: &LegacyRequest, id: &str) -> Answer {
    let pkg = lr
        .run("package_show", params(json!({ "id": id })))
        .await
        .map_err(fail)?;
    let pkg_id = pkg.get("id").and_then(Value::as_str).unwrap_or("");
    let name = pkg.get("name").cloned().unwrap_or(Value::Null);
    let Some(user) = lr.user.as_ref() else {
        return Err(not_found_error("No rating by an anonymous user"));
    };
    let mut ctx = lr.context();
    let conn = ctx.db().await.map_err(fail)?;
    let mine: Option<(f64,)> =
        sqlx::query_as("SELECT rating FROM rating WHERE package_id = $1 AND user_id = $2")
            .bind(pkg_id)
            .bind(&user.id)
            .fetch_optional(&mut *conn)
            .await
            .map_err(|e| fail(e.into()))?;
    let Some((rating,)) = mine else {
        return Err(not_found_error("Rating not found"));
    };
    let (average, count) = summary(lr, pkg_id).await.map_err(fail)?;
    let dataset = if lr.version.refs_by_name() {
        name
    } else {
        json!(pkg_id)
    };
    Ok(lr.ok(&json!({
        "dataset": dataset,
        "rating": rating as i64,
        "ratings_average": average,
        "ratings_count": count,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message<T: ParamType + std::fmt::Debug>(key: &'static str, v: Value) -> Value {
        Later::<T>::new(key, Some(v))
            .get()
            .unwrap_err()
            .to_error_object()
    }

    #[test]
    fn package_and_rating_are_refused_with_ckans_messages() {
        let refused = |m: &str| json!({"__type": "Validation Error", "message": m});
        assert_eq!(
            message::<PackageRef>("package", json!("")),
            refused(NO_PACKAGE)
        );
        assert_eq!(
            message::<PackageRef>("package", json!(5)),
            refused(NO_PACKAGE)
        );
        assert_eq!(
            Later::<PackageRef>::new("package", Some(json!("ds")))
                .get()
                .unwrap(),
            Some(PackageRef("ds".into()))
        );
        assert_eq!(
            Later::<Rating>::new("rating", Some(json!("")))
                .get()
                .unwrap(),
            None
        );
        assert_eq!(
            Later::<Rating>::new("rating", Some(json!(" 4 ")))
                .get()
                .unwrap(),
            Some(Rating(4))
        );
        assert_eq!(
            message::<Rating>("rating", json!(4.5)),
            refused("Rating must be an integer value.")
        );
        assert_eq!(
            message::<Rating>("rating", json!([4])),
            refused("Rating must be an integer value.")
        );
        assert_eq!(
            message::<Rating>("rating", json!(6)),
            refused("Rating must be between 1 and 5.")
        );
    }
}
