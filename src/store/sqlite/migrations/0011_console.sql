-- The operator console (docs/console.md): operators, their sessions, failed sign-in windows, and the audit log.
CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`operator` text NOT NULL,
	`source` text NOT NULL,
	`action` text NOT NULL,
	`subject` text NOT NULL,
	`details` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_log_at` ON `audit_log` (`at`);--> statement-breakpoint
CREATE TABLE `console_sessions` (
	`token_hash` blob PRIMARY KEY NOT NULL,
	`operator_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	FOREIGN KEY (`operator_id`) REFERENCES `operators`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `console_sessions_operator` ON `console_sessions` (`operator_id`);--> statement-breakpoint
CREATE INDEX `console_sessions_seen` ON `console_sessions` (`last_seen_at`);--> statement-breakpoint
CREATE TABLE `console_sign_in_attempts` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`scope` blob NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `console_sign_in_attempts_scope` ON `console_sign_in_attempts` (`scope`,`at`);--> statement-breakpoint
CREATE INDEX `console_sign_in_attempts_at` ON `console_sign_in_attempts` (`at`);--> statement-breakpoint
CREATE TABLE `operators` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`password_hash` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`created_at` integer NOT NULL,
	`password_changed_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `operators_name_unique` ON `operators` (`name`);