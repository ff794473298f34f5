CREATE TABLE `verification_steps` (
	`verification_seq` integer NOT NULL,
	`step` integer NOT NULL,
	`channel` text NOT NULL,
	`recipient_mask` text NOT NULL,
	`channel_timeout` integer NOT NULL,
	`sealed` blob,
	`provider` text,
	`delivery` text,
	`started_at` integer,
	`ended_at` integer,
	`end_reason` text,
	`due_at` integer,
	PRIMARY KEY(`verification_seq`, `step`)
);
--> statement-breakpoint
CREATE INDEX `verification_steps_due` ON `verification_steps` (`due_at`) WHERE "verification_steps"."due_at" IS NOT NULL;