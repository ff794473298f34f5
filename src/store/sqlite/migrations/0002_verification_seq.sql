-- Verifications keyed by a row number that their ids carry (lib/verification-id.ts), hashes as bytes.
-- Ids made before this version name their row through verification_legacy_ids; the retention sweep empties it.
CREATE TABLE `verification_legacy_ids` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `verification_legacy_ids_id` ON `verification_legacy_ids` (`id`);--> statement-breakpoint
CREATE TABLE `__new_verifications` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`key_id` integer NOT NULL,
	`account_id` integer NOT NULL,
	`channel` text NOT NULL,
	`recipient_hash` blob NOT NULL,
	`recipient_mask` text NOT NULL,
	`code_hash` blob NOT NULL,
	`test_mode` text,
	`status` text DEFAULT 'active' NOT NULL,
	`charged` integer NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`failed_attempts` integer DEFAULT 0 NOT NULL,
	`locked_until` integer,
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
-- The old rowid becomes the row number; hex HMACs become bytes (the recipient's cut to 16, as new ones are).
INSERT INTO `__new_verifications`("seq", "id", "key_id", "account_id", "channel", "recipient_hash", "recipient_mask", "code_hash", "test_mode", "status", "charged", "created_at", "expires_at", "used_at", "failed_attempts", "locked_until") SELECT "rowid", "id", "key_id", "account_id", "channel", substr(unhex("recipient_hash"), 1, 16), "recipient_mask", unhex("code_hash"), "test_mode", "status", "charged", "created_at", "expires_at", "used_at", "failed_attempts", "locked_until" FROM `verifications`;--> statement-breakpoint
INSERT INTO `verification_legacy_ids`("seq", "id") SELECT "rowid", "id" FROM `verifications`;--> statement-breakpoint
DROP TABLE `verifications`;--> statement-breakpoint
ALTER TABLE `__new_verifications` RENAME TO `verifications`;--> statement-breakpoint
CREATE INDEX `verifications_recipient` ON `verifications` (`recipient_hash`,`created_at`);--> statement-breakpoint
CREATE INDEX `verifications_expiry` ON `verifications` (`expires_at`);--> statement-breakpoint
CREATE TABLE `__new_recipient_failures` (
	`recipient_hash` blob NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_recipient_failures`("recipient_hash", "at") SELECT substr(unhex("recipient_hash"), 1, 16), "at" FROM `recipient_failures` ORDER BY "rowid";--> statement-breakpoint
DROP TABLE `recipient_failures`;--> statement-breakpoint
ALTER TABLE `__new_recipient_failures` RENAME TO `recipient_failures`;--> statement-breakpoint
CREATE INDEX `recipient_failures_lookup` ON `recipient_failures` (`recipient_hash`,`at`);
