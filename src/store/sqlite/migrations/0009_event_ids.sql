CREATE TABLE `event_legacy_ids` (
	`id` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `event_legacy_ids` (`id`, `seq`) SELECT `id`, `seq` FROM `events`;--> statement-breakpoint
DROP INDEX `events_id`;
