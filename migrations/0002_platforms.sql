CREATE TABLE `refusal_notices` (
	`platform` text NOT NULL,
	`chat_id` text NOT NULL,
	`sent_at` integer NOT NULL,
	PRIMARY KEY(`platform`, `chat_id`)
);
--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `accepted_at` integer;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `session_id` text;