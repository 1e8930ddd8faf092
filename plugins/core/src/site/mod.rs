//! Site actions: `status_show`, `site_read`, `license_list`, `help_show`.

pub(crate) mod get_site_user;
pub(crate) mod help_show;
pub(crate) mod license_list;
pub(crate) mod read;
pub(crate) mod status_show;
