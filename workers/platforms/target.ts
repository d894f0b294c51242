import * as z from "zod";
import type { PlatformName } from "./names.ts";
import { PlatformApiError, type ReplyTarget } from "./types.ts";

/**
 * A platform's reply target, typed inside its adapter (as vercel/chat's `Adapter<TThreadId>`):
 * neutral code holds the opaque {@link ReplyTarget}; only the adapter's codec makes one
 * (`encode`) or reads one (`decode`). The `ref` on disk (D1 turns, R2, relay frames) stays
 * the compact JSON of one-letter keys it always was, so rows stored before still decode.
 */
export interface TargetCodec<T extends { private: boolean }> {
  readonly platform: PlatformName;
  /** The opaque target of a typed one. */
  encode(target: T): ReplyTarget;
  /** The typed target, or null when it is another platform's or its ref fails the schema (hostile, corrupt). */
  decode(target: ReplyTarget): T | null;
  /** The typed target of stored fields (`{c: "…", t: null}`), validated as {@link decode} does; null when they fail. */
  fromFields(fields: Record<string, string | null | undefined>, isPrivate: boolean): T | null;
  /** Like {@link decode}, but a target that does not decode is the platform refusing the call. */
  read(target: ReplyTarget): T;
  /** The chat and thread it points at, as the relay contract's `chat_id` / `thread_id` strings. */
  where(target: T): { chatId: string; threadId: string | null };
}

/** How one platform's typed target maps to its stored ref (one-letter keys, string values). */
export interface TargetCodecSpec<T extends { private: boolean }, W extends Record<string, string | undefined>> {
  platform: PlatformName;
  /** The stored ref's fields, strictly: unknown keys, non-strings and bad ids are refused (made on the codec's first use, not at start-up). */
  wire: () => z.ZodType<W>;
  toWire(target: Omit<T, "private">): { [K in keyof W]: string | null | undefined };
  fromWire(wire: W, isPrivate: boolean): T;
  where(target: T): { chatId: string; threadId: string | null };
}

/** A ref is small: anything longer is not one an adapter made. */
const MAX_REF_LENGTH = 4096;

/** The codec of one platform's targets. */
export function targetCodec<T extends { private: boolean }, W extends Record<string, string | undefined>>(spec: TargetCodecSpec<T, W>): TargetCodec<T> {
  let schema: z.ZodType<W> | undefined;
  const wireOf = (raw: unknown) => (schema ??= spec.wire()).safeParse(raw);
  const decode = (target: ReplyTarget): T | null => {
    if (target.platform !== spec.platform || typeof target.ref !== "string" || target.ref.length > MAX_REF_LENGTH) return null;
    let raw: unknown;
    try {
      raw = JSON.parse(target.ref);
    } catch {
      return null;
    }
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
    const wire = wireOf(raw);
    return wire.success ? spec.fromWire(wire.data, target.private === true) : null;
  };
  const fromFields = (fields: Record<string, string | null | undefined>, isPrivate: boolean): T | null => {
    const wire = wireOf(Object.fromEntries(Object.entries(fields).filter(([, v]) => typeof v === "string" && v !== "")));
    return wire.success ? spec.fromWire(wire.data, isPrivate) : null;
  };
  return {
    platform: spec.platform,
    fromFields,
    encode(target) {
      const fields: Record<string, string> = {};
      for (const [k, v] of Object.entries(spec.toWire(target))) if (typeof v === "string" && v !== "") fields[k] = v;
      return { platform: spec.platform, private: target.private, ref: JSON.stringify(fields) };
    },
    decode,
    read(target) {
      const t = decode(target);
      if (!t) throw new PlatformApiError(spec.platform, "bad_target", `not a ${spec.platform} reply target this Worker made (${target.ref.slice(0, 80)})`);
      return t;
    },
    where: spec.where,
  };
}

/** Zod for a decimal id (a Telegram chat, a Discord snowflake): digits, optionally signed. */
export const decimalId = (signed: boolean) => z.string().regex(signed ? /^-?\d{1,20}$/ : /^\d{1,20}$/);
