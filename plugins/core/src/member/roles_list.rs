use catalog_framework::prelude::*;

action_params! {
    /// Return the roles a member may have.
    pub struct MemberRolesListParams {
        /// `organization` (the default) or `group`; a group has no editors
        group_type: String = "organization".to_string(),
    }
}

pub(crate) async fn member_roles_list(
    ctx: &mut ActionContext,
    p: MemberRolesListParams,
) -> CkanResult<Value> {
    ctx.check_access("member_roles_list", &p.__extras).await?;
    let group_type = p.group_type;
    let mut roles = vec![json!({"text": "Admin", "value": "admin"})];
    if group_type != "group" {
        roles.push(json!({"text": "Editor", "value": "editor"}));
    }
    roles.push(json!({"text": "Member", "value": "member"}));
    Ok(Value::Array(roles))
}
