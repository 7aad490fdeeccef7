-- Spec 2, Events: the audit log. Rows come from the batched writer (plugins/clinical/audit.ts) with details
-- already redacted and capped; spec 3's GET /api/logs/audit lists the newest first, by action or by user.
-- user_id has no foreign key: failed logins of unknown emails have none, and entries outlive deleted users.
create table clinical.audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  action text not null,
  user_id integer,
  ip_address text,
  details text not null default ''
);
create index audit_log_at on clinical.audit_log (at desc);
create index audit_log_action_at on clinical.audit_log (action, at desc);
create index audit_log_user_at on clinical.audit_log (user_id, at desc);
