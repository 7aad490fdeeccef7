-- The API log (the clinical admin's GET /api/logs/api): per service, route label, method and minute, the requests,
-- their 4xx and 5xx answers, the summed duration and a latency histogram (one count per bound of LATENCY_BOUNDS_MS in
-- src/core/metrics.ts, then one for slower). The request hook holds the figures in memory and upserts them in
-- batches; every column is a sum, so several processes add into one row.
create table core.api_metrics (
  service text not null,
  -- the route pattern (e.g. /api/admin/users/:id), or `unmatched`: bounded by the app's routes
  route text not null,
  method text not null,
  bucket_start timestamptz not null,
  requests integer not null,
  client_errors integer not null,
  server_errors integer not null,
  duration_ms double precision not null,
  latency_counts integer[] not null,
  primary key (service, bucket_start, route, method)
);
-- the retention sweep deletes by time across services
create index api_metrics_bucket on core.api_metrics (bucket_start);
