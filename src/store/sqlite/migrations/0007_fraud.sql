-- Fraud guard (docs/api.md#fraud-guard): account settings, sends counted by rules 2-4 and their counts per minute, proven countries, rule 4 blocks.
CREATE TABLE `fraud_blocks` (
	`account_id` integer NOT NULL,
	`kind` text NOT NULL,
	`scope` text NOT NULL,
	`started_at` integer,
	`until` integer,
	`level` integer DEFAULT 0 NOT NULL,
	`counts_from` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`account_id`, `kind`, `scope`)
);
--> statement-breakpoint
CREATE TABLE `fraud_countries` (
	`account_id` integer NOT NULL,
	`country` text NOT NULL,
	`last_approved_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `country`)
);
--> statement-breakpoint
CREATE TABLE `fraud_minutes` (
	`account_id` integer NOT NULL,
	`kind` text NOT NULL,
	`scope` text NOT NULL,
	`minute` integer NOT NULL,
	`sends` integer DEFAULT 0 NOT NULL,
	`approved` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`account_id`, `kind`, `scope`, `minute`)
);
--> statement-breakpoint
CREATE INDEX `fraud_minutes_minute` ON `fraud_minutes` (`minute`);--> statement-breakpoint
CREATE TABLE `fraud_sends` (
	`seq` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`at` integer NOT NULL,
	`country` text NOT NULL,
	`prefix` text NOT NULL,
	`ip_hash` blob,
	`counted` integer NOT NULL,
	`approved_at` integer
);
--> statement-breakpoint
CREATE INDEX `fraud_sends_country` ON `fraud_sends` (`account_id`,`country`,`at`) WHERE "fraud_sends"."counted" = 1;--> statement-breakpoint
CREATE INDEX `fraud_sends_prefix` ON `fraud_sends` (`account_id`,`prefix`,`at`) WHERE "fraud_sends"."counted" = 1;--> statement-breakpoint
CREATE INDEX `fraud_sends_ip` ON `fraud_sends` (`ip_hash`,`at`) WHERE "fraud_sends"."counted" = 1 AND "fraud_sends"."ip_hash" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `fraud_sends_at` ON `fraud_sends` (`at`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `allowed_countries` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `daily_credit_limit` integer;--> statement-breakpoint
ALTER TABLE `accounts` ADD `test_recipients` integer DEFAULT true NOT NULL;--> statement-breakpoint
CREATE INDEX `credit_ledger_send_debits` ON `credit_ledger` (`account_id`,`created_at`) WHERE "credit_ledger"."kind" = 'debit' AND "credit_ledger"."verification_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `credit_ledger_refunds` ON `credit_ledger` (`verification_id`) WHERE "credit_ledger"."kind" = 'refund';