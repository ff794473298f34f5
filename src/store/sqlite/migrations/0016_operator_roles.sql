ALTER TABLE `accounts` ADD `custom_text` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `console_sessions` ADD `credential_generation` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `operators` ADD `role` text DEFAULT 'admin' NOT NULL;--> statement-breakpoint
ALTER TABLE `operators` ADD `credential_generation` integer DEFAULT 0 NOT NULL;