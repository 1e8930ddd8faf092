//! What the catalog reaches outside its database, behind the extension points the framework
//! declares: it registers the file-store backends `local` and `s3`
//! ([`catalog_framework::files::FileBackend`], chosen by `catalog.storage.backend`), the
//! outbound fetcher `http` ([`catalog_framework::fetch::Fetcher`]) and the mailer `smtp`
//! ([`catalog_framework::mail::Mailer`]). The host links this crate, so every binary and test
//! app has them; a plugin adds another backend (Azure, GCS, a content-addressed local store)
//! by registering it under its own name, or replaces the fetcher or the mailer by registering
//! one under the same name at a higher priority. No plugin compiles an S3 or HTTP client
//! because of the framework.
//!
//! Where things live:
//! - `files`: the object-store backends (`object_store`'s local file system and Amazon S3
//!   client), streamed in parts;
//! - `fetch`: the HTTP fetcher (`reqwest`): the framework's address rules applied to every
//!   address and redirect, the connection pinned to the checked addresses, timeouts, the
//!   minimum rate and the size cap;
//! - `mail`: the SMTP client (`STARTTLS` with rustls and the webpki roots).

mod fetch;
mod files;
mod mail;

pub use fetch::HttpFetcher;
pub use files::ObjectFiles;
pub use mail::SmtpMailer;
