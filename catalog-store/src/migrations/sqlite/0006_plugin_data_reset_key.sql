-- CKAN 2.10's `package.plugin_data`: private data plugins keep per dataset, written only by
-- sysadmins and shown only to them (package_show with include_plugin_data). A column of its
-- own, so that it never reaches the dataset document, the search index or domain events.
ALTER TABLE package ADD COLUMN plugin_data TEXT;
-- CKAN's `user.reset_key`: the key of a password-reset link (user_invite mails one).
ALTER TABLE catalog_user ADD COLUMN reset_key TEXT;
