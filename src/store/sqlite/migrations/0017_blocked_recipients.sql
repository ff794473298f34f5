ALTER TABLE `events` ADD `recipient_hash` blob;--> statement-breakpoint
CREATE INDEX `events_recipient` ON `events` (`recipient_hash`,`occurred_at`) WHERE "events"."recipient_hash" IS NOT NULL;