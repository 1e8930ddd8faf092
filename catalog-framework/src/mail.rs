//! Outgoing mail: what a message is ([`Mail`]), why it was not sent ([`MailError`], worded
//! as CKAN's mailer's), and the [`Mailer`] that sends it, registered under a name
//! (`register_mailer!`). The host uses the one named `smtp` (catalog-io's SMTP client,
//! `catalog.smtp.*`); a plugin replaces it by registering `smtp` at a higher priority.

use async_trait::async_trait;

use crate::config::Config;

/// A plain-text message to one recipient.
#[derive(Debug, Clone)]
pub struct Mail {
    pub to_name: String,
    pub to_email: String,
    pub subject: String,
    pub body: String,
}

/// Why a message was not sent, worded as CKAN's `MailerException`s.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct MailError(pub String);

/// What sends the service's mail.
#[async_trait]
pub trait Mailer: Send + Sync + 'static {
    /// Sends `mail` under `config`'s settings (sender, reply-to, the server and its timeout).
    async fn send(&self, config: &Config, mail: &Mail) -> Result<(), MailError>;
}

crate::extension_point!(
    /// A [`Mailer`], submitted with [`register_mailer!`](crate::register_mailer). The host
    /// uses the one named `smtp`.
    pub MailerRegistration, Box<dyn Mailer>,
    collected("mailers", "mailer", listed = false)
);

/// Registers a [`Mailer`]: `register_mailer!("smtp", Mine, priority = 10)` replaces the
/// default one.
#[macro_export]
macro_rules! register_mailer {
    ($name:expr, $value:expr) => {
        $crate::register_mailer!($name, $value, priority = 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::register_at!($crate::mail::MailerRegistration, $name, $value, $p);
    };
}
