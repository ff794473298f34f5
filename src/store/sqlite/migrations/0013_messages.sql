ALTER TABLE `accounts` ADD `locale` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `otp_domain` text;--> statement-breakpoint
ALTER TABLE `verifications` ADD `sms_encoding` text;--> statement-breakpoint
ALTER TABLE `verifications` ADD `sms_segments` integer;