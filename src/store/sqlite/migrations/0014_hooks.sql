ALTER TABLE `api_keys` ADD `hook` text;--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hook` ON `api_keys` (`hook`);--> statement-breakpoint
ALTER TABLE `verifications` ADD `checked_by` text;--> statement-breakpoint
ALTER TABLE `console_rollups` ADD `checked` integer DEFAULT 0 NOT NULL;