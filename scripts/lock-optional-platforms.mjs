// Records, in package-lock.json, the optional platform builds (darwin, win32, ...) that the
// registry mirror used here does not serve. `npm install` leaves them out of the lock when it cannot
// fetch their metadata, and `npm ci` then refuses the lock as out of sync. With an entry naming
// their os/cpu, `npm ci` sees the lock complete and skips them on this platform without a download.
// Run after `npm install` changes the lock: node scripts/lock-optional-platforms.mjs
// The entries go where npm itself puts them (keys sorted as npm sorts them), so that a later
// `npm install` leaves the file byte for byte as it is, and running this twice changes nothing.
import fs from "node:fs";

// A path argument names another lock file (the tests run this on a copy).
const file = process.argv[2] ?? new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(fs.readFileSync(file, "utf8"));
const pkgs = lock.packages;
const OS = ["darwin", "win32", "linux", "freebsd", "android", "sunos", "openbsd", "netbsd", "aix"];
const CPU = ["arm64", "x64", "ia32", "arm", "ppc64", "s390x", "riscv64", "loong64", "mips64el", "wasm32"];

let added = 0;
for (const [path, meta] of Object.entries(pkgs)) {
  for (const [name, spec] of Object.entries(meta.optionalDependencies ?? {})) {
    const parent = path === "" ? "" : path + "/";
    if (pkgs[`${parent}node_modules/${name}`] || pkgs[`node_modules/${name}`]) continue;
    const parts = name.split("/").pop().split("-");
    const os = OS.filter((o) => parts.includes(o) || (o === "win32" && parts.includes("win32")));
    const cpu = CPU.filter((c) => parts.includes(c) || (c === "arm" && parts.includes("gnueabihf")));
    if (!/^\d+\.\d+\.\d+/.test(spec) || (!os.length && !cpu.length)) continue; // only exact, platform-specific builds
    // Fields in npm's own order for such an entry.
    pkgs[`node_modules/${name}`] = {
      version: spec,
      ...(cpu.length ? { cpu } : {}),
      optional: true,
      ...(os.length ? { os } : {}),
    };
    added++;
  }
}
// npm (@npmcli/arborist) writes `packages` sorted by key with localeCompare(…, "en").
lock.packages = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => a.localeCompare(b, "en")));
fs.writeFileSync(file, JSON.stringify(lock, null, 2) + "\n");
console.log(`recorded ${added} optional platform builds`);
