-- Spec 2, Preferences: each user's transcription model and voice. A missing row, or a null column, means the
-- server's default; a stored value the server no longer offers is ignored on use (services/preferences.ts).
create table clinical.user_preferences (
  user_id integer primary key references clinical.users (id) on delete cascade,
  stt_model text,
  tts_voice text,
  updated_at timestamptz not null default now()
);
