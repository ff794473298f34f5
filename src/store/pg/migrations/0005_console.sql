CREATE TABLE "console_gaps" (
	"source" text NOT NULL,
	"seq" bigint NOT NULL,
	"seen_at" bigint NOT NULL,
	CONSTRAINT "console_gaps_source_seq_pk" PRIMARY KEY("source","seq")
);
--> statement-breakpoint
CREATE TABLE "console_prefix_hours" (
	"hour" bigint NOT NULL,
	"account_id" integer NOT NULL,
	"prefix" text NOT NULL,
	"sends" integer NOT NULL,
	"approved" integer NOT NULL,
	CONSTRAINT "console_prefix_hours_hour_account_id_prefix_pk" PRIMARY KEY("hour","account_id","prefix")
);
--> statement-breakpoint
CREATE TABLE "console_prefixes" (
	"account_id" integer NOT NULL,
	"prefix" text NOT NULL,
	"sends" integer NOT NULL,
	"approved" integer NOT NULL,
	CONSTRAINT "console_prefixes_account_id_prefix_pk" PRIMARY KEY("account_id","prefix")
);
--> statement-breakpoint
CREATE TABLE "console_refusals" (
	"minute" bigint NOT NULL,
	"account_id" integer NOT NULL,
	"rule" text NOT NULL,
	"country" text NOT NULL,
	"refusals" integer NOT NULL,
	CONSTRAINT "console_refusals_minute_account_id_rule_country_pk" PRIMARY KEY("minute","account_id","rule","country")
);
--> statement-breakpoint
CREATE TABLE "console_rollups" (
	"span" integer NOT NULL,
	"at" bigint NOT NULL,
	"account_id" integer NOT NULL,
	"channel" text NOT NULL,
	"country" text NOT NULL,
	"provider" text NOT NULL,
	"sends" integer NOT NULL,
	"accepted" integer NOT NULL,
	"delivered" integer NOT NULL,
	"undelivered" integer NOT NULL,
	"failed" integer NOT NULL,
	"refunded" integer NOT NULL,
	"approved" integer NOT NULL,
	"monitored" integer NOT NULL,
	CONSTRAINT "console_rollups_span_at_account_id_channel_country_provider_pk" PRIMARY KEY("span","at","account_id","channel","country","provider")
);
--> statement-breakpoint
ALTER TABLE "verifications" ADD COLUMN "country" text;--> statement-breakpoint
ALTER TABLE "verifications" ADD COLUMN "fraud_monitored" text;--> statement-breakpoint
CREATE INDEX "console_prefixes_sends" ON "console_prefixes" USING btree ("sends");--> statement-breakpoint
CREATE INDEX "console_prefixes_account" ON "console_prefixes" USING btree ("account_id","sends");--> statement-breakpoint
CREATE INDEX "console_rollups_account" ON "console_rollups" USING btree ("account_id","span","at");--> statement-breakpoint
CREATE INDEX "verifications_created" ON "verifications" USING btree ("created_at");