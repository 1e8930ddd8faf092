#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use catalog_framework::params::{opt_str, positive};
use catalog_framework::prelude::*;
use catalog_framework::register_action;
use catalog_framework::store::time::now_iso;
use catalog_framework::store::RowExt;

/// The plugin: its name, config section and migrations.
pub struct AuditLog;

/// `catalogext.audit_log.*`, read once at start-up.
pub struct AuditSettings {
    /// The most events `audit_log_list` returns.
    pub limit_max: i64,
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: "0001_audit_event",
        sqlite: include_str!("../migrations/sqlite/0001_audit_event.sql"),
        postgres: include_str!("../migrations/postgres/0001_audit_event.sql"),
    },
    Migration {
        version: "0002_audit_event_title",
        sqlite: include_str!("../migrations/sqlite/0002_audit_event_title.sql"),
        postgres: include_str!("../migrations/postgres/0002_audit_event_title.sql"),
    },
];

impl Plugin for AuditLog {
    fn name(&self) -> &'static str {
        "audit_log"
    }

    fn configure(&self, setup: &mut Setup<'_>) -> anyhow::Result<()> {
        let section = setup.section("catalogext.audit_log");
        let limit_max = match section.get("limit_max") {
            None | Some(Value::Null) => 100,
            Some(v) => v
                .as_i64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "catalogext.audit_log.limit_max must be a positive integer, not {v}"
                    )
                })?,
        };
        setup.insert(AuditSettings { limit_max });
        Ok(())
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }
}

register_plugin!(AuditLog);

/// Writes one `audit_event` row per domain event, in the changing call's transaction.
pub struct RecordEvents;

#[async_trait]
impl EventSubscriber for RecordEvents {
    async fn on_event(&self, ctx: &mut ActionContext, event: &DomainEvent) -> CkanResult<()> {
        let record = event.after.as_ref().or(event.before.as_ref());
        let name = record.and_then(|r| r.get("name")).and_then(Value::as_str);
        if event.entity == Entity::Package && name.is_some_and(|n| n.starts_with("forbidden-")) {
            return Err(validation()
                .field("name", "The audit log refuses datasets named forbidden-*")
                .build());
        }
        let title = record.and_then(|r| r.get("title")).and_then(Value::as_str);
        sqlx::query(
            "INSERT INTO audit_event (entity, change, object_id, actor, action, at, title) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(event.entity.as_str())
        .bind(event.change.as_str())
        .bind(&event.id)
        .bind(event.actor.clone())
        .bind(&event.action)
        .bind(now_iso())
        .bind(title.map(str::to_string))
        .execute(ctx.db().await?)
        .await?;
        Ok(())
    }
}

register_event_subscriber!("audit_log", RecordEvents);

/// `audit_log_list`: the newest events first.
pub struct AuditLogList;

#[async_trait]
impl Action for AuditLogList {
    fn side_effect_free(&self) -> bool {
        true
    }

    fn doc(&self) -> &'static str {
        "Return the audit log, newest first. Sysadmins only.\n\n\
         :param object_id: only the events of this object; optional\n\
         :param limit: at most this many (default and maximum: catalogext.audit_log.limit_max)\n\
         :rtype: list of dictionaries (entity, change, object_id, actor, action, title)"
    }

    async fn run(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Value> {
        ctx.check_access("audit_log_list", &params).await?;
        let max = ctx
            .app
            .extension::<AuditSettings>()
            .map(|s| s.limit_max)
            .unwrap_or(100);
        let limit = positive(&params, "limit")?.unwrap_or(max).min(max);
        let object_id = opt_str(&params, "object_id");
        let mut sql =
            String::from("SELECT entity, change, object_id, actor, action, title FROM audit_event");
        if object_id.is_some() {
            sql.push_str(" WHERE object_id = $2");
        }
        sql.push_str(" ORDER BY seq DESC LIMIT $1");
        let mut query = sqlx::query(&sql).bind(limit);
        if let Some(id) = object_id {
            query = query.bind(id);
        }
        let rows = query.fetch_all(ctx.db().await?).await?;
        Ok(Value::Array(
            rows.iter()
                .map(|r| {
                    json!({
                        "entity": r.s("entity"),
                        "change": r.s("change"),
                        "object_id": r.s("object_id"),
                        "actor": r.os("actor"),
                        "action": r.s("action"),
                        "title": r.os("title"),
                    })
                })
                .collect(),
        ))
    }
}

// No auth function: sysadmins only.
register_action!("audit_log_list", AuditLogList);

/// `package_show` plus `audit_event_count`, wrapping the implementation it replaces.
pub struct ShowAuditCount;

#[async_trait]
impl ChainedAction for ShowAuditCount {
    async fn run(
        &self,
        next: &dyn Action,
        ctx: &mut ActionContext,
        params: Params,
    ) -> CkanResult<Value> {
        let mut dict = next.run(ctx, params).await?;
        let id = dict["id"].as_str().unwrap_or_default().to_string();
        let (count,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM audit_event WHERE object_id = $1")
                .bind(id)
                .fetch_one(ctx.db().await?)
                .await?;
        dict["audit_event_count"] = json!(count);
        Ok(dict)
    }
}

register_chained_action!("package_show", ShowAuditCount);

/// The default rule of `package_create`, then: no new datasets while the portal is frozen.
pub struct FrozenPortal;

#[async_trait]
impl ChainedAuthFunction for FrozenPortal {
    async fn check(
        &self,
        next: &dyn AuthFunction,
        ctx: &mut ActionContext,
        data: &Params,
    ) -> CkanResult<()> {
        // The rule it wraps decides first.
        next.check(ctx, data).await?;
        let frozen = ctx
            .config()
            .catalogext
            .values
            .get("freeze")
            .and_then(|v| v.get("enabled"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if frozen {
            return Err(not_authorized(format!(
                "User {} not authorized to create packages while the portal is frozen",
                ctx.user_name()
            )));
        }
        Ok(())
    }
}

register_chained_auth!("package_create", FrozenPortal);
