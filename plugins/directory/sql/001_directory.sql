-- The personal phone directory: extensions and pagers, one list per clinical user. A trashed entry keeps its row
-- with trashed_at set (soft delete) until it is restored or purged. Timestamps come from the application clock.
create table clinical.phone_directory (
  id integer generated always as identity primary key,
  user_id integer not null references clinical.users (id) on delete cascade,
  location text not null default '',
  name text not null default '',
  number text not null,
  type text not null check (type in ('extension', 'pager')),
  notes text not null default '',
  trashed_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
-- The listing of a user's active entries, in its order, and of the trash, newest trashed first. A search (`q`,
-- ILIKE over location, name, number and notes) runs over the user's own rows only, at most DIRECTORY_ENTRIES_MAX
-- of them, which these indexes find: a trigram index over every user's rows was never chosen by the planner at
-- 1,000,000 rows and only slowed the writes (scripts/bench/directory.ts).
create index phone_directory_active on clinical.phone_directory (user_id, location, name, id) where trashed_at is null;
create index phone_directory_trash on clinical.phone_directory (user_id, trashed_at desc, id desc) where trashed_at is not null;
