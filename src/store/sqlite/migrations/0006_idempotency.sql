CREATE TABLE `idempotency_keys` (
	`key_id` integer NOT NULL,
	`method` text NOT NULL,
	`path` text NOT NULL,
	`idempotency_key` text NOT NULL,
	`fingerprint` blob NOT NULL,
	`state` text NOT NULL,
	`status` integer NOT NULL,
	`body` text NOT NULL,
	`verification_seq` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idempotency_keys_scope` ON `idempotency_keys` (`key_id`,`method`,`path`,`idempotency_key`);--> statement-breakpoint
CREATE INDEX `idempotency_keys_created` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE INDEX `idempotency_keys_running` ON `idempotency_keys` (`verification_seq`) WHERE "idempotency_keys"."state" = 'running';