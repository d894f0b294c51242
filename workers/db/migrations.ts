/**
 * The D1 migrations this code expects, in order (file names under migrations/, without
 * `.sql`); a test keeps the list equal to the folder. `hermes-edge status` compares it
 * with what wrangler recorded as applied.
 */
export const MIGRATIONS = [
  "0000_init",
  "0001_running_index",
  "0002_platforms",
  "0003_relay",
  "0004_route_bound",
  "0005_drop_relay_routes",
  "0006_objects_own_state",
  "0007_sessions_you_keep",
  "0008_worker_meta",
  "0009_destination_url",
  "0010_budget_reservations",
  "0011_linked_identities",
] as const;
