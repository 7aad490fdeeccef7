-- Spec 1, Admin: AI model configuration. api_key holds only a sealed value (core.crypto.sealText, `enc:v1:...`).
create table quiz.ai_models (
  id integer generated always as identity primary key,
  name text not null,
  model_id text not null,
  task text not null check (task in ('extraction', 'tts', 'teach', 'keyword')),
  is_active boolean not null default true,
  is_default boolean not null default false,
  api_key text check (api_key is null or api_key like 'enc:v1:%'),
  -- an OpenAI-compatible base URL for this model; null: AI_BASE_URL
  api_base text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (model_id, task)
);
-- at most one default per task
create unique index ai_models_one_default on quiz.ai_models (task) where is_default;
create index ai_models_task on quiz.ai_models (task, is_active);
