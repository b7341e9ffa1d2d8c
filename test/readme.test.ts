import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startCli, waitForOutput } from "./kit/cli.js";

/** What ships with the package besides the code: a LICENSE, a CHANGELOG, a build before packing (the README's links: docs.test.ts). */

const repo = new URL("../", import.meta.url);

describe("the package", () => {
  it("builds before it is packed, and carries an MIT LICENSE", () => {
    const pkg = JSON.parse(readFileSync(new URL("package.json", repo), "utf8")) as { license: string; scripts: Record<string, string> };
    expect(pkg.scripts.prepack).toBe("npm run build");
    expect(pkg.license).toBe("MIT");
    expect(readFileSync(new URL("LICENSE", repo), "utf8")).toMatch(/^MIT License\n\nCopyright \(c\) 2026 uspark-watch contributors\n/);
  });
});

describe("the packed tarball", () => {
  // What `npm pack` would put in it (dist/ is built by pretest); --ignore-scripts: no second build.
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: fileURLToPath(repo), encoding: "utf8" }),
  ) as [{ files: { path: string }[]; version: string }];
  const files = packed[0].files.map((file) => file.path);
  const code = files.filter((file) => file.endsWith(".js"));

  it("carries each module once: the bundle, not tsc's modules beside it; no source map pointing at src/ it leaves out", () => {
    expect(code.filter((file) => !/^(bin\/uspark|dist\/(uspark|pipe-form|library)|dist\/chunks\/[\w-]+)\.js$/.test(file))).toEqual([]);
    expect(files.filter((file) => file.endsWith(".map"))).toEqual([]);
    expect(files).toContain("dist/index.d.ts");
    expect(files).toContain("CHANGELOG.md");
  });

  it("names its version in the CHANGELOG, and where it lives", () => {
    const pkg = JSON.parse(readFileSync(new URL("package.json", repo), "utf8")) as {
      version: string;
      repository?: unknown;
      homepage?: string;
      bugs?: unknown;
    };
    expect(readFileSync(new URL("CHANGELOG.md", repo), "utf8")).toContain(`## ${pkg.version}`);
    expect([pkg.repository, pkg.homepage, pkg.bugs].every(Boolean)).toBe(true);
  });

  it("loads pg only for serve --db: the file store, and every other command, never require it", async () => {
    const data = mkdtempSync(path.join(tmpdir(), "uspark-pg-load-"));
    try {
      // NODE_DEBUG=module: Node's CommonJS loader names each module it is asked for (pg is one).
      const { child, result } = await startCli(["serve", "--data", data, "--port", "0"], { env: { NODE_DEBUG: "module" } });
      await waitForOutput(child.stderr, (text) => text.includes("listening on"));
      child.kill("SIGTERM");
      const served = await result;
      expect(served.stderr).toContain("REQUEST picocolors");
      expect(served.stderr).not.toMatch(/REQUEST pg\b/);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });

  it("its library entry gives what src/index.ts exports, from the bundle's chunks", async () => {
    const library = (await import(new URL("dist/library.js", repo).href)) as Record<string, unknown>;
    const source = readFileSync(new URL("src/index.ts", repo), "utf8");
    const values = [...source.matchAll(/export \{([^}]+)\}/g)]
      .flatMap((m) => m[1]!.split(","))
      .map((name) => name.trim())
      .filter((name) => name && !name.startsWith("type "));
    expect(Object.keys(library).sort()).toEqual(values.sort());
  });
});
