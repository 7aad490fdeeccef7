-- Core tables shared by every plugin: the job queue, the temporary store and rate-limit counters.
create schema if not exists core;

create table core.jobs (
  id uuid primary key,
  kind text not null,
  -- which service and user the job belongs to, so owners can list and cancel their own
  service text not null,
  owner_id integer,
  title text not null default '',
  payload jsonb not null default '{}'::jsonb,
  status text not null default 'pending'
    check (status in ('pending', 'running', 'completed', 'failed', 'cancelled')),
  steps jsonb not null default '[]'::jsonb,
  result jsonb,
  error text,
  attempts integer not null default 0,
  max_attempts integer not null default 3,
  locked_by text,
  lease_until timestamptz,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz
);
-- claim order: the oldest claimable job first
create index jobs_claimable on core.jobs (created_at) where status in ('pending', 'running');
create index jobs_owner on core.jobs (service, owner_id, created_at desc);

create table core.kv (
  key text primary key,
  value jsonb not null,
  expires_at timestamptz
);
create index kv_expires on core.kv (expires_at) where expires_at is not null;

create table core.rate_limits (
  rule text not null,
  subject text not null,
  window_start timestamptz not null,
  hits integer not null,
  primary key (rule, subject, window_start)
);
create index rate_limits_window on core.rate_limits (window_start);
