//! CKAN's core actions as a plugin: datasets, resources, organizations, groups, members,
//! collaborators, users, API tokens, tags and site actions.
#![forbid(unsafe_code)]

pub mod admin;
mod collaborator;
mod dictize;
pub mod formats;
mod group;
pub mod licenses;
mod package;
mod resource;
mod search;
mod search_actions;
mod site;
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
            catalog_framework::__private::inventory::submit! {
                catalog_framework::registry::ActionRegistration {
                    name: stringify!($name), priority: 0, build: || Box::new($name)
                }
            }
        )*
    };
    (@read read) => { true };
    (@read write) => { false };
}

actions! {
    read package_show => package::package_show, "Return the metadata of a dataset (package) and its resources.\n\n:param id: the id or name of the dataset\n:rtype: dictionary";
    write package_create => package::package_create, "Create a new dataset (package). Returns the created dataset.";
    write package_update => package::package_update, "Update a dataset (package), replacing its fields. Absent tags and extras are removed; absent resources and groups are kept.";
    write package_patch => package::package_patch, "Patch a dataset: only the given fields change.";
    write package_delete => package::package_delete, "Delete a dataset (its state becomes `deleted`).";
    write dataset_purge => package::dataset_purge, "Purge a dataset: remove it and everything it owns permanently. Sysadmins only.";
    read package_search => search::package_search, "Search for datasets with CKAN's query language.\n\n:param q: the query (Solr syntax; default `*:*`)\n:param fq: a filter query\n:param fq_list: more filter queries\n:param sort: e.g. `metadata_modified desc` (default `score desc, metadata_modified desc`)\n:param rows: results per page (default 10, at most catalog.search.rows_max)\n:param start: offset of the first result\n:param facet.field: fields to facet on (a list)\n:param facet.limit: values per facet (default 50; negative for all)\n:param facet.mincount: least count of a facet value (default 1)\n:param include_private: include the private datasets the caller may read\n:param include_drafts: include drafts the caller may read\n:param include_deleted: include deleted datasets (when they are indexed)\n:rtype: dictionary with count, results, facets, search_facets and sort";
    read search_index_rebuild => search::search_index_rebuild, "Rebuild the search index online and return {indexed, failed}. Sysadmins only.";
    read package_list => package::package_list, "Return the names of the site's active public datasets.\n\n:param limit: optional\n:param offset: optional";
    read current_package_list_with_resources => package::current_package_list_with_resources, "Return the most recently modified datasets with their resources.";
    write package_owner_org_update => package::package_owner_org_update, "Move a dataset to another organization. Sysadmins only.";
    write bulk_update_private => package::bulk_update_private, "Make datasets of an organization private.";
    write bulk_update_public => package::bulk_update_public, "Make datasets of an organization public.";
    write bulk_update_delete => package::bulk_update_delete, "Delete datasets of an organization.";
    write resource_create => resource::resource_create, "Add a resource to a dataset. `upload` in a multipart body stores a file.";
    read resource_show => resource::resource_show, "Return the metadata of a resource.";
    write resource_update => resource::resource_update, "Update a resource, replacing its fields.";
    write resource_patch => resource::resource_patch, "Patch a resource: only the given fields change.";
    write resource_delete => resource::resource_delete, "Delete a resource from its dataset.";
    write package_resource_reorder => resource::package_resource_reorder, "Reorder the resources of a dataset.";
    read group_show => group::group_show, "Return the details of a group.";
    read organization_show => group::organization_show, "Return the details of an organization.";
    write group_create => group::group_create, "Create a group. The creator becomes its admin.";
    write organization_create => group::organization_create, "Create an organization. The creator becomes its admin.";
    write group_update => group::group_update, "Update a group.";
    write organization_update => group::organization_update, "Update an organization.";
    write group_patch => group::group_patch, "Patch a group.";
    write organization_patch => group::organization_patch, "Patch an organization.";
    write group_delete => group::group_delete, "Delete a group.";
    write organization_delete => group::organization_delete, "Delete an organization.";
    write group_purge => group::group_purge, "Purge a group. Sysadmins only.";
    write organization_purge => group::organization_purge, "Purge an organization. Sysadmins only.";
    read group_list => group::group_list, "Return the names (or dicts with all_fields) of the site's groups.";
    read organization_list => group::organization_list, "Return the names (or dicts with all_fields) of the site's organizations.";
    read organization_list_for_user => group::organization_list_for_user, "Return the organizations where a user has a permission.";
    read group_list_authz => group::group_list_authz, "Return the groups the caller may add datasets to.";
    write member_create => group::member_create, "Make an object (user, dataset or group) a member of a group.";
    write member_delete => group::member_delete, "Remove an object from a group.";
    read member_list => group::member_list, "Return the members of a group as (id, type, capacity) triples.";
    write group_member_create => group::group_member_create, "Make a user a member of a group with a role.";
    write organization_member_create => group::organization_member_create, "Make a user a member of an organization with a role.";
    write group_member_delete => group::group_member_delete, "Remove a user from a group.";
    write organization_member_delete => group::organization_member_delete, "Remove a user from an organization.";
    read member_roles_list => group::member_roles_list, "Return the roles a member may have.";
    write package_collaborator_create => collaborator::package_collaborator_create, "Make a user a collaborator of a dataset.";
    write package_collaborator_delete => collaborator::package_collaborator_delete, "Remove a collaborator from a dataset.";
    read package_collaborator_list => collaborator::package_collaborator_list, "Return the collaborators of a dataset.";
    read package_collaborator_list_for_user => collaborator::package_collaborator_list_for_user, "Return the datasets a user collaborates on.";
    write user_create => user::user_create, "Create a user.";
    read user_show => user::user_show, "Return a user account.";
    read user_list => user::user_list, "Return the site's users.";
    write user_update => user::user_update, "Update a user account.";
    write user_patch => user::user_patch, "Patch a user account.";
    write user_delete => user::user_delete, "Delete a user. Sysadmins only.";
    write api_token_create => user::api_token_create, "Create an API token for a user. The token is shown only once.";
    write api_token_revoke => user::api_token_revoke, "Revoke an API token (by `token` or `jti`).";
    read api_token_list => user::api_token_list, "Return a user's API tokens, oldest first.";
    read tag_list => search_actions::tag_list, "Return the site's free tags (or a vocabulary's tags).\n\n:param query: only tags whose names contain this (case-insensitive); `q` is an alias\n:param vocabulary_id: the vocabulary's id or name\n:param all_fields: return tag dicts instead of names\n:rtype: list";
    read tag_search => search_actions::tag_search, "Return the free tags whose names contain every given term (case-insensitive).\n\n:param query: a string or a list of strings (`q` is an alias)\n:param vocabulary_id: search this vocabulary's tags instead\n:param limit: optional\n:param offset: optional\n:rtype: dictionary with count and results";
    read tag_autocomplete => search_actions::tag_autocomplete, "Return the names of the tags that contain a string (as tag_search).\n\n:param query: the string to search for\n:param vocabulary_id: optional\n:param limit: optional\n:param offset: optional\n:rtype: list of strings";
    read resource_search => search_actions::resource_search, "Search the resources of public datasets.\n\n:param query: `field:term` or a list of them (all must match); `hash` is a prefix match, text fields a case-insensitive substring match, `size` and dates exact\n:param order_by: a resource field\n:param offset: optional\n:param limit: optional\n:rtype: dictionary with count and results";
    read format_autocomplete => search_actions::format_autocomplete, "Return the resource formats that contain a string, most used first.\n\n:param q: the string to search for\n:param limit: optional (default 5)\n:rtype: list of strings";
    read package_autocomplete => search_actions::package_autocomplete, "Return the datasets whose name or title contains a string.\n\n:param q: the string to search for\n:param limit: optional (default 10)\n:rtype: list of dictionaries (name, title, match_field, match_displayed)";
    read user_autocomplete => search_actions::user_autocomplete, "Return the users whose name or full name contains a string.\n\n:param q: the string to search for\n:param limit: optional (default 20)\n:param ignore_self: leave the caller out\n:rtype: list of dictionaries (id, name, fullname)";
    read group_autocomplete => search_actions::group_autocomplete, "Return the groups whose name or title contains a string.\n\n:param q: the string to search for\n:param limit: optional (default 20)\n:rtype: list of dictionaries (id, name, title)";
    read organization_autocomplete => search_actions::organization_autocomplete, "Return the organizations whose name or title contains a string.\n\n:param q: the string to search for\n:param limit: optional (default 20)\n:rtype: list of dictionaries (id, name, title)";
    read group_package_show => search_actions::group_package_show, "Return the datasets of a group.\n\n:param id: the group's id or name\n:param limit: optional (default 10)\n:rtype: list of dictionaries";
    read tag_show => site::tag_show, "Return a tag.";
    read status_show => site::status_show, "Return a dict describing the site.";
    read site_read => site::site_read, "Return true if the caller may read the site.";
    read license_list => site::license_list, "Return the licenses available for datasets.";
    read help_show => site::help_show, "Return the help string of an action.";
}

fn routes() -> axum::Router<AppState> {
    axum::Router::new().route(
        "/dataset/{id}/resource/{resource_id}/download/{filename}",
        axum::routing::get(resource::download),
    )
}

register_routes!("resource_download", routes);
