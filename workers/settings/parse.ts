/**
 * What a setting's parser makes of its raw value: the value the Worker runs on, and, when
 * the raw value was not understood, what is wrong, what happens instead and what to write
 * (the part after `NAME=value`, e.g. "is not a whole number: the budget is off; write 10000").
 */
export interface Parsed<T> {
  value: T;
  problem?: string;
}

/** Reads one trimmed raw value (undefined: unset or empty). Never throws. */
export type Parser<T> = (raw: string | undefined) => Parsed<T>;

/**
 * A parser from a check of the trimmed text (plain code: settings are read on every request,
 * and a schema per setting cost start-up time): unset gives `unset`; a value `read` refuses
 * (`undefined`) gives `fallback` and the problem `bad` (what is wrong: what happens instead;
 * what to write).
 */
function fromCheck<T, U, F>(read: (raw: string) => T | undefined, unset: U, fallback: F, bad: string): Parser<T | U | F> {
  return (raw) => {
    if (raw === undefined) return { value: unset };
    const v = read(raw);
    return v !== undefined ? { value: v } : { value: fallback, problem: bad };
  };
}

/** Text as given (trimmed); unset is undefined. */
export const text: Parser<string | undefined> = (raw) => ({ value: raw });

/** A comma list, empty entries dropped. */
export function commaList(v: string | undefined): string[] {
  return (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A number written the way the Worker has always read it (`Number(…)`: `10000`, `1e4`). */
const numeric = (s: string) => s !== "" && Number.isFinite(Number(s));
const wholePositive = (s: string) => (numeric(s) && Number.isInteger(Number(s)) && Number(s) > 0 ? Number(s) : undefined);

/**
 * A positive whole number. `unset` is what an empty setting means; a bad value means
 * `fallback`, said in `whenBad` ("the budget is off"), with `example` as the fix.
 */
export function positiveWhole<U, F>(opts: { unset: U; fallback: F; whenBad: string; example: string }): Parser<number | U | F> {
  return fromCheck(wholePositive, opts.unset, opts.fallback, `is not a positive whole number: ${opts.whenBad}; write a number such as ${opts.example}`);
}

/** A whole number of at least `min`: below it, `min` is used (and said); not a number, `fallback`. */
export function wholeAtLeast(opts: { min: number; fallback: number; example: string }): Parser<number> {
  const whole = positiveWhole({ unset: opts.fallback, fallback: opts.fallback, whenBad: `the default ${opts.fallback} is used`, example: opts.example });
  return (raw) => {
    const r = whole(raw);
    if (r.problem || r.value >= opts.min) return r;
    return { value: opts.min, problem: `is below the least allowed, ${opts.min}: ${opts.min} is used; write ${opts.min} or more` };
  };
}

/** A number of milliseconds, 0 or more (unset: undefined, the built-in default). */
export function milliseconds(whenBad: string): Parser<number | undefined> {
  return (raw) => {
    if (raw === undefined) return { value: undefined };
    if (!numeric(raw)) return { value: undefined, problem: `is not a number of milliseconds: ${whenBad}; write a number such as 15` };
    const n = Number(raw);
    return n < 0 ? { value: 0, problem: "is negative: 0 is used; write 0 or more" } : { value: n };
  };
}

/** One of `choices` exactly; anything else means `fallback` (said). */
export function oneOf<const C extends string>(choices: readonly C[], fallback: C): Parser<C> {
  const pick = (raw: string) => choices.find((c) => c === raw);
  return fromCheck(pick, fallback, fallback, `is not one of ${choices.join(", ")}: ${fallback} is used; write ${choices.map((c) => `'${c}'`).join(" or ")}`);
}

/** An http(s) URL; a bad one means `fallback` (said in `whenBad`). */
export function httpUrl<U>(unset: U, whenBad: string): Parser<string | U> {
  const url = (s: string) => {
    try {
      const u = new URL(s);
      return u.protocol === "https:" || u.protocol === "http:" ? s : undefined;
    } catch {
      return undefined;
    }
  };
  return fromCheck(url, unset, unset, `is not an http(s) URL: ${whenBad}; write a full URL such as https://…`);
}

/** A hex string of `length` characters; kept as given either way (`consequence`: what a bad one does). */
export function hex(length: number, consequence: string): Parser<string | undefined> {
  const pattern = new RegExp(`^[0-9a-fA-F]{${length}}$`);
  return (raw) => (raw === undefined || pattern.test(raw) ? { value: raw } : { value: raw, problem: `is not ${length} hex characters: ${consequence}` });
}
