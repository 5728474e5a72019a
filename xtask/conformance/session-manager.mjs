// Locating the reference's SessionManager class in an installed package, shared by the
// conformance runner (runner.mjs) and the benchmark driver (../bench/ref.mjs). Only our own code:
// it imports the installed reference, it copies none of it.
//
// pi-coding-agent exports `SessionManager` from its package entry. OpenClaw bundles it into a
// hashed chunk under `dist/`: the chunks that declare the four static constructors (preferring
// `session-manager-*.js`) are imported and exactly one exported class must look like it.

import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const STATICS = ["create", "open", "inMemory", "forkFrom"];

/** True for a class with SessionManager's static constructors. */
export function isSessionManagerClass(v) {
  return (
    typeof v === "function" &&
    typeof v.prototype === "object" &&
    STATICS.every((m) => typeof v[m] === "function")
  );
}

async function loadPi(pkgDir, pkgName) {
  const pj = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  let entry = pj.exports?.["."];
  if (entry && typeof entry === "object") entry = entry.import ?? entry.default;
  entry = entry ?? pj.main ?? "index.js";
  const mod = await import(pathToFileURL(join(pkgDir, entry)).href);
  if (!isSessionManagerClass(mod.SessionManager)) {
    throw new Error(`${pkgName}: ${entry} does not export a SessionManager class`);
  }
  return { SessionManager: mod.SessionManager, where: `${entry}#SessionManager` };
}

async function loadOpenclaw(pkgDir) {
  const dist = join(pkgDir, "dist");
  const files = readdirSync(dist).filter((f) => f.endsWith(".js"));
  const looksLikeIt = (f) => {
    const text = readFileSync(join(dist, f), "utf8");
    return STATICS.every((m) => new RegExp(`\\bstatic\\s+${m}\\s*\\(`).test(text));
  };
  let candidates = files.filter((f) => /^session-manager-.*\.js$/.test(f)).filter(looksLikeIt);
  if (candidates.length === 0) candidates = files.filter(looksLikeIt);
  const found = new Map(); // class -> "dist/file#export"
  for (const f of candidates) {
    const mod = await import(pathToFileURL(join(dist, f)).href);
    for (const [name, v] of Object.entries(mod)) {
      if (isSessionManagerClass(v) && !found.has(v)) found.set(v, `dist/${f}#${name}`);
    }
  }
  if (found.size !== 1) {
    const where = [...found.values()].join(", ") || "none";
    throw new Error(`openclaw: expected exactly one SessionManager class in dist, found: ${where}`);
  }
  const [[SessionManager, where]] = [...found.entries()];
  return { SessionManager, where };
}

/**
 * The SessionManager class of the installed reference `reference` ("openclaw" or "pi") whose
 * package (named `pkgName`) is at `pkgDir`, and where it was found ("file#export").
 * Throws an Error saying what is missing when there is not exactly one.
 */
export async function loadSessionManager(reference, pkgDir, pkgName) {
  return reference === "openclaw" ? loadOpenclaw(pkgDir) : loadPi(pkgDir, pkgName);
}
