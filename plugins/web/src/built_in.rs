//! The built-in template set (layer 0), the templates the pages render (each is loaded at
//! start-up, so a broken theme is found then), and the messages the code passes to templates:
//! with the templates' own `_()` calls, what each catalog must translate.

/// The built-in template set (layer 0).
pub(crate) const BUILT_IN: &[(&str, &str)] = &[
    ("base.html", include_str!("../templates/base.html")),
    (
        "dataset/activity.html",
        include_str!("../templates/dataset/activity.html"),
    ),
    (
        "user/login.html",
        include_str!("../templates/user/login.html"),
    ),
    (
        "user/read.html",
        include_str!("../templates/user/read.html"),
    ),
    (
        "user/api_tokens.html",
        include_str!("../templates/user/api_tokens.html"),
    ),
    (
        "macros/form.html",
        include_str!("../templates/macros/form.html"),
    ),
    (
        "dataset/new.html",
        include_str!("../templates/dataset/new.html"),
    ),
    (
        "dataset/resource_form.html",
        include_str!("../templates/dataset/resource_form.html"),
    ),
    (
        "confirm_delete.html",
        include_str!("../templates/confirm_delete.html"),
    ),
    (
        "user/register.html",
        include_str!("../templates/user/register.html"),
    ),
    (
        "user/dashboard.html",
        include_str!("../templates/user/dashboard.html"),
    ),
    (
        "admin/config.html",
        include_str!("../templates/admin/config.html"),
    ),
    (
        "admin/trash.html",
        include_str!("../templates/admin/trash.html"),
    ),
    ("home.html", include_str!("../templates/home.html")),
    ("error.html", include_str!("../templates/error.html")),
    (
        "dataset/search.html",
        include_str!("../templates/dataset/search.html"),
    ),
    (
        "dataset/read.html",
        include_str!("../templates/dataset/read.html"),
    ),
    (
        "dataset/resource_read.html",
        include_str!("../templates/dataset/resource_read.html"),
    ),
    (
        "organization/index.html",
        include_str!("../templates/organization/index.html"),
    ),
    (
        "organization/read.html",
        include_str!("../templates/organization/read.html"),
    ),
    (
        "group/index.html",
        include_str!("../templates/group/index.html"),
    ),
    (
        "group/read.html",
        include_str!("../templates/group/read.html"),
    ),
    (
        "snippets/search.html",
        include_str!("../templates/snippets/search.html"),
    ),
    (
        "snippets/package_item.html",
        include_str!("../templates/snippets/package_item.html"),
    ),
    (
        "snippets/pagination.html",
        include_str!("../templates/snippets/pagination.html"),
    ),
    (
        "harvest/index.html",
        include_str!("../templates/harvest/index.html"),
    ),
    (
        "harvest/read.html",
        include_str!("../templates/harvest/read.html"),
    ),
    (
        "harvest/stats.html",
        include_str!("../templates/harvest/stats.html"),
    ),
    (
        "harvest/status.html",
        include_str!("../templates/harvest/status.html"),
    ),
    (
        "harvest/job.html",
        include_str!("../templates/harvest/job.html"),
    ),
];

/// The templates the pages render (each is loaded at start-up, so a broken theme is found
/// then).
pub(crate) const TEMPLATES: &[&str] = &[
    "dataset/new.html",
    "dataset/resource_form.html",
    "confirm_delete.html",
    "user/register.html",
    "user/dashboard.html",
    "admin/config.html",
    "admin/trash.html",
    "home.html",
    "user/login.html",
    "user/read.html",
    "user/api_tokens.html",
    "error.html",
    "dataset/search.html",
    "dataset/read.html",
    "dataset/resource_read.html",
    "dataset/activity.html",
    "organization/index.html",
    "organization/read.html",
    "group/index.html",
    "group/read.html",
    "harvest/index.html",
    "harvest/read.html",
    "harvest/job.html",
];

/// Messages the code passes to templates (facet titles, sort names, errors, activity types):
/// what the catalogs must translate besides the templates' own.
#[cfg(test)]
pub(crate) const MESSAGES: &[&str] = &[
    "Organizations",
    "Groups",
    "Tags",
    "Formats",
    "Licenses",
    "Relevance",
    "Name Ascending",
    "Name Descending",
    "Last Modified",
    "Dataset not found",
    "Resource not found",
    "Organization not found",
    "Group not found",
    "Not authorized to see this page",
    "The search query could not be understood.",
    "The page could not be shown.",
    "User not found",
    "Login failed. Bad username or password.",
    "Too many failed logins: try again in 15 minutes.",
    "The form has expired: please send it again.",
    "Unauthorized to register as a user.",
    "The passwords you entered do not match.",
    "You must add at least one data resource",
    "The data could not be saved.",
    "Missing value",
    "new package",
    "changed package",
    "deleted package",
    "new resource view",
    "changed resource view",
    "deleted resource view",
    "new organization",
    "changed organization",
    "deleted organization",
    "new group",
    "changed group",
    "deleted group",
    "Harvest source not found",
    "Harvest job not found",
];

/// Every message the built-in templates pass to `_()`: what each catalog must translate.
#[cfg(test)]
pub(crate) fn messages_in_templates() -> Vec<String> {
    let re = regex_lite_messages();
    let mut out: Vec<String> = BUILT_IN
        .iter()
        .flat_map(|(_, src)| re(src))
        .chain(MESSAGES.iter().map(|m| m.to_string()))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The msgids of `_("…")` and `ngettext("…", …)` calls in a template's text (double-quoted
/// literals only, as the templates write them; `ngettext`'s singular is its msgid).
#[cfg(test)]
fn regex_lite_messages() -> impl Fn(&str) -> Vec<String> {
    |src: &str| {
        let mut out = Vec::new();
        let mut rest = src;
        while let Some((at, len)) = ["_(\"", "ngettext(\""]
            .iter()
            .filter_map(|o| rest.find(o).map(|at| (at, o.len())))
            .min()
        {
            let after = &rest[at + len..];
            let Some(end) = after.find('"') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
        out
    }
}
