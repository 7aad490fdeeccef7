-- Attempts with their graded answers, and the spaced-repetition schedule (one FSRS card per user and question).
-- An attempt stays while its quiz is in the trash (the trash can be undone) and goes with the quiz when it is
-- deleted for good, as it goes with its user. Saved progress lives in core.kv, not here.
create table quiz.attempts (
  id integer generated always as identity primary key,
  user_id integer not null references quiz.users (id) on delete cascade,
  quiz_id integer not null references quiz.quizzes (id) on delete cascade,
  score integer not null default 0,
  -- the quiz's question count at start; on submit, the number of questions graded
  total_questions integer not null,
  -- 100 * score / total_questions to one decimal, exact (numeric), so averages of it round as people expect
  percentage numeric(4, 1) not null default 0,
  started_at timestamptz not null default now(),
  -- null while incomplete
  completed_at timestamptz
);
create index attempts_user_quiz on quiz.attempts (user_id, quiz_id, completed_at);
create index attempts_quiz on quiz.attempts (quiz_id);

create table quiz.attempt_answers (
  attempt_id integer not null references quiz.attempts (id) on delete cascade,
  question_id integer not null references quiz.questions (id) on delete cascade,
  -- null: left unanswered (graded incorrect)
  user_answer text,
  is_correct boolean not null,
  position integer not null,
  primary key (attempt_id, question_id)
);
create index attempt_answers_question on quiz.attempt_answers (question_id);

-- The ts-fsrs Card of each (user, question), updated by every submit.
create table quiz.review_cards (
  user_id integer not null references quiz.users (id) on delete cascade,
  question_id integer not null references quiz.questions (id) on delete cascade,
  due timestamptz not null,
  stability double precision not null,
  difficulty double precision not null,
  elapsed_days integer not null,
  scheduled_days integer not null,
  learning_steps integer not null default 0,
  reps integer not null,
  lapses integer not null,
  -- ts-fsrs State: 0 new, 1 learning, 2 review, 3 relearning
  state smallint not null,
  last_review timestamptz,
  primary key (user_id, question_id)
);
create index review_cards_due on quiz.review_cards (user_id, due);
create index review_cards_question on quiz.review_cards (question_id);
