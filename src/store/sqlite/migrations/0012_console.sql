CREATE TABLE `console_gaps` (
	`source` text NOT NULL,
	`seq` integer NOT NULL,
	`seen_at` integer NOT NULL,
	PRIMARY KEY(`source`, `seq`)
);
--> statement-breakpoint
CREATE TABLE `console_prefix_hours` (
	`hour` integer NOT NULL,
	`account_id` integer NOT NULL,
	`prefix` text NOT NULL,
	`sends` integer NOT NULL,
	`approved` integer NOT NULL,
	PRIMARY KEY(`hour`, `account_id`, `prefix`)
);
--> statement-breakpoint
CREATE TABLE `console_prefixes` (
	`account_id` integer NOT NULL,
	`prefix` text NOT NULL,
	`sends` integer NOT NULL,
	`approved` integer NOT NULL,
	PRIMARY KEY(`account_id`, `prefix`)
);
--> statement-breakpoint
CREATE INDEX `console_prefixes_sends` ON `console_prefixes` (`sends`);--> statement-breakpoint
CREATE INDEX `console_prefixes_account` ON `console_prefixes` (`account_id`,`sends`);--> statement-breakpoint
CREATE TABLE `console_refusals` (
	`minute` integer NOT NULL,
	`account_id` integer NOT NULL,
	`rule` text NOT NULL,
	`country` text NOT NULL,
	`refusals` integer NOT NULL,
	PRIMARY KEY(`minute`, `account_id`, `rule`, `country`)
);
--> statement-breakpoint
CREATE TABLE `console_rollups` (
	`span` integer NOT NULL,
	`at` integer NOT NULL,
	`account_id` integer NOT NULL,
	`channel` text NOT NULL,
	`country` text NOT NULL,
	`provider` text NOT NULL,
	`sends` integer NOT NULL,
	`accepted` integer NOT NULL,
	`delivered` integer NOT NULL,
	`undelivered` integer NOT NULL,
	`failed` integer NOT NULL,
	`refunded` integer NOT NULL,
	`approved` integer NOT NULL,
	`monitored` integer NOT NULL,
	PRIMARY KEY(`span`, `at`, `account_id`, `channel`, `country`, `provider`)
);
--> statement-breakpoint
CREATE INDEX `console_rollups_account` ON `console_rollups` (`account_id`,`span`,`at`);--> statement-breakpoint
ALTER TABLE `verifications` ADD `country` text;--> statement-breakpoint
ALTER TABLE `verifications` ADD `fraud_monitored` text;--> statement-breakpoint
CREATE INDEX `verifications_created` ON `verifications` (`created_at`);