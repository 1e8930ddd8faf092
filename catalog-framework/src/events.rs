//! Domain events: what changed in the store, fired by the actions that change it (CKAN's
//! `IDomainObjectModification`).
//!
//! An action that changes a dataset, resource, group, organization, member, user or resource
//! view calls [`ActionContext::emit`](crate::context::ActionContext::emit). When the top-level call
//! succeeds, before its transaction commits, every enabled [`EventSubscriber`] sees each event
//! in order through [`EventSubscriber::on_event`], in the same transaction: what it writes
//! commits or rolls back with the change (activity streams are built on this). After the
//! commit, [`EventSubscriber::after_commit`] sees the same events (notifications, caches).
//! Events of a call that fails are dropped with its transaction.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;

use crate::context::{ActionContext, AppState};
use crate::error::CkanResult;

/// The kind of object that changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Entity {
    /// A dataset (CKAN's package) of any type.
    Package,
    /// A resource; its dataset gets a [`Entity::Package`] event as well.
    Resource,
    Group,
    Organization,
    /// A membership: `id` is the group's, `after`/`before` hold the member.
    Member,
    User,
    /// A resource view (the views plugin's); `after` holds the view's row with its
    /// `package_id`.
    ResourceView,
}

/// What happened to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Created,
    Updated,
    /// Its state became `deleted` (it can still be read by those who may).
    Deleted,
    /// It is gone from the store.
    Purged,
}

impl Entity {
    /// The name as events serialize it (`package`, `organization` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Entity::Package => "package",
            Entity::Resource => "resource",
            Entity::Group => "group",
            Entity::Organization => "organization",
            Entity::Member => "member",
            Entity::User => "user",
            Entity::ResourceView => "resource_view",
        }
    }
}

impl Change {
    /// The name as events serialize it (`created`, `updated`, `deleted`, `purged`).
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Created => "created",
            Change::Updated => "updated",
            Change::Deleted => "deleted",
            Change::Purged => "purged",
        }
    }
}

/// One committed change.
#[derive(Debug, Clone, Serialize)]
pub struct DomainEvent {
    pub entity: Entity,
    pub change: Change,
    /// The changed object's id.
    pub id: String,
    /// The id of the user who made the change (`None` for anonymous or internal callers).
    pub actor: Option<String>,
    /// The top-level action that made the change (`package_update`, `resource_create` …).
    pub action: String,
    /// The stored record before the change (absent for a creation).
    pub before: Option<Value>,
    /// The stored record after the change (absent for a purge).
    pub after: Option<Value>,
}

/// Sees the domain events of every successful write.
#[async_trait]
pub trait EventSubscriber: Send + Sync + 'static {
    /// In the writing call's transaction, before it commits. An error rolls the whole call
    /// back and is the call's answer.
    async fn on_event(&self, _ctx: &mut ActionContext, _event: &DomainEvent) -> CkanResult<()> {
        Ok(())
    }

    /// After the commit. The change is durable whatever happens here.
    async fn after_commit(&self, _app: &AppState, _event: &DomainEvent) {}
}

crate::extension_point!(
    /// An [`EventSubscriber`], submitted with [`register_event_subscriber!`](crate::register_event_subscriber).
    pub EventSubscriberRegistration, Box<dyn EventSubscriber>,
    collected("event_subscribers", "event subscriber", listed = false)
);

/// The enabled event subscribers, in name order.
pub fn subscribers(
    app: &crate::context::App,
) -> impl Iterator<Item = &Arc<Box<dyn EventSubscriber>>> {
    app.registry
        .extensions::<EventSubscriberRegistration>()
        .values()
}

/// Registers an [`EventSubscriber`]: `register_event_subscriber!("audit", Audit);`
#[macro_export]
macro_rules! register_event_subscriber {
    ($name:expr, $value:expr) => {
        $crate::register_event_subscriber!($name, $value, priority = 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::__register!(EventSubscriberRegistration, $name, $value, $p);
    };
}
