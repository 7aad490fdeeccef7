-- Spec 1, Quiz categories, Favorites, Tags and the bank's search: the tables around the shared question bank.
create extension if not exists pg_trgm;

create table quiz.quiz_categories (
  id integer generated always as identity primary key,
  name text not null,
  created_at timestamptz not null default now()
);
-- one category per name whatever its case ("Cardiology" and "cardiology" are one)
create unique index quiz_categories_name on quiz.quiz_categories (lower(name));
create unique index question_categories_name_ci on quiz.question_categories (lower(name));
-- deleting a quiz category leaves its quizzes uncategorized (spec 1, Quiz categories)
alter table quiz.quizzes add constraint quizzes_category_fk
  foreign key (category_id) references quiz.quiz_categories (id) on delete set null;

create table quiz.favorites (
  id integer generated always as identity primary key,
  user_id integer not null references quiz.users (id) on delete cascade,
  question_id integer not null references quiz.questions (id) on delete cascade,
  created_at timestamptz not null default now(),
  unique (user_id, question_id)
);
create index favorites_question on quiz.favorites (question_id);

create table quiz.tags (
  id integer generated always as identity primary key,
  kind text not null check (kind in ('subject', 'disease', 'keyword')),
  name text not null,
  created_at timestamptz not null default now()
);
create unique index tags_kind_name on quiz.tags (kind, lower(name));

create table quiz.question_tags (
  question_id integer not null references quiz.questions (id) on delete cascade,
  tag_id integer not null references quiz.tags (id) on delete cascade,
  primary key (question_id, tag_id)
);
create index question_tags_tag on quiz.question_tags (tag_id);

-- set when the tag classifier has looked at the question (even when it found no tag), so it is not asked again
alter table quiz.questions add column tagged_at timestamptz;
create index questions_untagged on quiz.questions (id) where tagged_at is null;

-- Identity of a question's content: its text and its options, each trimmed, lower-cased and with runs of white
-- space made one space, the options in any order. Extraction reuses an identical bank question instead of adding a
-- copy. A generated column, so every insert and edit keeps it in step.
create function quiz.question_fingerprint(question_text text, options jsonb) returns text
language sql immutable parallel safe as $$
  select md5(lower(regexp_replace(btrim(question_text), '\s+', ' ', 'g')) || chr(31) || coalesce(
    (select string_agg(n, chr(31) order by n collate "C")
     from (select lower(regexp_replace(btrim(o), '\s+', ' ', 'g')) as n from jsonb_array_elements_text(options) o) opts), ''))
$$;
alter table quiz.questions add column fingerprint text generated always as (quiz.question_fingerprint(question_text, options)) stored;
create index questions_fingerprint on quiz.questions (fingerprint);

-- Keyword search is a case-insensitive substring match (ILIKE '%q%'): a trigram index answers it without a scan.
create index questions_text_trgm on quiz.questions using gin (question_text gin_trgm_ops);
create index quizzes_title_trgm on quiz.quizzes using gin (title gin_trgm_ops);

-- Pairs of bank questions whose embeddings are nearly the same (cosine >= 0.95), found when a question is indexed;
-- moderators see them flagged on the bank page and decide. low_id < high_id: one row per pair.
create table quiz.near_duplicates (
  low_id integer not null references quiz.questions (id) on delete cascade,
  high_id integer not null references quiz.questions (id) on delete cascade,
  similarity real not null,
  primary key (low_id, high_id),
  check (low_id < high_id)
);
create index near_duplicates_high on quiz.near_duplicates (high_id);
