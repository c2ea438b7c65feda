CREATE TABLE IF NOT EXISTS "reservations" (
	"kind" text NOT NULL,
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"invocation_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "reservations_pkey" PRIMARY KEY("kind","scope","key")
);
