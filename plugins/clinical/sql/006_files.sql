-- Spec 2, Documents: a clinician's stored documents. The file itself lives in object storage (S3_*) or under
-- DATA_DIR/files; `storage` says which, so documents stored before a change of configuration stay readable.
create table clinical.documents (
  id integer generated always as identity primary key,
  user_id integer not null references clinical.users (id) on delete cascade,
  -- the name the file was uploaded with (without any folder part), shown and used as the download name
  filename text not null,
  -- the type of the file's extension, after its declared type and leading bytes agreed with it
  mime_type text not null,
  size_bytes bigint not null check (size_bytes > 0),
  description text not null default '',
  -- app-made (a random UUID), never the user's file name
  storage text not null check (storage in ('s3', 'local')),
  storage_key text not null unique,
  created_at timestamptz not null default now()
);
create index documents_user_created on clinical.documents (user_id, created_at desc, id desc);

-- Spec 2, File-sync export: the connected WebDAV server of a user. The access token is users.nextcloud_token
-- (sealed with DATA_ENCRYPTION_KEY; a legacy plaintext value is sealed on its next use).
alter table clinical.users add column nextcloud_url text;
alter table clinical.users add column nextcloud_username text;
-- the folder exports are written to, relative to nextcloud_url (POST /api/user/webdav-path); null: its root
alter table clinical.users add column webdav_path text;
