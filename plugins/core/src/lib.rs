//! CKAN's core actions as a plugin: datasets, resources, organizations, groups, members,
//! collaborators, users, API tokens, tags and site actions.
//!
//! # Where an action lives
//!
//! Action `<family>_<rest>` is in `src/<family>/<rest>.rs`, with its tests: `package_show` in
//! `package/show.rs`, `resource_create` in `resource/create.rs`, `tag_list` in `tag/list.rs`,
//! `api_token_create` in `api_token/create.rs`, `member_roles_list` in `member/roles_list.rs`.
//! The exceptions:
//!
//! - `organization_<rest>` is beside its twin `group_<rest>` in `group/<rest>.rs`
//!   (`organization_show` in `group/show.rs`): the two are one implementation with `is_org`.
//!   `organization_list_for_user`, which has no twin, is `group/list_for_user.rs`.
//! - `group_member_create` and `organization_member_create` are in `member/create.rs`,
//!   `group_member_delete` and `organization_member_delete` in `member/delete.rs`.
//! - `<family>_patch` is in the file of its `<family>_update` (`package/update.rs` holds
//!   `package_update` and `package_patch`); `<family>_purge` is beside its `<family>_delete`,
//!   and `dataset_purge` in `package/delete.rs`.
//! - `bulk_update_private`, `bulk_update_public` and `bulk_update_delete` are in
//!   `package/bulk_update.rs`; `current_package_list_with_resources` in `package/list.rs`;
//!   `package_search` and `search_index_rebuild` in `package/search.rs`;
//!   `package_owner_org_update` in `package/owner_org_update.rs`.
//! - `package_resource_reorder` is `resource/reorder.rs`; `package_collaborator_<rest>` is
//!   `collaborator/<rest>.rs`.
//! - The autocompletes are `<family>/autocomplete.rs` (`organization_autocomplete` in
//!   `group/autocomplete.rs`), but `format_autocomplete` is `resource/format_autocomplete.rs`
//!   and `tag_autocomplete` is with `tag_search` in `tag/search.rs`. (`group_package_show` in
//!   `group/package_show.rs` and `resource_search` in `resource/search.rs` follow the rule.)
//! - The site actions are one file each in `site/`: `status_show.rs`, `read.rs` (`site_read`),
//!   `license_list.rs`, `help_show.rs`.
//! - The route `resource_download` is `resource/download.rs`.
//!
//! # Shared code
//!
//! What the actions of one family share is in `<family>/mod.rs` (the dataset write path in
//! `package/mod.rs`, the group dict and counts in `group/mod.rs`). What several families share
//! is in a crate-level module: `dictize` (stored records to CKAN's dicts), `formats`,
//! `licenses`, `ids` (`new_id`), `membership` (`upsert_member`), `search` (the engine of
//! `package_search`, which groups and `tag_show` search through too) and `lookup` (`ILIKE`
//! matching and parameters of the lookup actions, an index field's values over the readable
//! datasets). `admin` is what the CLI and tests call.
//!
//! Families import one another one way only: `group` → `package` (an organization's datasets
//! on delete), `member` → `group` (`kind`), `resource` → `package` (resources are written
//! through `package_update`), `user` → `package` (`user_show`'s datasets), `user` →
//! `api_token` (`user_create`'s token). `package`, `api_token`, `collaborator`, `tag` and `site`
//! import no family. `grep -rn "crate::" src` shows them.
//!
//! Every action is registered below, by family and in file order: `typed_actions!` for those
//! with a params struct (declared with `action_params!` beside the fn), `actions!` for the
//! others.
#![forbid(unsafe_code)]

pub mod admin;
mod api_token;
mod collaborator;
mod dictize;
pub mod formats;
mod group;
mod ids;
pub mod licenses;
mod lookup;
mod member;
mod membership;
mod package;
mod resource;
mod search;
mod site;
mod tag;
mod user;

use catalog_framework::prelude::*;

register_plugin!("core");

/// Declares an action struct that forwards to an async fn, and registers it.
macro_rules! actions {
    ($( $kind:ident $name:ident => $f:path, $doc:literal; )*) => {
        $(
            #[allow(non_camel_case_types)]
            struct $name;
            #[async_trait]
            impl Action for $name {
                fn side_effect_free(&self) -> bool {
                    actions!(@read $kind)
                }
                fn doc(&self) -> &'static str {
                    $doc
                }
                async fn run(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Value> {
                    $f(ctx, params).await
                }
            }
            register_action!(stringify!($name), $name);
        )*
    };
    (@read read) => { true };
    (@read write) => { false };
}

/// Declares an action with typed parameters (its help text is the params struct's doc
/// comment), forwarding to an async fn `(ctx, params)`, and registers it.
macro_rules! typed_actions {
    ($( $kind:ident $name:ident($params:ty) => $f:path; )*) => {
        $(
            #[allow(non_camel_case_types)]
            struct $name;
            #[async_trait]
            impl TypedAction for $name {
                type Params = $params;
                const READ: bool = actions!(@read $kind);
                async fn run(&self, ctx: &mut ActionContext, params: $params) -> CkanResult<Value> {
                    $f(ctx, params).await
                }
            }
            register_action!(stringify!($name), Typed($name));
        )*
    };
}

// api_token/
typed_actions! {
    read api_token_list(api_token::list::ApiTokenListParams) => api_token::list::api_token_list;
    write api_token_revoke(api_token::revoke::ApiTokenRevokeParams) => api_token::revoke::api_token_revoke;
}
actions! {
    write api_token_create => api_token::create::api_token_create, "Create an API token for a user. The token is shown only once.";
}

// collaborator/
typed_actions! {
    read package_collaborator_list(collaborator::list::PackageCollaboratorListParams) => collaborator::list::package_collaborator_list;
    read package_collaborator_list_for_user(collaborator::list_for_user::PackageCollaboratorListForUserParams) => collaborator::list_for_user::package_collaborator_list_for_user;
}
actions! {
    write package_collaborator_create => collaborator::create::package_collaborator_create, "Make a user a collaborator of a dataset.";
    write package_collaborator_delete => collaborator::delete::package_collaborator_delete, "Remove a collaborator from a dataset.";
}

// group/
typed_actions! {
    read group_autocomplete(group::autocomplete::GroupAutocompleteParams) => group::autocomplete::group_autocomplete;
    read organization_autocomplete(group::autocomplete::OrganizationAutocompleteParams) => group::autocomplete::organization_autocomplete;
    read group_package_show(group::package_show::GroupPackageShowParams) => group::package_show::group_package_show;
    read group_show(group::show::GroupShowParams) => group::show::group_show;
    read organization_show(group::show::OrganizationShowParams) => group::show::organization_show;
}
actions! {
    write group_create => group::create::group_create, "Create a group. The creator becomes its admin.";
    write organization_create => group::create::organization_create, "Create an organization. The creator becomes its admin.";
    write group_delete => group::delete::group_delete, "Delete a group.";
    write organization_delete => group::delete::organization_delete, "Delete an organization.";
    write group_purge => group::delete::group_purge, "Purge a group. Sysadmins only.";
    write organization_purge => group::delete::organization_purge, "Purge an organization. Sysadmins only.";
    read group_list => group::list::group_list, "Return the names (or dicts with all_fields) of the site's groups.";
    read organization_list => group::list::organization_list, "Return the names (or dicts with all_fields) of the site's organizations.";
    read group_list_authz => group::list_authz::group_list_authz, "Return the groups the caller may add datasets to.";
    read organization_list_for_user => group::list_for_user::organization_list_for_user, "Return the organizations where a user has a permission.";
    write group_update => group::update::group_update, "Update a group.";
    write organization_update => group::update::organization_update, "Update an organization.";
    write group_patch => group::update::group_patch, "Patch a group.";
    write organization_patch => group::update::organization_patch, "Patch an organization.";
}

// member/
typed_actions! {
    read member_roles_list(member::roles_list::MemberRolesListParams) => member::roles_list::member_roles_list;
}
actions! {
    write member_create => member::create::member_create, "Make an object (user, dataset or group) a member of a group.";
    write group_member_create => member::create::group_member_create, "Make a user a member of a group with a role.";
    write organization_member_create => member::create::organization_member_create, "Make a user a member of an organization with a role.";
    write member_delete => member::delete::member_delete, "Remove an object from a group.";
    write group_member_delete => member::delete::group_member_delete, "Remove a user from a group.";
    write organization_member_delete => member::delete::organization_member_delete, "Remove a user from an organization.";
    read member_list => member::list::member_list, "Return the members of a group as (id, type, capacity) triples.";
}

// package/
typed_actions! {
    read package_autocomplete(package::autocomplete::PackageAutocompleteParams) => package::autocomplete::package_autocomplete;
    write package_delete(package::delete::PackageDeleteParams) => package::delete::package_delete;
    write dataset_purge(package::delete::DatasetPurgeParams) => package::delete::dataset_purge;
    read package_list(package::list::PackageListParams) => package::list::package_list;
    read package_show(package::show::PackageShowParams) => package::show::package_show;
}
actions! {
    write bulk_update_private => package::bulk_update::bulk_update_private, "Make datasets of an organization private.";
    write bulk_update_public => package::bulk_update::bulk_update_public, "Make datasets of an organization public.";
    write bulk_update_delete => package::bulk_update::bulk_update_delete, "Delete datasets of an organization.";
    write package_create => package::create::package_create, "Create a new dataset (package). Returns the created dataset.";
    read current_package_list_with_resources => package::list::current_package_list_with_resources, "Return the most recently modified datasets with their resources.";
    write package_owner_org_update => package::owner_org_update::package_owner_org_update, "Move a dataset to another organization. Sysadmins only.";
    read package_search => package::search::package_search, "Search for datasets with CKAN's query language.\n\n:param q: the query (Solr syntax; default `*:*`)\n:param fq: a filter query\n:param fq_list: more filter queries\n:param sort: e.g. `metadata_modified desc` (default `score desc, metadata_modified desc`)\n:param rows: results per page (default 10, at most catalog.search.rows_max)\n:param start: offset of the first result\n:param facet.field: fields to facet on (a list)\n:param facet.limit: values per facet (default 50; negative for all)\n:param facet.mincount: least count of a facet value (default 1)\n:param include_private: include the private datasets the caller may read\n:param include_drafts: include drafts the caller may read\n:param include_deleted: include deleted datasets (when they are indexed)\n:rtype: dictionary with count, results, facets, search_facets and sort";
    read search_index_rebuild => package::search::search_index_rebuild, "Rebuild the search index online and return {indexed, failed}. Sysadmins only.";
    write package_update => package::update::package_update, "Update a dataset (package), replacing its fields. Absent tags and extras are removed; absent resources and groups are kept.";
    write package_patch => package::update::package_patch, "Patch a dataset: only the given fields change.";
}

// resource/
typed_actions! {
    read format_autocomplete(resource::format_autocomplete::FormatAutocompleteParams) => resource::format_autocomplete::format_autocomplete;
    read resource_show(resource::show::ResourceShowParams) => resource::show::resource_show;
}
actions! {
    write resource_create => resource::create::resource_create, "Add a resource to a dataset. `upload` in a multipart body stores a file.";
    write resource_delete => resource::delete::resource_delete, "Delete a resource from its dataset.";
    write package_resource_reorder => resource::reorder::package_resource_reorder, "Reorder the resources of a dataset.";
    read resource_search => resource::search::resource_search, "Search the resources of public datasets.\n\n:param query: `field:term` or a list of them (all must match); `hash` is a prefix match, text fields a case-insensitive substring match, `size` and dates exact\n:param order_by: a resource field\n:param offset: optional\n:param limit: optional\n:rtype: dictionary with count and results";
    write resource_update => resource::update::resource_update, "Update a resource, replacing its fields.";
    write resource_patch => resource::update::resource_patch, "Patch a resource: only the given fields change.";
}

// site/
typed_actions! {
    read help_show(site::help_show::HelpShowParams) => site::help_show::help_show;
    read license_list(site::license_list::LicenseListParams) => site::license_list::license_list;
    read site_read(site::read::SiteReadParams) => site::read::site_read;
    read status_show(site::status_show::StatusShowParams) => site::status_show::status_show;
}

// tag/
typed_actions! {
    read tag_list(tag::list::TagListParams) => tag::list::tag_list;
    read tag_autocomplete(tag::search::TagAutocompleteParams) => tag::search::tag_autocomplete;
    read tag_show(tag::show::TagShowParams) => tag::show::tag_show;
}
actions! {
    read tag_search => tag::search::tag_search, "Return the free tags whose names contain every given term (case-insensitive).\n\n:param query: a string or a list of strings (`q` is an alias)\n:param vocabulary_id: search this vocabulary's tags instead\n:param limit: optional\n:param offset: optional\n:rtype: dictionary with count and results";
}

// user/
typed_actions! {
    read user_autocomplete(user::autocomplete::UserAutocompleteParams) => user::autocomplete::user_autocomplete;
    read user_show(user::show::UserShowParams) => user::show::user_show;
}
actions! {
    write user_create => user::create::user_create, "Create a user.";
    write user_delete => user::delete::user_delete, "Delete a user. Sysadmins only.";
    read user_list => user::list::user_list, "Return the site's users.";
    write user_update => user::update::user_update, "Update a user account.";
    write user_patch => user::update::user_patch, "Patch a user account.";
}

fn routes() -> axum::Router<AppState> {
    axum::Router::new().route(
        "/dataset/{id}/resource/{resource_id}/download/{filename}",
        axum::routing::get(resource::download::download),
    )
}

register_routes!("resource_download", routes);
