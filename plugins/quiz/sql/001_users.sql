-- Spec 1, Auth and Admin: users. The quiz service keeps its own users, apart from the clinical service.
create schema if not exists quiz;

create table quiz.users (
  id integer generated always as identity primary key,
  email text not null,
  name text not null,
  password_hash text not null,
  role text not null default 'user' check (role in ('admin', 'moderator', 'user')),
  is_verified boolean not null default false,
  -- exempts the user from the tutor and speech rate limits; set by an admin
  unthrottled boolean not null default false,
  -- bumped on password change or reset: tokens carrying an older version stop working
  token_version integer not null default 0,
  created_at timestamptz not null default now()
);
create unique index users_email_lower on quiz.users (lower(email));

-- One-time tokens (email verification, password reset); only the SHA-256 of the token is stored.
create table quiz.auth_tokens (
  token_hash text primary key,
  user_id integer not null references quiz.users (id) on delete cascade,
  purpose text not null check (purpose in ('verify_email', 'reset_password')),
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index auth_tokens_user on quiz.auth_tokens (user_id, purpose);
create index auth_tokens_expiry on quiz.auth_tokens (expires_at);
