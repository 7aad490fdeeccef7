-- Spec 1, Contact: messages sent through the public contact form, read by admins.
create table quiz.contact_submissions (
  id integer generated always as identity primary key,
  name text not null check (char_length(name) between 1 and 120),
  email text not null,
  type text not null check (type in ('question', 'moderator')),
  message text not null check (char_length(message) between 1 and 2000),
  read boolean not null default false,
  -- the client address it came from, for an admin dealing with abuse; not shown in the API
  client_address text,
  created_at timestamptz not null default now()
);
create index contact_submissions_created on quiz.contact_submissions (created_at desc, id desc);
