// Takes the gateway lock with the reference's own acquireGatewayLock, prints where and what it
// wrote, and holds it until stdin closes.
const dist = process.argv[2];
const { n: acquireGatewayLock } = await import(`${dist}/gateway-lock-SNEoa5VY.js`);
const fs = await import("node:fs");
const lock = await acquireGatewayLock({ allowInTests: true, timeoutMs: 2000 });
const payload = fs.readFileSync(lock.lockPath, "utf8");
process.stdout.write(JSON.stringify({ pid: process.pid, lockPath: lock.lockPath, configPath: lock.configPath, payload }) + "\n");
process.stdin.resume();
process.stdin.on("end", async () => { if (process.argv[3] !== "keep") await lock.release(); process.exit(0); });
