-- Spec 2, Authentication and accounts; spec 3, User account states and Configuration.
-- The clinical service keeps its own users, apart from the quiz service.
create table clinical.users (
  id integer generated always as identity primary key,
  name text not null,
  email text not null,
  -- argon2id (or a legacy bcrypt hash); for accounts created by single sign-on, a random 32-byte hex string
  -- that is not a hash, so no password ever matches it (can_local_auth = false)
  password_hash text not null,
  role text not null default 'user' check (role in ('admin', 'moderator', 'user')),
  email_verified boolean not null default false,
  disabled boolean not null default false,
  can_local_auth boolean not null default true,
  oidc_sub text,
  -- the TOTP secret, sealed with DATA_ENCRYPTION_KEY; set and not enabled = a pending setup
  totp_secret text,
  totp_enabled boolean not null default false,
  -- the last accepted TOTP time step: a code is accepted once, never replayed inside its window
  totp_last_step bigint,
  -- JSON array of SHA-256 hashes of the unused backup codes
  totp_backup_codes jsonb not null default '[]'::jsonb,
  -- spec 2, file-sync export: the WebDAV access token, sealed
  nextcloud_token text,
  last_login timestamptz,
  api_calls bigint not null default 0,
  created_at timestamptz not null default now()
);
create unique index users_email_lower on clinical.users (lower(email));
create unique index users_oidc_sub on clinical.users (oidc_sub) where oidc_sub is not null;
create index users_created on clinical.users (created_at desc, id desc);

-- spec 2, Session: the authoritative record of a signed-in client, keyed by the SHA-256 of its JWT.
create table clinical.user_sessions (
  token_hash text primary key,
  -- the sessionId of the login response
  id uuid not null unique,
  user_id integer not null references clinical.users (id) on delete cascade,
  -- web: cookie transport, idle rule; mobile: Bearer transport, no idle check
  client text not null check (client in ('web', 'mobile')),
  ip_address text,
  device_label text,
  created_at timestamptz not null,
  last_activity timestamptz not null,
  expires_at timestamptz not null
);
create index user_sessions_user on clinical.user_sessions (user_id);
create index user_sessions_expiry on clinical.user_sessions (expires_at);

-- One-time tokens (email verification, password reset); only the SHA-256 of the token is stored.
create table clinical.auth_tokens (
  token_hash text primary key,
  user_id integer not null references clinical.users (id) on delete cascade,
  purpose text not null check (purpose in ('verify_email', 'reset_password')),
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index auth_tokens_user on clinical.auth_tokens (user_id, purpose);
create index auth_tokens_expiry on clinical.auth_tokens (expires_at);

-- spec 3, Configuration: the service's key-value settings (registration_enabled, oidc.*, announcement.*, ...).
-- Secret values (oidc.client_secret) are sealed with DATA_ENCRYPTION_KEY.
create table clinical.app_config (
  key text primary key,
  value text not null,
  updated_at timestamptz not null default now()
);
