DROP INDEX `key_hits_key_at`;--> statement-breakpoint
ALTER TABLE `key_hits` ADD `seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Number the hits already stored 1, 2, 3... per key in time order, so a window in progress survives the upgrade.
UPDATE `key_hits` SET `seq` = `numbered`.`n` FROM (SELECT `rowid` AS `rid`, row_number() OVER (PARTITION BY `key_id` ORDER BY `at`, `rowid`) AS `n` FROM `key_hits`) AS `numbered` WHERE `key_hits`.`rowid` = `numbered`.`rid`;--> statement-breakpoint
CREATE UNIQUE INDEX `key_hits_key_seq` ON `key_hits` (`key_id`,`seq`);
