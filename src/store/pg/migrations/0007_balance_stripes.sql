CREATE TABLE "account_balances" (
	"account_id" integer NOT NULL,
	"stripe" integer NOT NULL,
	"balance" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "account_balances_account_id_stripe_pk" PRIMARY KEY("account_id","stripe")
);
--> statement-breakpoint
ALTER TABLE "account_balances" ADD CONSTRAINT "account_balances_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Every account gets its 16 rows (store/pg/balances.ts BALANCE_STRIPES), its balance so far spread over them.
INSERT INTO "account_balances" ("account_id", "stripe", "balance")
SELECT a."id", s.s, CASE WHEN a."balance" < 0 THEN CASE WHEN s.s = 0 THEN a."balance" ELSE 0 END
  ELSE a."balance" / 16 + CASE WHEN s.s < a."balance" % 16 THEN 1 ELSE 0 END END
FROM "accounts" a CROSS JOIN generate_series(0, 15) AS s(s) ORDER BY a."id", s.s;--> statement-breakpoint
ALTER TABLE "accounts" DROP COLUMN "balance";