ALTER TABLE `api_keys` ADD `hook` text;--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hook` ON `api_keys` (`hook`);--> statement-breakpoint
ALTER TABLE `verifications` ADD `checked_by` text;