DROP INDEX `event_deliveries_due`;--> statement-breakpoint
CREATE INDEX `event_deliveries_endpoint_due` ON `event_deliveries` (`endpoint_id`,`next_at`) WHERE "event_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX `event_deliveries_leased` ON `event_deliveries` (`endpoint_id`,`lease_until`) WHERE "event_deliveries"."lease_until" IS NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `paused_until` integer;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `pause_ms` integer DEFAULT 0 NOT NULL;