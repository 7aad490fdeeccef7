-- Rate rules in batched mode (src/core/ratelimit.ts: the API-wide rule): each process adds the hits it admitted to
-- per-slot counts (a slot is a second for a window up to a minute) and reads the other processes' back, in one
-- statement every flush. Strict rules keep their sliding log in core.rate_hits.
create table core.rate_counts (
  rule text not null,
  subject text not null,
  slot bigint not null, -- the slot's start, epoch seconds
  hits integer not null,
  primary key (rule, subject, slot)
);
create index rate_counts_slot on core.rate_counts (slot);
