//! CKAN's core actions as a plugin: datasets, resources, organizations, groups, members,
//! collaborators, users, API tokens, tags, background jobs and site actions.
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
//! - The job handler `test_job` (what `catalog jobs test` enqueues) is `job/test_job.rs`.
//!
//! # Shared code
//!
//! What the actions of one family share is in `<family>/mod.rs` (the dataset write path in
//! `package/mod.rs`, the group dict and counts in `group/mod.rs`). What several families share
//! is in a crate-level module: `dictize` (stored records to CKAN's dicts), `formats`,
//! `licenses`, `ids` (`new_id`), `membership` (`upsert_member`), `search` (the engine of
//! `package_search`, which groups and `tag_show` search through too), `lookup` (`ILIKE`
//! matching and parameters of the lookup actions, an index field's values over the readable
//! datasets) and `shapes` (parameter types the framework lacks). `admin` is what the CLI and
//! tests call.
//!
//! Families import one another one way only: `group` → `package` (an organization's datasets
//! on delete), `member` → `group` (`kind`), `resource` → `package` (resources are written
//! through `package_update`), `user` → `package` (`user_show`'s datasets), `user` →
//! `api_token` (`user_create`'s token). `package`, `api_token`, `collaborator`, `job`, `tag` and
//! `site` import no family. `grep -rn "crate::" src` shows them.
//!
//! Every action is registered below, by family and in file order, with the framework's
//! `register_typed_actions!`: its params struct is declared with `action_params!` beside the
//! fn and its doc comment is the help text; its fields are the parameters CKAN documents. A
//! parameter CKAN checks before anything else is a typed field (`String`, `Option<Natural>` …:
//! checked, all at once, before the fn runs); one CKAN reads later (after the access check,
//! or one error at a time) is a `Later<T>` (or a `Raw`, when a null differs from an absent
//! key) that the fn decodes where CKAN does; `shapes` has the types of the shapes the
//! framework has none for (CKAN's loose reads: `Scalar`, `StrOrNum` …). Actions that take CKAN's data dict whole
//! (create/update/patch, `package_search`, the vocabulary, task status and term translation
//! writes) read it from the struct's `__extras`, which an entity dict's validators (the
//! dataset schema, the group and user checks) or the query parser then check: their fields
//! are `InDict`, which names a key for the OpenAPI document and leaves it in the dict.
#![forbid(unsafe_code)]

/// Declares the params struct of an action that takes an entity's dict whole, read from
/// `__extras` and validated there: `[keys]` are `InDict` fields that name the dict's documented
/// keys for the OpenAPI schema and leave them in the dict, after the action's own fields.
/// Each family wraps it with its dict's keys (`dataset_dict_params!` …).
macro_rules! dict_params {
    ([$($keys:tt)*] $(#[doc = $doc:literal])* $name:ident { $($own:tt)* }) => {
        action_params! {
            $(#[doc = $doc])*
            pub struct $name {
                $($own)*
                $($keys)*
            }
        }
    };
}
pub(crate) use dict_params;

pub mod admin;
mod api_token;
mod collaborator;
mod config_option;
mod dictize;
pub mod formats;
mod group;
mod ids;
mod job;
pub mod licenses;
mod lookup;
mod member;
mod membership;
mod package;
mod relationship;
mod resource;
mod search;
mod shapes;
mod site;
mod tag;
mod task_status;
mod term_translation;
mod user;
mod vocabulary;

use catalog_framework::prelude::*;
use catalog_framework::typed::InDict;

register_plugin!("core");

// api_token/
register_typed_actions! {
    write api_token_create(api_token::create::ApiTokenCreateParams) => api_token::create::api_token_create;
    read api_token_list(api_token::list::ApiTokenListParams) => api_token::list::api_token_list;
    write api_token_revoke(api_token::revoke::ApiTokenRevokeParams) => api_token::revoke::api_token_revoke;
}

// collaborator/
register_typed_actions! {
    write package_collaborator_create(collaborator::create::PackageCollaboratorCreateParams) => collaborator::create::package_collaborator_create;
    write package_collaborator_delete(collaborator::delete::PackageCollaboratorDeleteParams) => collaborator::delete::package_collaborator_delete;
    read package_collaborator_list(collaborator::list::PackageCollaboratorListParams) => collaborator::list::package_collaborator_list;
    read package_collaborator_list_for_user(collaborator::list_for_user::PackageCollaboratorListForUserParams) => collaborator::list_for_user::package_collaborator_list_for_user;
}

// config_option/
register_typed_actions! {
    read config_option_list(config_option::list::ConfigOptionListParams) => config_option::list::config_option_list;
    read config_option_show(config_option::show::ConfigOptionShowParams) => config_option::show::config_option_show;
    write config_option_update(config_option::update::ConfigOptionUpdateParams) => config_option::update::config_option_update;
}

// group/
register_typed_actions! {
    read group_autocomplete(group::autocomplete::GroupAutocompleteParams) => group::autocomplete::group_autocomplete;
    read organization_autocomplete(group::autocomplete::OrganizationAutocompleteParams) => group::autocomplete::organization_autocomplete;
    read group_list(group::list::GroupListParams) => group::list::group_list;
    read organization_list(group::list::OrganizationListParams) => group::list::organization_list;
    read group_list_authz(group::list_authz::GroupListAuthzParams) => group::list_authz::group_list_authz;
    read organization_list_for_user(group::list_for_user::OrganizationListForUserParams) => group::list_for_user::organization_list_for_user;
    read group_package_show(group::package_show::GroupPackageShowParams) => group::package_show::group_package_show;
    read group_show(group::show::GroupShowParams) => group::show::group_show;
    read organization_show(group::show::OrganizationShowParams) => group::show::organization_show;
}
register_typed_actions! {
    write group_delete(group::delete::GroupDeleteParams) => group::delete::group_delete;
    write organization_delete(group::delete::OrganizationDeleteParams) => group::delete::organization_delete;
    write group_purge(group::delete::GroupPurgeParams) => group::delete::group_purge;
    write organization_purge(group::delete::OrganizationPurgeParams) => group::delete::organization_purge;
}
register_typed_actions! {
    write group_create(group::create::GroupCreateParams) => group::create::group_create;
    write organization_create(group::create::OrganizationCreateParams) => group::create::organization_create;
    write group_update(group::update::GroupUpdateParams) => group::update::group_update;
    write organization_update(group::update::OrganizationUpdateParams) => group::update::organization_update;
    write group_patch(group::update::GroupPatchParams) => group::update::group_patch;
    write organization_patch(group::update::OrganizationPatchParams) => group::update::organization_patch;
}

// job/
register_typed_actions! {
    write job_cancel(job::cancel::JobCancelParams) => job::cancel::job_cancel;
    write job_clear(job::clear::JobClearParams) => job::clear::job_clear;
    read job_list(job::list::JobListParams) => job::list::job_list;
    read job_show(job::show::JobShowParams) => job::show::job_show;
}

// member/
register_typed_actions! {
    write member_create(member::create::MemberCreateParams) => member::create::member_create;
    write group_member_create(member::create::GroupMemberCreateParams) => member::create::group_member_create;
    write organization_member_create(member::create::OrganizationMemberCreateParams) => member::create::organization_member_create;
    write member_delete(member::delete::MemberDeleteParams) => member::delete::member_delete;
    write group_member_delete(member::delete::GroupMemberDeleteParams) => member::delete::group_member_delete;
    write organization_member_delete(member::delete::OrganizationMemberDeleteParams) => member::delete::organization_member_delete;
    read member_list(member::list::MemberListParams) => member::list::member_list;
    read member_roles_list(member::roles_list::MemberRolesListParams) => member::roles_list::member_roles_list;
}

// package/
register_typed_actions! {
    read package_autocomplete(package::autocomplete::PackageAutocompleteParams) => package::autocomplete::package_autocomplete;
    write package_delete(package::delete::PackageDeleteParams) => package::delete::package_delete;
    write dataset_purge(package::delete::DatasetPurgeParams) => package::delete::dataset_purge;
    read package_list(package::list::PackageListParams) => package::list::package_list;
    read package_show(package::show::PackageShowParams) => package::show::package_show;
}
register_typed_actions! {
    write bulk_update_private(package::bulk_update::BulkUpdatePrivateParams) => package::bulk_update::bulk_update_private;
    write bulk_update_public(package::bulk_update::BulkUpdatePublicParams) => package::bulk_update::bulk_update_public;
    write bulk_update_delete(package::bulk_update::BulkUpdateDeleteParams) => package::bulk_update::bulk_update_delete;
    read current_package_list_with_resources(package::list::CurrentPackageListWithResourcesParams) => package::list::current_package_list_with_resources;
    write package_owner_org_update(package::owner_org_update::PackageOwnerOrgUpdateParams) => package::owner_org_update::package_owner_org_update;
    write package_revise(package::revise::PackageReviseParams) => package::revise::package_revise;
}
register_typed_actions! {
    write package_create(package::create::PackageCreateParams) => package::create::package_create;
    read package_search(package::search::PackageSearchParams) => package::search::package_search;
    maintenance search_index_rebuild(package::search::SearchIndexRebuildParams) => package::search::search_index_rebuild;
    write package_update(package::update::PackageUpdateParams) => package::update::package_update;
    write package_patch(package::update::PackagePatchParams) => package::update::package_patch;
}

// resource/
register_typed_actions! {
    write resource_delete(resource::delete::ResourceDeleteParams) => resource::delete::resource_delete;
    read format_autocomplete(resource::format_autocomplete::FormatAutocompleteParams) => resource::format_autocomplete::format_autocomplete;
    write package_resource_reorder(resource::reorder::PackageResourceReorderParams) => resource::reorder::package_resource_reorder;
    read resource_search(resource::search::ResourceSearchParams) => resource::search::resource_search;
    read resource_show(resource::show::ResourceShowParams) => resource::show::resource_show;
}
register_typed_actions! {
    write resource_create(resource::create::ResourceCreateParams) => resource::create::resource_create;
    write resource_update(resource::update::ResourceUpdateParams) => resource::update::resource_update;
    write resource_patch(resource::update::ResourcePatchParams) => resource::update::resource_patch;
}

// site/
register_typed_actions! {
    read get_site_user(site::get_site_user::GetSiteUserParams) => site::get_site_user::get_site_user;
    read help_show(site::help_show::HelpShowParams) => site::help_show::help_show;
    read license_list(site::license_list::LicenseListParams) => site::license_list::license_list;
    read site_read(site::read::SiteReadParams) => site::read::site_read;
    read status_show(site::status_show::StatusShowParams) => site::status_show::status_show;
}

// tag/
register_typed_actions! {
    read tag_list(tag::list::TagListParams) => tag::list::tag_list;
    read tag_search(tag::search::TagSearchParams) => tag::search::tag_search;
    read tag_autocomplete(tag::search::TagAutocompleteParams) => tag::search::tag_autocomplete;
    read tag_show(tag::show::TagShowParams) => tag::show::tag_show;
    write tag_create(tag::create::TagCreateParams) => tag::create::tag_create;
    write tag_delete(tag::delete::TagDeleteParams) => tag::delete::tag_delete;
}

// relationship/
register_typed_actions! {
    write package_relationship_create(relationship::create::PackageRelationshipCreateParams) => relationship::create::package_relationship_create;
    write package_relationship_delete(relationship::delete::PackageRelationshipDeleteParams) => relationship::delete::package_relationship_delete;
    read package_relationships_list(relationship::list::PackageRelationshipsListParams) => relationship::list::package_relationships_list;
    write package_relationship_update(relationship::update::PackageRelationshipUpdateParams) => relationship::update::package_relationship_update;
}

// task_status/
register_typed_actions! {
    write task_status_delete(task_status::delete::TaskStatusDeleteParams) => task_status::delete::task_status_delete;
    read task_status_show(task_status::show::TaskStatusShowParams) => task_status::show::task_status_show;
    read resource_status_show(task_status::show::ResourceStatusShowParams) => task_status::show::resource_status_show;
    write task_status_update(task_status::update::TaskStatusUpdateParams) => task_status::update::task_status_update;
    write task_status_update_many(task_status::update::TaskStatusUpdateManyParams) => task_status::update::task_status_update_many;
}

// term_translation/
register_typed_actions! {
    read term_translation_show(term_translation::show::TermTranslationShowParams) => term_translation::show::term_translation_show;
    write term_translation_update(term_translation::update::TermTranslationUpdateParams) => term_translation::update::term_translation_update;
    write term_translation_update_many(term_translation::update::TermTranslationUpdateManyParams) => term_translation::update::term_translation_update_many;
}

// vocabulary/
register_typed_actions! {
    write vocabulary_create(vocabulary::create::VocabularyCreateParams) => vocabulary::create::vocabulary_create;
    write vocabulary_delete(vocabulary::delete::VocabularyDeleteParams) => vocabulary::delete::vocabulary_delete;
    read vocabulary_list(vocabulary::list::VocabularyListParams) => vocabulary::list::vocabulary_list;
    read vocabulary_show(vocabulary::show::VocabularyShowParams) => vocabulary::show::vocabulary_show;
    write vocabulary_update(vocabulary::update::VocabularyUpdateParams) => vocabulary::update::vocabulary_update;
}

// user/
register_typed_actions! {
    read user_autocomplete(user::autocomplete::UserAutocompleteParams) => user::autocomplete::user_autocomplete;
    write user_delete(user::delete::UserDeleteParams) => user::delete::user_delete;
    read user_list(user::list::UserListParams) => user::list::user_list;
    read user_show(user::show::UserShowParams) => user::show::user_show;
    // Registered without a transaction: it mails before it writes (see `user/invite.rs`).
    maintenance user_invite(user::invite::UserInviteParams) => user::invite::user_invite;
}
register_typed_actions! {
    write user_create(user::create::UserCreateParams) => user::create::user_create;
    write user_update(user::update::UserUpdateParams) => user::update::user_update;
    write user_patch(user::update::UserPatchParams) => user::update::user_patch;
}

fn routes() -> axum::Router<AppState> {
    axum::Router::new().route(
        "/dataset/{id}/resource/{resource_id}/download/{filename}",
        axum::routing::get(resource::download::download),
    )
}

register_routes!("resource_download", routes);
