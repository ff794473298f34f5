-- The event outbox (docs/api.md#events): webhook endpoints (secrets sealed), events, and one delivery row per (event, endpoint).
CREATE TABLE `event_deliveries` (
	`event_seq` integer NOT NULL,
	`endpoint_id` integer NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`first_at` integer NOT NULL,
	`next_at` integer NOT NULL,
	`lease_until` integer,
	`lease_owner` text,
	`last_error` text,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `event_deliveries_key` ON `event_deliveries` (`event_seq`,`endpoint_id`);--> statement-breakpoint
CREATE INDEX `event_deliveries_due` ON `event_deliveries` (`next_at`) WHERE "event_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX `event_deliveries_status` ON `event_deliveries` (`status`,`event_seq`);--> statement-breakpoint
CREATE TABLE `events` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`account_id` integer NOT NULL,
	`type` text NOT NULL,
	`verification_id` text,
	`sequence` integer NOT NULL,
	`occurred_at` integer NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_id` ON `events` (`id`);--> statement-breakpoint
CREATE INDEX `events_verification` ON `events` (`verification_id`,`sequence`);--> statement-breakpoint
CREATE INDEX `events_account` ON `events` (`account_id`,`seq`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`url` text NOT NULL,
	`events` text,
	`secret` blob NOT NULL,
	`prev_secret` blob,
	`rotated_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
