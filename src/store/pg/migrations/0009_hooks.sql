ALTER TABLE "api_keys" ADD COLUMN "hook" text;--> statement-breakpoint
ALTER TABLE "console_rollups" ADD COLUMN "checked" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "verifications" ADD COLUMN "checked_by" text;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hook" ON "api_keys" USING btree ("hook");