-- Analyses: a question answered by the agent loop, persisted as it runs (issue 4).
-- Every table carries tenant_id, and every statement of AnalysisStore filters by it.

CREATE TABLE analyses (
  id                uuid PRIMARY KEY,
  tenant_id         uuid NOT NULL REFERENCES tenants (id),
  question          text NOT NULL,
  scope             uuid[] NOT NULL,           -- empty: the whole tenant
  preload           uuid[] NOT NULL,
  budgets           jsonb NOT NULL,
  model             text NOT NULL,
  status            text NOT NULL,             -- running, succeeded, failed, budget_exhausted, cancelled
  error_type        text,
  error_message     text,
  answer            text,
  program           text,
  citations         jsonb NOT NULL DEFAULT '[]',
  usage             jsonb NOT NULL DEFAULT '{}', -- tokens and calls spent so far
  program_output    text,                      -- the stored program's output at its first replay
  created_at        timestamptz NOT NULL DEFAULT now(),
  finished_at       timestamptz
);

CREATE INDEX analyses_tenant_created ON analyses (tenant_id, created_at DESC);

-- One execute_code call: the code, the CONTRACT tool result and its timing.
CREATE TABLE analysis_steps (
  tenant_id   uuid NOT NULL,
  analysis_id uuid NOT NULL REFERENCES analyses (id) ON DELETE CASCADE,
  ordinal     integer NOT NULL,
  code        text NOT NULL,
  result      jsonb NOT NULL,
  started_at  timestamptz NOT NULL,
  duration_ms bigint NOT NULL,
  PRIMARY KEY (analysis_id, ordinal)
);

-- The event stream exactly as sent live (text, not jsonb, so that a replay is byte for byte the same).
CREATE TABLE analysis_events (
  tenant_id   uuid NOT NULL,
  analysis_id uuid NOT NULL REFERENCES analyses (id) ON DELETE CASCADE,
  seq         bigint NOT NULL,
  type        text NOT NULL,
  body        text NOT NULL,
  PRIMARY KEY (analysis_id, seq)
);
