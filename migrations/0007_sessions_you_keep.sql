CREATE TABLE `summaries` (
	`session_id` text PRIMARY KEY NOT NULL,
	`summary` text NOT NULL,
	`folded_through` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `usage` (
	`turn_id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`user_key` text NOT NULL,
	`day` text NOT NULL,
	`input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `usage_day_idx` ON `usage` (`day`);--> statement-breakpoint
CREATE INDEX `usage_user_day_idx` ON `usage` (`user_key`,`day`);--> statement-breakpoint
CREATE INDEX `usage_session_idx` ON `usage` (`session_id`);--> statement-breakpoint
ALTER TABLE `messages` ADD `user_key` text;--> statement-breakpoint
CREATE INDEX `messages_created_idx` ON `messages` (`created_at`);--> statement-breakpoint
ALTER TABLE `sessions` ADD `instructions` text;