-- Job worker heartbeats: each process that runs job workers keeps one row fresh. A running job whose process
-- stopped beating is reclaimed within a few heartbeats instead of waiting out its lease; a live process's job is
-- never taken, even when its lease renewal is late.
create table core.job_workers (
  id text primary key,
  -- host:pid, for operators reading the table
  process text not null,
  workers integer not null,
  -- the process's own interval, so staleness is judged by the holder's setting, not the reader's
  heartbeat_ms integer not null,
  started_at timestamptz not null default now(),
  heartbeat_at timestamptz not null default now()
);

-- the job_workers row of the process holding a running job (locked_by names its worker loop)
alter table core.jobs add column locked_process text;
create index jobs_running_process on core.jobs (locked_process) where status = 'running';
