CREATE TABLE `home_channels` (
	`platform` text PRIMARY KEY NOT NULL,
	`chat_id` text NOT NULL,
	`thread_id` text,
	`chat_name` text,
	`set_by` text,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`role` text NOT NULL,
	`content` text,
	`tool_calls` text,
	`tool_call_id` text,
	`tool_name` text,
	`created_at` integer NOT NULL,
	`finish_reason` text,
	`token_count` integer,
	`platform_message_id` text,
	`active` integer DEFAULT 1 NOT NULL,
	`turn_id` text
);
--> statement-breakpoint
CREATE INDEX `messages_session_idx` ON `messages` (`session_id`,`id`);--> statement-breakpoint
CREATE TABLE `session_routes` (
	`session_key` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`origin` text,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `session_routes_session_idx` ON `session_routes` (`session_id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`source` text NOT NULL,
	`user_id` text,
	`chat_id` text,
	`chat_type` text,
	`thread_id` text,
	`session_key` text,
	`title` text,
	`model` text,
	`parent_session_id` text,
	`started_at` integer NOT NULL,
	`ended_at` integer,
	`last_active_at` integer NOT NULL,
	`end_reason` text,
	`message_count` integer DEFAULT 0 NOT NULL,
	`tool_call_count` integer DEFAULT 0 NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`active_turn_id` text,
	`turn_started_at` integer,
	`handoff_state` text,
	`handoff_platform` text,
	`handoff_error` text,
	`handoff_requested_at` integer,
	`handoff_claimed_at` integer,
	`handoff_finished_at` integer,
	`handoff_chat_id` text,
	`handoff_thread` integer DEFAULT 1 NOT NULL,
	`handoff_dest_chat_id` text,
	`handoff_dest_thread_id` text
);
--> statement-breakpoint
CREATE INDEX `sessions_last_active_idx` ON `sessions` (`last_active_at`);--> statement-breakpoint
CREATE INDEX `sessions_key_idx` ON `sessions` (`session_key`);--> statement-breakpoint
CREATE INDEX `sessions_title_idx` ON `sessions` (`title`);--> statement-breakpoint
CREATE INDEX `sessions_source_user_idx` ON `sessions` (`source`,`user_id`);--> statement-breakpoint
CREATE INDEX `sessions_handoff_open_idx` ON `sessions` (`handoff_state`,`handoff_requested_at`) WHERE handoff_state IN ('pending', 'running');--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`platform` text NOT NULL,
	`delivery_id` text NOT NULL,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`platform`, `delivery_id`)
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_received_idx` ON `webhook_deliveries` (`received_at`);