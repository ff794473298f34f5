CREATE TABLE "verification_steps" (
	"verification_seq" bigint NOT NULL,
	"step" integer NOT NULL,
	"channel" text NOT NULL,
	"recipient_mask" text NOT NULL,
	"channel_timeout" integer NOT NULL,
	"sealed" "bytea",
	"provider" text,
	"delivery" text,
	"started_at" bigint,
	"ended_at" bigint,
	"end_reason" text,
	"due_at" bigint,
	CONSTRAINT "verification_steps_verification_seq_step_pk" PRIMARY KEY("verification_seq","step")
);
--> statement-breakpoint
CREATE INDEX "verification_steps_due" ON "verification_steps" USING btree ("due_at") WHERE "verification_steps"."due_at" IS NOT NULL;