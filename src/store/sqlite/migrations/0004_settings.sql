-- Facts about the database itself (store/guards.ts): the fingerprint of the server secret its hashes were made with.
CREATE TABLE `settings` (
	`name` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
