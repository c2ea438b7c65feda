-- The MCP tool catalog (docs/tools.md): learned tool definitions per agent, with the pinned one.
CREATE TABLE IF NOT EXISTS "mcp_tools" (
	"tenant_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"name" text NOT NULL,
	"digest" text NOT NULL,
	"definition" jsonb NOT NULL,
	"pinned_digest" text,
	"pinned_definition" jsonb,
	"pinned_at" timestamp with time zone,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"present" boolean DEFAULT true NOT NULL,
	CONSTRAINT "mcp_tools_tenant_id_agent_id_name_pk" PRIMARY KEY("tenant_id","agent_id","name")
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "mcp_tool_lists" (
	"tenant_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"refreshed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "mcp_tool_lists_tenant_id_agent_id_pk" PRIMARY KEY("tenant_id","agent_id")
);
