-- Job types beyond the built-in ones, registered by the worker processes that run them (their
-- LEASEHOLD_HANDLERS module) when they start: the API, the CLI and the client accept a type
-- once a worker has registered it, and check its payload against the registered JSON Schema.
CREATE TABLE "job_types" (
	"name" text PRIMARY KEY NOT NULL,
	"description" text,
	"payload_schema" jsonb,
	"timeout_ms" integer,
	"registered_at" timestamp with time zone DEFAULT now() NOT NULL,
	"seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
