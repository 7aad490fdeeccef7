-- The AI usage log (issue 15; read by the admin's usage summary): one row per gateway call, success or failure.
-- It never holds any text: no transcript, note, prompt or anything identifying a patient.
create table clinical.ai_usage (
  id bigint generated always as identity primary key,
  -- null once the user is deleted: the figures stay in the totals
  user_id integer references clinical.users (id) on delete set null,
  -- the API path of the call, e.g. /api/generate-soap
  endpoint text not null,
  model text not null,
  tokens_in integer,
  tokens_out integer,
  latency_ms integer not null,
  -- ok, or the error code of the failure (ai_unreachable, ai_timeout, cancelled, ...)
  outcome text not null,
  created_at timestamptz not null default now()
);
-- the summary of the last N days groups the rows of a time range
create index ai_usage_created on clinical.ai_usage (created_at);
create index ai_usage_user_created on clinical.ai_usage (user_id, created_at);
