-- The mail outbox (src/core/outbox.ts): every message is written here before it is sent, so a mail server that is
-- down delays a message (retried with backoff) instead of losing it. Times are the app's clock (core.now).
create table core.mail_outbox (
  id integer generated always as identity primary key,
  recipient text not null,
  subject text not null,
  -- the text and HTML parts, sealed with DATA_ENCRYPTION_KEY (they carry reset and verification links); null once sent
  body text,
  status text not null default 'pending' check (status in ('pending', 'sent', 'failed')),
  attempts integer not null default 0,
  -- the transport's message of the last failed attempt, credentials and link tokens removed
  last_error text,
  -- when a pending message is due; while an attempt holds it, the end of that attempt's lease
  next_attempt_at timestamptz not null,
  -- the attempt holding the row (null between attempts): only its holder settles the outcome
  claim uuid,
  -- a pending message still unsent after this is marked failed (an admin's retry moves it)
  give_up_at timestamptz not null,
  created_at timestamptz not null,
  last_attempt_at timestamptz,
  sent_at timestamptz
);
-- the retry schedule's claim: the earliest due pending message first
create index mail_outbox_due on core.mail_outbox (next_attempt_at) where status = 'pending';
-- the admin's list (pending and failed, by age) and the retention sweep of sent messages
create index mail_outbox_open on core.mail_outbox (created_at) where status <> 'sent';
create index mail_outbox_sent on core.mail_outbox (sent_at) where status = 'sent';
