// Skips an esbuild build whose result is already on disk. The three builds (cli/build.mjs,
// workers/console/build.mjs, workers/lazy/build.mjs) run far more often than their sources
// change: wrangler's [build] runs the last two before every `wrangler dev` and
// `wrangler deploy`, `npm pack` runs all three through `prepare`, and one `npm test` starts
// three wranglers and a pack. Measured on 3 Dec: the lazy modules alone cost 3.5 s of CPU per
// build, about 12 s per `npm test` for the three builds together, for files that had not changed.
//
// A build records, in node_modules/.cache/hermes-edge-build/<name>.json, the hash of every file
// esbuild read (its metafile's inputs: our sources and the libraries), of every file it wrote,
// and a key (esbuild's version, the build script itself, what the caller adds). The next run
// rebuilds unless every one of them is unchanged: an edited source, an updated library, a
// deleted or edited output, another esbuild or an edited build script all rebuild. A new file
// can only join a build through an import in a file that was read, so it is seen too.
// Deleting the folder is always safe.
//
// Several processes may want the same build at once (the e2e Workers' wranglers, the dry-run
// check): one builds, the others wait for it and then find the result fresh.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { version as esbuildVersion } from "esbuild";

const root = path.resolve(fileURLToPath(new URL("..", import.meta.url)));
const cacheDir = path.join(root, "node_modules", ".cache", "hermes-edge-build");
/** How long a build waits for another process building the same thing. */
const LOCK_WAIT_MS = 180_000;
/** A lock with no pid in it this long after it was made was left by a build killed between the two steps. */
const PIDLESS_LOCK_MS = 10_000;
/** Between two looks at a lock another process holds. */
const waitALittle = () => new Promise((resolve) => setTimeout(resolve, 100));

function hashOf(file) {
  try {
    return createHash("sha1").update(readFileSync(file)).digest("hex");
  } catch {
    return null; // missing: never equal to a recorded hash
  }
}

function keyOf(script, extra) {
  const self = fileURLToPath(import.meta.url);
  return createHash("sha1")
    .update(`${esbuildVersion}\0${hashOf(self)}\0${hashOf(script)}\0${JSON.stringify(extra)}`)
    .digest("hex");
}

function isFresh(stampFile, key) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampFile, "utf8"));
  } catch {
    return false;
  }
  if (stamp?.key !== key || typeof stamp.files !== "object" || stamp.files === null) return false;
  for (const [rel, hash] of Object.entries(stamp.files)) if (hashOf(path.join(root, rel)) !== hash) return false;
  return true;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

/** Takes the build's lock (a directory holding the builder's pid); waits while a live process holds it. */
async function lock(lockDir, pause) {
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(path.join(lockDir, "pid"), String(process.pid));
      return;
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
    }
    if (isStale(lockDir)) {
      rmSync(lockDir, { recursive: true, force: true }); // left by a build that was killed
      continue;
    }
    if (Date.now() > until) throw new Error(`another build has held ${lockDir} for ${LOCK_WAIT_MS / 1000} s; if no build is running, delete it`);
    await pause();
  }
}

/** The lock's holder is gone: its pid names no live process, or it never wrote one and the lock is old. */
function isStale(lockDir) {
  let holder;
  try {
    holder = Number(readFileSync(path.join(lockDir, "pid"), "utf8"));
  } catch {
    try {
      return Date.now() - statSync(lockDir).mtimeMs > PIDLESS_LOCK_MS;
    } catch {
      return true; // removed meanwhile: try again
    }
  }
  return Number.isInteger(holder) && holder > 0 && !alive(holder);
}

/**
 * Runs `build` unless its last result is still on disk. `build` returns the files esbuild read
 * and the files written (absolute paths or relative to the project root).
 * @param {{ name: string, script: string, extra?: unknown }} what `script`: the build script's import.meta.url
 * @param {() => Promise<{ inputs: string[], outputs: string[] }>} build
 * @param {{ pause?: () => Promise<void> }} [opts] `pause`: between looks at a lock another holds (tests pass one without a timer)
 * @returns {Promise<boolean>} whether it built
 */
export async function cachedBuild(what, build, opts = {}) {
  mkdirSync(cacheDir, { recursive: true });
  const stampFile = path.join(cacheDir, `${what.name}.json`);
  const key = keyOf(fileURLToPath(what.script), what.extra ?? null);
  if (isFresh(stampFile, key)) return false;
  const lockDir = path.join(cacheDir, `${what.name}.lock`);
  await lock(lockDir, opts.pause ?? waitALittle);
  try {
    if (isFresh(stampFile, key)) return false; // built by the process we waited for
    rmSync(stampFile, { force: true });
    const { inputs, outputs } = await build();
    const files = {};
    for (const file of [...inputs, ...outputs]) {
      const abs = path.resolve(root, file);
      const hash = hashOf(abs);
      if (hash !== null) files[path.relative(root, abs)] = hash;
    }
    const tmp = `${stampFile}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ key, files }));
    renameSync(tmp, stampFile);
    return true;
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

/** The files an esbuild build read, from its metafile (plugin namespaces such as `one-validator:…` are not files). */
export function metafileInputs(metafile) {
  return Object.keys(metafile.inputs).filter((p) => !/^[\w-]+:/.test(p));
}
