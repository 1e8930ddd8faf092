use catalog_framework::prelude::*;

action_params! {
    /// Return the help string of an action.
    pub struct HelpShowParams {
        /// the action's name
        name: String,
    }
}

pub(crate) async fn help_show(ctx: &mut ActionContext, p: HelpShowParams) -> CkanResult<Value> {
    ctx.check_access("help_show", &p.__extras).await?;
    let action = ctx
        .app
        .registry
        .action(&p.name)
        .ok_or_else(|| not_found("Action function not found"))?;
    let doc = action.doc();
    Ok(if doc.is_empty() {
        Value::Null
    } else {
        json!(doc)
    })
}
