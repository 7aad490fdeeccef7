-- Rate limits as a sliding log: one row per allowed hit. "10 per 15 minutes" then means exactly that for any
-- 15 minutes, and Retry-After is when the oldest hit leaves the window (never longer than the window).
drop table core.rate_limits;

create table core.rate_hits (
  rule text not null,
  subject text not null,
  at timestamptz not null
);
create index rate_hits_key on core.rate_hits (rule, subject, at);
create index rate_hits_at on core.rate_hits (at);
