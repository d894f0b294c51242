CREATE TABLE `budget_reservations` (
	`turn_id` text NOT NULL,
	`session_id` text NOT NULL,
	`user_key` text NOT NULL,
	`day` text NOT NULL,
	`tokens` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `turn_id`)
);
--> statement-breakpoint
CREATE INDEX `budget_user_day_idx` ON `budget_reservations` (`user_key`,`day`);