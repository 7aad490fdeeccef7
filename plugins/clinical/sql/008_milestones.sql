-- Developmental milestones by age and domain (the admin's GET /api/admin/milestones; the milestone narrative's
-- reference list). POST /api/admin/milestones/seed loads the default set shipped in defaults/milestones.ts.
create table clinical.milestones (
  id integer generated always as identity primary key,
  -- the stable name of a default milestone (e.g. 9m-language_communication-2): seeding updates its row in place,
  -- so seeding twice leaves one set and ids do not change
  key text not null unique,
  age_months integer not null check (age_months > 0),
  domain text not null check (domain in ('social_emotional', 'language_communication', 'cognitive', 'movement_physical')),
  text text not null,
  -- the position in the set: by age, then domain, then the checklist's order
  sort integer not null
);
create index milestones_age_sort on clinical.milestones (age_months, sort);
