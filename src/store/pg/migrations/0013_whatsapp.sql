ALTER TABLE "verifications" ADD COLUMN "delivery_ref" text;--> statement-breakpoint
ALTER TABLE "verifications" ADD COLUMN "delivery_language" text;--> statement-breakpoint
ALTER TABLE "verifications" ADD COLUMN "delivery_error_code" text;--> statement-breakpoint
ALTER TABLE "verifications" ADD COLUMN "delivery_error_title" text;--> statement-breakpoint
CREATE INDEX "verifications_delivery_ref" ON "verifications" USING btree ("delivery_ref") WHERE "verifications"."delivery_ref" IS NOT NULL;