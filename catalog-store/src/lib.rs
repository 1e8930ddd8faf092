//! The catalog's store: the model types every layer shares, the repository (the row types of
//! the core tables and the typed functions that read and write them), the migrations, and the
//! bottom of the house (errors, configuration, time, JSON text, credentials, extension-point
//! records). It depends on nothing else of the catalog.
//!
//! Queries are written once in portable SQL with `$N` placeholders and run on whatever
//! connection the caller holds (an action's transaction); ids and timestamps are TEXT, JSON
//! documents are TEXT. Only the migration files differ per backend.
//!
//! Plugins reach this crate as `catalog_framework::store`.
#![forbid(unsafe_code)]

mod collaborator;
pub mod config;
pub mod error;
mod group;
pub mod identity;
mod job;
pub mod json;
mod member;
pub mod model;
mod package;
mod refs;
pub mod registration;
mod relationship;
mod rows;
mod store;
mod tag;
mod task_status;
pub mod time;
mod user;

pub use model::{Migration, Params, PluginList, Principal};
pub use registration::{Registration, RegistryClash};
pub use store::{Backend, Store, WriterGuard};

// The repository: per table family, its row types and the functions that read and write them.
pub use collaborator::{
    delete_collaborator, package_collaborators, upsert_collaborator, user_collaboration_rows,
    CollaboratorRow,
};
pub use group::{
    active_groups, active_groups_of_kind, active_groups_of_type, clear_group_parents, group_by_ref,
    group_by_ref_locked, group_children, group_public_dataset_count, group_titles_by_name,
    groups_by_ids, hierarchy_edges, insert_group, mark_group_deleted, package_group_ids,
    purge_group, update_group, GroupRow, GroupWrite, GROUP_COLS,
};
pub use job::{
    claim_job, clear_queued_jobs, count_queued_jobs, delete_job, enqueue_job, fail_job, finish_job,
    job_by_id, job_due, job_heartbeat, job_now, job_queues, job_state, job_time, prune_jobs,
    queued_jobs, release_job, requeue_stale_jobs, retry_delay, stale_jobs_exist, FailOutcome,
    JobRow, NewJob, StaleJobs, DEFAULT_QUEUE, STALE_MESSAGE,
};
pub use member::{
    delete_active_member, group_memberships, package_member_counts, upsert_member, GroupMembership,
    MemberUpsert,
};
pub use package::{
    active_packages_like, active_resource_package_id, clear_package_groups,
    clear_package_memberships, created_package_count, created_package_ids,
    detach_package_from_organization, mark_package_deleted, organization_package_ids,
    package_bundle_by_ref, package_bundles_by_ids, package_by_ref, package_by_ref_locked,
    package_data, package_name_holder, package_plugin_data, package_summaries,
    public_package_documents, public_package_names, purge_package, recently_modified_package_ids,
    rename_deleted_package_to_id, replace_package_tags, replace_resource_rows, resource_package_id,
    set_package_data, set_package_organization, set_package_plugin_data, write_package_row,
    CachedPackage, CreatedScope, PackageBundle, PackageRow, PackageWrite, PublicPackageDocument,
    PACKAGE_COLS,
};
pub use refs::{
    deleted_refs, group_name_taken, group_public_package_refs, group_ref,
    organization_public_package_refs, package_ref, public_package_refs, subquery,
    tag_public_package_refs, DeletedRef,
};
pub use relationship::{
    purge_relationships_of, relationship_by_triple, relationships, relationships_of,
    save_relationship, RelationshipRow,
};
pub use rows::{new_id, placeholders, placeholders_from, Lock, RowExt, ROW_BATCH};
pub use tag::{
    delete_tag, delete_vocabulary, ensure_free_tags, free_tag_by_ref, free_tags_by_name,
    insert_tag, insert_vocabulary, rename_vocabulary, tag_by_ref, tags_by_name, vocabularies,
    vocabulary_by_ref, vocabulary_tags, VocabularyRow,
};
pub use task_status::{
    delete_task_status, save_task_status, save_term_translation, set_system_info, system_info,
    task_status_by_id, task_status_by_key, task_statuses_of, term_translations, TaskStatusRow,
    TermTranslation,
};
pub use user::{
    api_token_owner, delete_api_token, group_user_members, insert_api_token, insert_user,
    mark_user_deleted, principal_for_token, set_user_plugin_extras, set_user_reset_key,
    update_user, user_api_tokens, user_by_ref, user_by_ref_locked, user_collaborations,
    user_memberships, user_reset_key, users_where, ApiTokenRow, UserRow, UserWrite, USER_COLS,
};

#[doc(hidden)]
pub mod __private {
    pub use crate::registration::{collect, ExtensionPoint, Registration};
    pub use inventory;
}
