-- Queue controls (pause, a global concurrency limit, a rate limit — enforced at claim time
-- under a row lock shared by every worker) and recurring jobs (cron schedules whose ticks are
-- enqueued exactly once across all worker processes).
CREATE TABLE "queues" (
	"name" text PRIMARY KEY NOT NULL,
	"paused_at" timestamp with time zone,
	"concurrency_limit" integer,
	"rate_limit" integer,
	"rate_period_ms" integer,
	"rate_tokens" double precision,
	"rate_updated_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "queues_concurrency_limit_positive" CHECK (concurrency_limit IS NULL OR concurrency_limit >= 1),
	CONSTRAINT "queues_rate_limit_complete" CHECK ((rate_limit IS NULL) = (rate_period_ms IS NULL) AND (rate_limit IS NULL OR (rate_limit >= 1 AND rate_period_ms >= 1)))
);
--> statement-breakpoint
CREATE TABLE "schedules" (
	"name" text PRIMARY KEY NOT NULL,
	"cron" text NOT NULL,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"queue" text DEFAULT 'default' NOT NULL,
	"type" text NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"max_attempts" integer DEFAULT 3 NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"next_run_at" timestamp with time zone NOT NULL,
	"last_run_at" timestamp with time zone,
	"last_job_id" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
