-- Saved encounters, memories and audio backups: the clinician's records. Patient text never sits in plain text:
-- every bytea column below that holds it is gzip-compressed, then sealed with DATA_ENCRYPTION_KEY (AES-256-GCM,
-- leading version byte 0x01) by the services. Timestamps come from the application clock.

-- A saved encounter lives until expires_at (30 days after its last save, sliding); the sweep deletes it then.
create table clinical.saved_encounters (
  id integer generated always as identity primary key,
  user_id integer not null references clinical.users (id) on delete cascade,
  enc_type text not null,
  -- draft: as generated or typed, not yet checked; reviewed: the clinician checked it
  status text not null default 'draft' check (status in ('draft', 'reviewed')),
  -- sealed JSON {label, transcript_preview, note_preview}: what a listing shows, without opening the full texts
  summary bytea not null,
  transcript bytea not null,
  generated_note bytea not null,
  -- sealed JSON text of the client's partial state; null when none was saved
  partial_data bytea,
  -- optimistic locking: every update adds one, and an update naming another version is refused
  version integer not null default 1,
  -- a create sent again with the same key (per user) answers the same row
  idempotency_key text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  expires_at timestamptz not null
);
create unique index saved_encounters_idempotency on clinical.saved_encounters (user_id, idempotency_key)
  where idempotency_key is not null;
create index saved_encounters_user_updated on clinical.saved_encounters (user_id, updated_at desc, id desc);
create index saved_encounters_expiry on clinical.saved_encounters (expires_at);

-- Reusable memories (note style, abbreviations, templates, practice context, the clinician's own notes).
create table clinical.memories (
  id integer generated always as identity primary key,
  user_id integer not null references clinical.users (id) on delete cascade,
  -- note_style, abbreviations, templates, ai_context, custom; legacy rows may carry correction_*
  category text not null,
  name text not null,
  -- gzip, then sealed
  content bytea not null,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index memories_user_created on clinical.memories (user_id, created_at desc, id desc);

-- Audio backups: the recording itself is a file under DATA_DIR/files (storage_key), gzipped then sealed, kept
-- 24 hours. Rows of a deleted user go with the user; the sweep removes their files as orphans.
create table clinical.audio_backups (
  id integer generated always as identity primary key,
  user_id integer not null references clinical.users (id) on delete cascade,
  module text not null,
  mime_type text not null,
  -- the recording's size, and its gzip size (before encryption)
  size_bytes bigint not null,
  compressed_bytes bigint not null,
  storage_key text not null unique,
  created_at timestamptz not null,
  expires_at timestamptz not null
);
create index audio_backups_user_created on clinical.audio_backups (user_id, created_at desc, id desc);
create index audio_backups_expiry on clinical.audio_backups (expires_at);
