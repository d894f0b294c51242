import type { PlatformAdapter, ReplyTarget } from "../platforms/types.ts";
import type { ReplyChannel } from "../runtime/index.ts";

/** A platform adapter as the runtime's reply channel for one target. */
export function adapterChannel(adapter: PlatformAdapter, target: ReplyTarget): ReplyChannel {
  const caps = adapter.capabilities;
  return {
    caps: {
      edits: caps.edits,
      typing: caps.typing && adapter.typing !== undefined,
      editIntervalMs: target.private ? caps.editIntervalMs.private : caps.editIntervalMs.group,
    },
    typing: () => adapter.typing?.(target) ?? Promise.resolve(),
    show: (markdown, ids, mode) => adapter.show(target, markdown, ids, mode),
    post: (markdown) => adapter.post(target, markdown),
  };
}
