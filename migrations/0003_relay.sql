CREATE TABLE `relay_routes` (
	`platform` text PRIMARY KEY NOT NULL,
	`gateway_id` text NOT NULL,
	`updated_at` integer NOT NULL
);
