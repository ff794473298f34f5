ALTER TABLE `events` ADD `verification_seq` integer;--> statement-breakpoint
-- Each verification's events found through the old index (verifications.id has none).
UPDATE `events` SET `verification_seq` = v.`seq` FROM `verifications` v WHERE `events`.`verification_id` = v.`id`;--> statement-breakpoint
DROP INDEX `events_verification`;--> statement-breakpoint
CREATE INDEX `events_verification_seq` ON `events` (`verification_seq`,`verification_id`,`sequence`);
