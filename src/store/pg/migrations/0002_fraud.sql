CREATE TABLE "fraud_blocks" (
	"account_id" integer NOT NULL,
	"kind" text NOT NULL,
	"scope" text NOT NULL,
	"started_at" bigint,
	"until" bigint,
	"level" integer DEFAULT 0 NOT NULL,
	"counts_from" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "fraud_blocks_account_id_kind_scope_pk" PRIMARY KEY("account_id","kind","scope")
);
--> statement-breakpoint
CREATE TABLE "fraud_countries" (
	"account_id" integer NOT NULL,
	"country" text NOT NULL,
	"last_approved_at" bigint NOT NULL,
	CONSTRAINT "fraud_countries_account_id_country_pk" PRIMARY KEY("account_id","country")
);
--> statement-breakpoint
CREATE TABLE "fraud_minutes" (
	"account_id" integer NOT NULL,
	"kind" text NOT NULL,
	"scope" text NOT NULL,
	"minute" bigint NOT NULL,
	"sends" integer DEFAULT 0 NOT NULL,
	"approved" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "fraud_minutes_account_id_kind_scope_minute_pk" PRIMARY KEY("account_id","kind","scope","minute")
);
--> statement-breakpoint
CREATE TABLE "fraud_sends" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"account_id" integer NOT NULL,
	"at" bigint NOT NULL,
	"country" text NOT NULL,
	"prefix" text NOT NULL,
	"ip_hash" "bytea",
	"counted" boolean NOT NULL,
	"approved_at" bigint
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "allowed_countries" text;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "daily_credit_limit" integer;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "test_recipients" boolean DEFAULT true NOT NULL;--> statement-breakpoint
CREATE INDEX "fraud_minutes_minute" ON "fraud_minutes" USING btree ("minute");--> statement-breakpoint
CREATE INDEX "fraud_sends_country" ON "fraud_sends" USING btree ("account_id","country","at") WHERE "fraud_sends"."counted";--> statement-breakpoint
CREATE INDEX "fraud_sends_prefix" ON "fraud_sends" USING btree ("account_id","prefix","at") WHERE "fraud_sends"."counted";--> statement-breakpoint
CREATE INDEX "fraud_sends_ip" ON "fraud_sends" USING btree ("ip_hash","at") WHERE "fraud_sends"."counted" AND "fraud_sends"."ip_hash" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "fraud_sends_at" ON "fraud_sends" USING btree ("at");--> statement-breakpoint
CREATE INDEX "credit_ledger_send_debits" ON "credit_ledger" USING btree ("account_id","created_at") WHERE "credit_ledger"."kind" = 'debit' AND "credit_ledger"."verification_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "credit_ledger_refunds" ON "credit_ledger" USING btree ("verification_id") WHERE "credit_ledger"."kind" = 'refund';