-- The access log (the admin's GET /api/logs/access): one row per sign-in attempt whose outcome is known, written
-- where the login rules decide it (services/accounts.ts). Unlike the audit entry it keeps the address typed and the
-- client kind of failed attempts too. user_id has no foreign key: unknown emails have none, and rows outlive users.
create table clinical.access_log (
  id bigint generated always as identity primary key,
  at timestamptz not null,
  user_id integer,
  -- the email as typed (normalised) or the account's; capped by the service
  email text,
  ip_address text,
  client text not null check (client in ('web', 'mobile')),
  outcome text not null check (outcome in ('success', 'failed', 'blocked', 'oidc')),
  -- why an attempt failed or was refused (wrong_password, unknown_email, disabled, ...); null on success
  reason text
);
create index access_log_at on clinical.access_log (at desc);
create index access_log_user_at on clinical.access_log (user_id, at desc);
create index access_log_outcome_at on clinical.access_log (outcome, at desc);
create index access_log_email_at on clinical.access_log (email, at desc);
