create schema if not exists quiz;
