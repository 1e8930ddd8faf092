use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::{AsBool, Later};

use super::{dataset_counts, raw_group, CountScope};
use crate::dictize::sorted;

action_params! {
    /// Return the groups the caller may add datasets to.
    pub struct GroupListAuthzParams {
        /// only the groups the caller is a member of, for a sysadmin too (default false)
        am_member: Later<AsBool>,
        /// include each group's `package_count` (default false)
        include_dataset_count: Later<AsBool>,
    }
}

pub(crate) async fn group_list_authz(
    ctx: &mut ActionContext,
    p: GroupListAuthzParams,
) -> CkanResult<Value> {
    let am_member = p.am_member.or(false)?;
    let include_count = p.include_dataset_count.or(false)?;
    ctx.check_access("group_list_authz", &p.to_params()).await?;
    let Some(uid) = ctx.user_id().map(str::to_string) else {
        return Ok(json!([]));
    };
    let groups = q::active_groups_of_kind(ctx.db().await?, false).await?;
    let mine: Vec<String> = q::user_memberships(ctx.db().await?, &uid)
        .await?
        .into_iter()
        .map(|(g, _)| g)
        .collect();
    let counts = if include_count {
        Some(dataset_counts(ctx, CountScope::AllOfTypeDataset).await?)
    } else {
        None
    };
    let site = ctx.config().site_url().to_string();
    let all = ctx.is_sysadmin() && !am_member;
    let mut out = Vec::new();
    for g in groups {
        if !all && !mine.contains(&g.id) {
            continue;
        }
        let mut m = raw_group(&site, &g);
        if let Some(c) = &counts {
            m.insert("package_count".into(), json!(c.of(&g)));
        }
        out.push((g.display_name().to_lowercase(), Value::Object(sorted(m))));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Value::Array(out.into_iter().map(|x| x.1).collect()))
}
