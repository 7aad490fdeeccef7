-- The learning hub: categories, content (markdown articles and Marp slide decks) with their quizzes, and each
-- reader's quiz progress. Timestamps come from the application clock. Nothing is seeded here.
create extension if not exists pg_trgm;

create table clinical.learning_categories (
  id integer generated always as identity primary key,
  name text not null,
  -- lowercase words joined by single hyphens; unique among categories
  slug text not null,
  description text not null default '',
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create unique index learning_categories_slug on clinical.learning_categories (slug);
create index learning_categories_name on clinical.learning_categories (lower(name), id);

create table clinical.learning_content (
  id integer generated always as identity primary key,
  -- a category holding content cannot be deleted (the service answers 409 first)
  category_id integer not null references clinical.learning_categories (id) on delete restrict,
  title text not null,
  -- unique among content (categories have their own slugs)
  slug text not null,
  type text not null default 'article' check (type in ('article', 'presentation')),
  -- what the feed shows: the author's, or the start of the body as plain text
  summary text not null default '',
  -- markdown
  body text not null default '',
  -- the slide deck's Marp markdown; null: the body is the deck for a presentation, an article has none
  slides text,
  -- [{id, text, options: [{id, text, correct}]}]: ids numbered by the service on every write (question ids 1..n,
  -- option ids 1..m across the whole quiz); readers never see `correct`
  questions jsonb not null default '[]'::jsonb,
  published boolean not null default true,
  -- when it was first published: the feed's order
  published_at timestamptz,
  author_id integer references clinical.users (id) on delete set null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  -- keyword search: words of the title (A), summary (B), body (C) and slides (D), English stemming
  search_vector tsvector generated always as (
    setweight(to_tsvector('english', title), 'A')
    || setweight(to_tsvector('english', summary), 'B')
    || setweight(to_tsvector('english', body), 'C')
    || setweight(to_tsvector('english', coalesce(slides, '')), 'D')
  ) stored
);
create unique index learning_content_slug on clinical.learning_content (slug);
create index learning_content_feed on clinical.learning_content (published_at desc, id desc) where published;
create index learning_content_category on clinical.learning_content (category_id, published_at desc, id desc);
create index learning_content_words on clinical.learning_content using gin (search_vector);
-- keyword search also matches any substring of the text, case-insensitively (ILIKE)
create index learning_content_text_trgm on clinical.learning_content
  using gin ((title || ' ' || summary || ' ' || body || ' ' || coalesce(slides, '')) gin_trgm_ops);
create index learning_content_author on clinical.learning_content (author_id);

-- One row per quiz submission (the authors' statistics count and average them).
create table clinical.learning_quiz_submissions (
  id integer generated always as identity primary key,
  user_id integer not null references clinical.users (id) on delete cascade,
  content_id integer not null references clinical.learning_content (id) on delete cascade,
  score integer not null check (score >= 0),
  total integer not null check (total >= 1 and score <= total),
  submitted_at timestamptz not null
);
create index learning_quiz_submissions_content on clinical.learning_quiz_submissions (content_id, submitted_at desc);
create index learning_quiz_submissions_user on clinical.learning_quiz_submissions (user_id, submitted_at desc);

-- A reader's progress on one piece of content: the best submission (by share of correct answers) and the latest.
create table clinical.learning_progress (
  user_id integer not null references clinical.users (id) on delete cascade,
  content_id integer not null references clinical.learning_content (id) on delete cascade,
  best_score integer not null,
  best_total integer not null,
  latest_score integer not null,
  latest_total integer not null,
  attempts integer not null,
  completed_at timestamptz not null,
  last_submitted_at timestamptz not null,
  primary key (user_id, content_id)
);
create index learning_progress_content on clinical.learning_progress (content_id);
