CREATE TABLE `link_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`account_key` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `link_codes_account_idx` ON `link_codes` (`account_key`);--> statement-breakpoint
CREATE TABLE `link_guesses` (
	`account_key` text PRIMARY KEY NOT NULL,
	`failures` integer NOT NULL,
	`window_start` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `linked_accounts` (
	`account_key` text PRIMARY KEY NOT NULL,
	`person_id` text NOT NULL,
	`platform` text NOT NULL,
	`user_id` text NOT NULL,
	`linked_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `linked_person_idx` ON `linked_accounts` (`person_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `linked_person_platform_idx` ON `linked_accounts` (`person_id`,`platform`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `handoff_from` text;