CREATE TABLE "apis" (
	"id" text PRIMARY KEY NOT NULL,
	"identifier" text NOT NULL,
	"name" text NOT NULL,
	"scopes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"roles" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"access_token_type" text DEFAULT 'jwt' NOT NULL,
	"access_token_lifetime" integer NOT NULL,
	"secret_hash" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "apis_identifier_unique" UNIQUE("identifier")
);
--> statement-breakpoint
CREATE TABLE "client_roles" (
	"client_id" text NOT NULL,
	"api_id" text NOT NULL,
	"role_key" text NOT NULL,
	CONSTRAINT "client_roles_client_id_api_id_role_key_pk" PRIMARY KEY("client_id","api_id","role_key")
);
--> statement-breakpoint
CREATE TABLE "user_roles" (
	"user_id" text NOT NULL,
	"api_id" text NOT NULL,
	"role_key" text NOT NULL,
	CONSTRAINT "user_roles_user_id_api_id_role_key_pk" PRIMARY KEY("user_id","api_id","role_key")
);
--> statement-breakpoint
ALTER TABLE "auth_requests" ADD COLUMN "resources" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "api_scopes" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "grants" ADD COLUMN "resources" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "client_roles" ADD CONSTRAINT "client_roles_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "client_roles" ADD CONSTRAINT "client_roles_api_id_apis_id_fk" FOREIGN KEY ("api_id") REFERENCES "public"."apis"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_roles" ADD CONSTRAINT "user_roles_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_roles" ADD CONSTRAINT "user_roles_api_id_apis_id_fk" FOREIGN KEY ("api_id") REFERENCES "public"."apis"("id") ON DELETE cascade ON UPDATE no action;