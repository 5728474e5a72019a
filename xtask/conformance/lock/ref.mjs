// Locates OpenClaw 2026.6.11's session write lock inside the installed package (our own loader;
// no reference code is copied here).
//
// The lock lives in content-hashed bundler chunks (2026.6.11: dist/session-write-lock-*.js). The
// hash changes between builds, so we import every top-level dist/session-write-lock-*.js chunk and
// take the module whose exports include a function named `acquireSessionWriteLock` (the chunk that
// re-exports it under its real name), together with `cleanStaleLockFiles`,
// `resolveSessionLockMaxHoldFromTimeout`, `resolveSessionWriteLockOptions` and `testing`.
//
// The reference directory defaults to <repo>/target/conformance-ref/openclaw (install.sh); the
// environment variable CONFORMANCE_REF_DIR overrides it.
import { readdirSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(HERE, "..", "..", "..");

export function refDir() {
  return process.env.CONFORMANCE_REF_DIR || join(REPO, "target", "conformance-ref", "openclaw");
}

export async function loadLock() {
  const dist = join(refDir(), "node_modules", "openclaw", "dist");
  if (!existsSync(dist)) throw new Error(`OpenClaw is not installed at ${dist} (run xtask/conformance/install.sh openclaw)`);
  const candidates = readdirSync(dist).filter((n) => /^session-write-lock-[^.]+\.js$/.test(n)).sort();
  for (const name of candidates) {
    const mod = await import(pathToFileURL(join(dist, name)).href);
    if (typeof mod.acquireSessionWriteLock === "function" && typeof mod.cleanStaleLockFiles === "function") {
      return { chunk: name, ...mod };
    }
  }
  throw new Error(`no dist/session-write-lock-*.js chunk exports acquireSessionWriteLock (looked at ${candidates.join(", ")})`);
}
