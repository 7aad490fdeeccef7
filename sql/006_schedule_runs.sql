-- One row per scheduled run that a process claimed: every process runs the same croner schedules, and the one whose
-- insert lands first runs that period; the others see the row and skip it. Old rows are swept.
create table core.schedule_runs (
  name text not null,
  -- the scheduled time the run belongs to (not when a process happened to wake up)
  slot timestamptz not null,
  claimed_at timestamptz not null default now(),
  primary key (name, slot)
);
create index schedule_runs_claimed on core.schedule_runs (claimed_at);
