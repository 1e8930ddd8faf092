//! Removing old activities (CKAN 2.12's `activity_delete`, `activity_delete_all` and
//! `activity_delete_counts`, sysadmins only), with CKAN's checks and messages. Deleting never
//! breaks what remains: an activity stored as a patch against a deleted one becomes a whole
//! copy first ([`store::delete`]).

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::store::time::{format_iso, parse_iso};
use catalog_framework::typed::{Later, ParamType};

use crate::params::read;
use crate::store::{self, Selection};

/// The auth function of the deletion actions: sysadmins only (they pass before it runs); to
/// anyone else, anonymous or not, CKAN's bare `Access denied`.
struct SysadminOnly;

#[async_trait]
impl AuthFunction for SysadminOnly {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, _ctx: &mut ActionContext, _data: &Params) -> CkanResult<()> {
        Err(not_authorized(""))
    }
}

/// CKAN's `isodate` after `ignore_empty`: absent, null or "" is no date; anything that is not
/// an ISO date or date-time (text) is `Date format incorrect`. The date as stored timestamps
/// write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IsoDate(pub(crate) String);

impl ParamType for IsoDate {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        v.as_str()
            .and_then(parse_iso)
            .map(|t| IsoDate(format_iso(t)))
            .ok_or_else(|| "Date format incorrect".into())
    }
    fn is_blank(v: &Value) -> bool {
        catalog_framework::typed::blank_text(v)
    }
    fn schema() -> Value {
        json!({"type": "string"})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

fn deleted_message(n: u64) -> Value {
    json!({"message": format!("Deleted {n} rows from the activity table.")})
}

fn nothing_found() -> Value {
    json!({"message": "No activities found matching the specified criteria."})
}

action_params! {
    /// Delete activities: one by `id`, those between `start_date` and `end_date`, or those
    /// older than `offset_days` days; with `keep`, each object's newest `keep` activities stay.
    /// Sysadmins only.
    pub struct ActivityDeleteParams {
        /// the id of one activity to delete
        id: Option<String>,
        /// the start of a range (ISO 8601 date or date-time), with end_date
        start_date: Later<IsoDate>,
        /// the end of a range (ISO 8601 date or date-time), with start_date
        end_date: Later<IsoDate>,
        /// delete the activities older than this many days
        offset_days: Option<Natural>,
        /// keep this many of each object's newest activities
        keep: Option<Natural>,
        /// accepted for compatibility: the deletion runs in one transaction
        batch_size: Option<Natural>,
    }
}

pub(crate) async fn activity_delete(
    ctx: &mut ActionContext,
    p: ActivityDeleteParams,
) -> CkanResult<Value> {
    let mut errs = ValidationBuilder::default();
    let start = read(&p.start_date, &mut errs).map(|d| d.0);
    let end = read(&p.end_date, &mut errs).map(|d| d.0);
    let id = p.id.filter(|id| !id.trim().is_empty());
    let offset_days = p.offset_days.map(|n| n.0);
    // CKAN's `ensure_id_or_date_criteria_provided` (offset_days 0 is no criterion).
    let dated = (p.start_date.raw().is_some_and(truthy) && p.end_date.raw().is_some_and(truthy))
        || offset_days.is_some_and(|n| n != 0);
    if id.is_none() && !dated {
        errs.push(
            "__before",
            "Either both start_date and end_date must be specified, or offset_days must be provided.",
        );
    }
    errs.finish()?;
    ctx.check_access("activity_delete", &p.__extras).await?;
    let conn = ctx.db().await?;
    if let Some(id) = id {
        let one = Selection {
            condition: |a| format!("{a}.id = $1"),
            binds: vec![id],
            keep: None,
        };
        if store::count(conn, &one).await? == 0 {
            return Err(not_found("Activity not found"));
        }
        store::delete(conn, &one).await?;
        return Ok(json!({"message": "Activity purged"}));
    }
    let mut selection = match (offset_days, start, end) {
        (Some(days), _, _) => {
            let now = chrono::Utc::now().naive_utc();
            let threshold = now
                .checked_sub_signed(chrono::Duration::days(days.min(3_000_000)))
                .unwrap_or(chrono::NaiveDateTime::MIN);
            Selection {
                condition: |a| format!("{a}.timestamp < $1"),
                binds: vec![format_iso(threshold)],
                keep: None,
            }
        }
        (None, Some(start), Some(end)) => {
            if start > end {
                return Err(validation_message(
                    "start_date cannot be greater than end_date.",
                ));
            }
            Selection {
                condition: |a| format!("{a}.timestamp BETWEEN $1 AND $2"),
                binds: vec![start, end],
                keep: None,
            }
        }
        _ => {
            return Ok(
                json!({"message": "No activities found matching the specified criteria. \
                Please provide either start_date and end_date or offset_days."}),
            )
        }
    };
    if store::count(conn, &selection).await? == 0 {
        return Ok(nothing_found());
    }
    selection.keep = p.keep.map(|k| k.0).filter(|k| *k > 0);
    let n = store::delete(conn, &selection).await?;
    if n == 0 {
        return Ok(nothing_found());
    }
    Ok(deleted_message(n))
}

/// Python's truthiness of a date parameter as the `__before` check reads it.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Bool(b) => *b,
        _ => true,
    }
}

action_params! {
    /// Delete every activity. Sysadmins only.
    pub struct ActivityDeleteAllParams {
        /// accepted for compatibility: the deletion runs in one transaction
        batch_size: Option<Natural>,
    }
}

pub(crate) async fn activity_delete_all(
    ctx: &mut ActionContext,
    p: ActivityDeleteAllParams,
) -> CkanResult<Value> {
    ctx.check_access("activity_delete_all", &p.__extras).await?;
    let all = Selection {
        condition: |_| "1 = 1".into(),
        binds: Vec::new(),
        keep: None,
    };
    let conn = ctx.db().await?;
    if store::count(conn, &all).await? == 0 {
        return Ok(nothing_found());
    }
    let n = store::delete(conn, &all).await?;
    Ok(deleted_message(n))
}

action_params! {
    /// Return how many activities are older than 1, 30 and 365 days, and how many there are.
    /// Sysadmins only.
    pub struct ActivityDeleteCountsParams {}
}

pub(crate) async fn activity_delete_counts(
    ctx: &mut ActionContext,
    p: ActivityDeleteCountsParams,
) -> CkanResult<Value> {
    ctx.check_access("activity_delete_counts", &p.__extras)
        .await?;
    let now = chrono::Utc::now().naive_utc();
    let [d1, d30, d365, total] = store::age_counts(ctx.db().await?, now).await?;
    Ok(json!({
        "older_than_1_day": d1,
        "older_than_30_days": d30,
        "older_than_365_days": d365,
        "total": total,
    }))
}

register_typed_actions! {
    write activity_delete(ActivityDeleteParams) => activity_delete, auth = SysadminOnly;
    write activity_delete_all(ActivityDeleteAllParams) => activity_delete_all, auth = SysadminOnly;
    write activity_delete_counts(ActivityDeleteCountsParams) => activity_delete_counts, auth = SysadminOnly;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_as_isodate_after_ignore_empty() {
        let date = |v: Value| Later::<IsoDate>::new("start_date", Some(v)).get();
        assert_eq!(date(json!("")).unwrap(), None);
        assert!(date(json!("2024-01-02")).unwrap().is_some());
        for bad in [json!("yesterday"), json!(5), json!(false), json!([])] {
            assert_eq!(
                date(bad).unwrap_err().to_error_object(),
                json!({"__type": "Validation Error", "start_date": ["Date format incorrect"]})
            );
        }
    }
}
