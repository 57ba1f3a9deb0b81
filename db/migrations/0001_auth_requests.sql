CREATE TABLE "auth_requests" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"user_agent_id" text NOT NULL,
	"client_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"response_type" text NOT NULL,
	"response_mode" text NOT NULL,
	"scopes" text[] NOT NULL,
	"state" text,
	"nonce" text,
	"code_challenge" text,
	"code_challenge_method" text,
	"prompt" text[] DEFAULT '{}'::text[] NOT NULL,
	"max_age" integer,
	"login_hint" text,
	"hint_subject" text,
	"locale" text NOT NULL,
	"login_name" text,
	"session_id" text,
	"form_error" text,
	"form_values" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "auth_requests" ADD CONSTRAINT "auth_requests_user_agent_id_user_agents_id_fk" FOREIGN KEY ("user_agent_id") REFERENCES "public"."user_agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "auth_requests_expires_idx" ON "auth_requests" USING btree ("expires_at");