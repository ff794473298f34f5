ALTER TABLE "accounts" ADD COLUMN "custom_text" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "console_sessions" ADD COLUMN "credential_generation" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "operators" ADD COLUMN "role" text DEFAULT 'admin' NOT NULL;--> statement-breakpoint
ALTER TABLE "operators" ADD COLUMN "credential_generation" integer DEFAULT 0 NOT NULL;