create schema if not exists clinical;
