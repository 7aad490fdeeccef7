-- Rate rules in batched mode on the embedded database, where one process counts (src/core/ratelimit-solo-log.ts):
-- each flush appends the hits it admitted as one row, which the next start reads back once, so a restart keeps what
-- the windows hold. No other process reads them, so per-key rows in core.rate_counts (an insert and two index
-- entries per client address a flush) bought nothing; rows older than the lookback are deleted as new ones come.
create table core.rate_log (
  id bigint generated always as identity primary key,
  at bigint not null, -- the flush's time, epoch seconds
  entries jsonb not null -- [[rule, subject, slot, hits], ...]; hits 0 marks a reset of the key
);
create index rate_log_at on core.rate_log (at);
