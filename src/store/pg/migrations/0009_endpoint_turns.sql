DROP INDEX "event_deliveries_due";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "failures" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "paused_until" bigint;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "pause_ms" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "event_deliveries_endpoint_due" ON "event_deliveries" USING btree ("endpoint_id","next_at") WHERE "event_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "event_deliveries_leased" ON "event_deliveries" USING btree ("endpoint_id","lease_until") WHERE "event_deliveries"."lease_until" IS NOT NULL;