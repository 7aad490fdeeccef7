-- Spec 1, Quizzes and Questions: the shared question bank, quizzes that reference its questions, question categories.
create table quiz.question_categories (
  id integer generated always as identity primary key,
  name text not null unique,
  description text,
  created_at timestamptz not null default now()
);

create table quiz.quizzes (
  id integer generated always as identity primary key,
  -- the section the quiz was extracted from; kept (null) when the section or its document goes
  section_id integer references quiz.sections (id) on delete set null,
  user_id integer not null references quiz.users (id) on delete cascade,
  title text not null,
  mode text not null check (mode in ('timed', 'learning')),
  time_limit_minutes integer,
  is_published boolean not null default false,
  -- the quiz category (spec 1, Quiz categories); its table and foreign key come with that area
  category_id integer,
  -- set: in the trash, hidden from every normal read
  deleted_at timestamptz,
  created_at timestamptz not null default now()
);
create index quizzes_user on quiz.quizzes (user_id, created_at desc);
create index quizzes_deleted on quiz.quizzes (deleted_at);
create index quizzes_section on quiz.quizzes (section_id);
create index quizzes_category on quiz.quizzes (category_id);

-- The bank: a question belongs to no quiz; quizzes reference it through quiz_questions.
create table quiz.questions (
  id integer generated always as identity primary key,
  question_text text not null,
  question_type text not null default 'multiple_choice',
  -- a JSON array of strings; correct_answer equals one of them (checked by the services)
  options jsonb not null check (jsonb_typeof(options) = 'array'),
  correct_answer text not null,
  explanation text not null default '',
  image_path text,
  question_category_id integer references quiz.question_categories (id) on delete set null,
  -- the quiz the question was extracted for (bank listings show it); kept when that quiz is removed
  source_quiz_id integer references quiz.quizzes (id) on delete set null,
  created_by integer references quiz.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index questions_category on quiz.questions (question_category_id);
create index questions_source_quiz on quiz.questions (source_quiz_id);
create index questions_created_by on quiz.questions (created_by);

create table quiz.quiz_questions (
  quiz_id integer not null references quiz.quizzes (id) on delete cascade,
  question_id integer not null references quiz.questions (id) on delete cascade,
  position integer not null,
  primary key (quiz_id, question_id)
);
create index quiz_questions_question on quiz.quiz_questions (question_id);
