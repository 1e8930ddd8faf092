//! `docs/NOT-BUILT.md` is the one list of what is not built yet; this keeps it true.
//!
//! Against the registry snapshot (`tests/integration/snapshots/integration__registry__registered_extensions.snap`,
//! itself kept true by `tests/integration/registry.rs`): no action listed as not built is registered, every
//! action of the Action API v3 reference that is not registered is listed, and the list names
//! only reference actions, each once.

use std::collections::BTreeSet;
use std::path::PathBuf;

/// Every action the Action API v3 reference names, copied from it: the current release's read
/// table, the actions named in its prose, and the older release's table. The reference lives
/// outside this repository, so the names are copied here rather than parsed.
const REFERENCE_ACTIONS: &[&str] = &[
    // Read actions (current release).
    "package_list",
    "current_package_list_with_resources",
    "member_list",
    "package_collaborator_list",
    "package_collaborator_list_for_user",
    "group_list",
    "organization_list",
    "group_list_authz",
    "organization_list_for_user",
    "license_list",
    "tag_list",
    "user_list",
    "package_relationships_list",
    "package_show",
    "resource_show",
    "resource_view_show",
    "resource_view_list",
    "group_show",
    "organization_show",
    "group_package_show",
    "tag_show",
    "user_show",
    "package_autocomplete",
    "format_autocomplete",
    "user_autocomplete",
    "group_autocomplete",
    "organization_autocomplete",
    "package_search",
    "resource_search",
    "tag_search",
    "tag_autocomplete",
    "task_status_show",
    "term_translation_show",
    "get_site_user",
    "status_show",
    "vocabulary_list",
    "vocabulary_show",
    "user_follower_count",
    "dataset_follower_count",
    "group_follower_count",
    "organization_follower_count",
    "user_follower_list",
    "dataset_follower_list",
    "group_follower_list",
    "organization_follower_list",
    "am_following_user",
    "am_following_dataset",
    "am_following_group",
    "followee_count",
    "user_followee_count",
    "dataset_followee_count",
    "group_followee_count",
    "organization_followee_count",
    "followee_list",
    "user_followee_list",
    "dataset_followee_list",
    "group_followee_list",
    "organization_followee_list",
    "member_roles_list",
    "help_show",
    "config_option_show",
    "config_option_list",
    "job_list",
    "job_show",
    "api_token_list",
    // Named in prose ("Actions whose names are known but whose parameters are mostly absent").
    "package_create",
    "resource_create",
    "resource_patch",
    "resource_update",
    "api_token_create",
    "config_option_update",
    "package_relationship_create",
    // Actions listed in an older release (recently_changed_packages_activity_list and
    // dashboard_activity_list are also named in the current release's prose).
    "site_read",
    "revision_list",
    "package_revision_list",
    "group_revision_list",
    "organization_revision_list",
    "revision_show",
    "resource_status_show",
    "user_activity_list",
    "package_activity_list",
    "group_activity_list",
    "organization_activity_list",
    "recently_changed_packages_activity_list",
    "activity_detail_list",
    "user_activity_list_html",
    "package_activity_list_html",
    "group_activity_list_html",
    "recently_changed_packages_activity_list_html",
    "organization_activity_list_html",
    "dashboard_activity_list",
    "dashboard_activity_list_html",
    "dashboard_new_activities_count",
    // "related item show" and "related item list": the reference does not show their names;
    // these are CKAN's (where the reference says "not shown", CKAN's source decides).
    "related_show",
    "related_list",
];

fn repo_file(relative: &str) -> (PathBuf, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    (path, text)
}

/// The actions listed in `docs/NOT-BUILT.md`, in file order (duplicates kept).
///
/// Under every `##` heading but `## Not actions`, a list item must be exactly
/// ``- `action_name` ``; anything else is reported, so the list stays machine-readable.
fn not_built_list() -> Vec<String> {
    let (path, text) = repo_file("docs/NOT-BUILT.md");
    let mut listed = Vec::new();
    let mut malformed = Vec::new();
    let mut in_not_actions = false;
    for (number, line) in text.lines().enumerate() {
        if let Some(heading) = line.strip_prefix("## ") {
            in_not_actions = heading.trim() == "Not actions";
            continue;
        }
        if in_not_actions || !line.starts_with("- ") {
            continue;
        }
        let name = line
            .strip_prefix("- `")
            .and_then(|rest| rest.strip_suffix('`'))
            .filter(|name| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            });
        match name {
            Some(name) => listed.push(name.to_string()),
            None => malformed.push(format!("line {}: {line}", number + 1)),
        }
    }
    assert!(
        malformed.is_empty(),
        "{}: list items outside `## Not actions` must be exactly \"- `action_name`\":\n{}",
        path.display(),
        malformed.join("\n")
    );
    // Every reference action is built since issue 12: the list may be empty.
    listed
}

/// The `actions` of the registry snapshot (an insta file: a `---` header, then JSON).
fn registered_actions() -> BTreeSet<String> {
    let (path, text) =
        repo_file("tests/integration/snapshots/integration__registry__registered_extensions.snap");
    let json = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map(|(_, json)| json)
        .unwrap_or_else(|| panic!("{}: no insta header", path.display()));
    let summary: serde_json::Value = serde_json::from_str(json)
        .unwrap_or_else(|e| panic!("{}: not JSON after the header: {e}", path.display()));
    let actions: BTreeSet<String> = summary["actions"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no \"actions\" list", path.display()))
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| panic!("{}: an action that is not a string", path.display()))
                .to_string()
        })
        .collect();
    assert!(
        !actions.is_empty(),
        "{}: no action registered",
        path.display()
    );
    actions
}

fn reference_actions() -> BTreeSet<&'static str> {
    let set: BTreeSet<&str> = REFERENCE_ACTIONS.iter().copied().collect();
    assert_eq!(
        set.len(),
        REFERENCE_ACTIONS.len(),
        "REFERENCE_ACTIONS names an action twice"
    );
    set
}

#[test]
fn no_action_listed_as_not_built_is_registered() {
    let registered = registered_actions();
    let built_but_listed: Vec<String> = not_built_list()
        .into_iter()
        .filter(|a| registered.contains(a))
        .collect();
    assert!(
        built_but_listed.is_empty(),
        "docs/NOT-BUILT.md lists actions that are registered (built): {}. Remove them from the \
         list, and say in the other docs that they are built.",
        built_but_listed.join(", ")
    );
}

#[test]
fn every_unregistered_reference_action_is_listed_as_not_built() {
    let registered = registered_actions();
    let listed: BTreeSet<String> = not_built_list().into_iter().collect();
    let missing: Vec<&str> = reference_actions()
        .into_iter()
        .filter(|a| !registered.contains(*a) && !listed.contains(*a))
        .collect();
    assert!(
        missing.is_empty(),
        "actions of the Action API v3 reference that are neither registered nor listed in \
         docs/NOT-BUILT.md: {}. List each under its family.",
        missing.join(", ")
    );
}

#[test]
fn the_list_names_only_reference_actions_each_once() {
    let reference = reference_actions();
    let listed = not_built_list();
    let unknown: Vec<&str> = listed
        .iter()
        .map(String::as_str)
        .filter(|a| !reference.contains(a))
        .collect();
    assert!(
        unknown.is_empty(),
        "docs/NOT-BUILT.md lists actions the Action API v3 reference does not name (a typo, or \
         one to add to REFERENCE_ACTIONS here): {}",
        unknown.join(", ")
    );
    let mut seen = BTreeSet::new();
    let twice: BTreeSet<&str> = listed
        .iter()
        .map(String::as_str)
        .filter(|a| !seen.insert(*a))
        .collect();
    assert!(
        twice.is_empty(),
        "docs/NOT-BUILT.md lists these actions more than once: {}",
        twice.into_iter().collect::<Vec<_>>().join(", ")
    );
}

#[test]
fn the_list_counts_the_reference_actions_right() {
    let (path, text) = repo_file("docs/NOT-BUILT.md");
    let text = text.replace('\n', " ");
    let count: usize = text
        .split("That is ")
        .nth(1)
        .and_then(|rest| rest.split(" actions in all").next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{} says \"That is N actions in all\"", path.display()));
    assert_eq!(
        count,
        reference_actions().len(),
        "{} counts the reference's actions",
        path.display()
    );
}
