-- Spec 1, Documents: uploaded PDFs, their extracted page text, and named page-range sections.
create table quiz.documents (
  id integer generated always as identity primary key,
  user_id integer not null references quiz.users (id) on delete cascade,
  -- the stored name (quiz/documents/<uuid>.pdf's last part); original_filename is what the uploader called it
  filename text not null,
  original_filename text not null,
  status text not null check (status in ('processing', 'ready', 'failed')),
  total_pages integer not null default 0,
  error_message text,
  storage_key text not null,
  size_bytes integer not null,
  -- the processing job: its steps are the document's processing steps
  processing_job_id uuid references core.jobs (id) on delete set null,
  uploaded_at timestamptz not null default now()
);
create index documents_user_uploaded on quiz.documents (user_id, uploaded_at desc);
create index documents_uploaded on quiz.documents (uploaded_at desc);

-- One row per page (1-based), the text layer as extracted; '' for a page with no text (a scan).
create table quiz.document_pages (
  document_id integer not null references quiz.documents (id) on delete cascade,
  page_number integer not null,
  text text not null,
  primary key (document_id, page_number)
);

create table quiz.sections (
  id integer generated always as identity primary key,
  document_id integer not null references quiz.documents (id) on delete cascade,
  name text not null,
  start_page integer not null,
  end_page integer not null,
  created_at timestamptz default now(),
  -- spec 1, Section: start_page at least 1, end_page greater than start_page (at most total_pages: checked by the service)
  check (start_page >= 1 and end_page > start_page)
);
create index sections_document on quiz.sections (document_id);
