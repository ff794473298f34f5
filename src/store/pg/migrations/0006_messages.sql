ALTER TABLE "accounts" ADD COLUMN "locale" text;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "otp_domain" text;--> statement-breakpoint
ALTER TABLE "verifications" ADD COLUMN "sms_encoding" text;--> statement-breakpoint
ALTER TABLE "verifications" ADD COLUMN "sms_segments" integer;