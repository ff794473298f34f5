-- Where each charged send's delivery stands (otp/types.ts DeliveryState): sends made before this version were
-- answered only once their delivery had ended, so an active one was accepted and a failed one refunded.
ALTER TABLE `verifications` ADD `delivery` text;--> statement-breakpoint
ALTER TABLE `verifications` ADD `delivery_provider` text;--> statement-breakpoint
ALTER TABLE `verifications` ADD `delivery_updated_at` integer;--> statement-breakpoint
UPDATE `verifications` SET `delivery` = CASE `status` WHEN 'failed' THEN 'failed' ELSE 'accepted' END WHERE `charged` = 1;--> statement-breakpoint
CREATE INDEX `verifications_sending` ON `verifications` (`created_at`) WHERE "verifications"."delivery" = 'sending';
