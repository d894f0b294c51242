DROP TABLE `refusal_notices`;--> statement-breakpoint
DROP TABLE `webhook_deliveries`;--> statement-breakpoint
ALTER TABLE `messages` ADD `local_id` integer;--> statement-breakpoint
ALTER TABLE `messages` ADD `input_tokens` integer;--> statement-breakpoint
ALTER TABLE `messages` ADD `output_tokens` integer;--> statement-breakpoint
ALTER TABLE `messages` ADD `model` text;--> statement-breakpoint
-- Rows written before the session objects kept their own transcripts: their D1 id is their local id.
UPDATE `messages` SET `local_id` = `id` WHERE `local_id` IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `messages_local_idx` ON `messages` (`session_id`,`local_id`);