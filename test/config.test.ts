import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkApiUrl,
  checkPrefix,
  givenApiUrl,
  isChosenServer,
  knownServersPath,
  loadHomeConfig,
  loadKnownServers,
  parseNonNegativeInt,
  recordKnownServer,
  resolveConnection,
  resolvePrefix,
  resolveServer,
  updateHomeConfig,
  UsageError,
  type HomeConfig,
} from "../src/config/config.js";

describe("resolveConnection", () => {
  it("should prefer flags over the environment over the home config", () => {
    const env = { USPARK_API_URL: "http://127.0.0.1:1", USPARK_TOKEN: "env-token", USPARK_PROJECT_ID: "env-project" };
    const home = { apiUrl: "http://127.0.0.1:2", token: "home-token", projectId: "home-project" };
    expect(resolveConnection({ projectId: "flag-project" }, env, home)).toEqual({
      apiUrl: "http://127.0.0.1:1",
      token: "env-token",
      projectId: "flag-project",
    });
    expect(resolveConnection({}, {}, home)).toEqual({ apiUrl: "http://127.0.0.1:2", token: "home-token", projectId: "home-project" });
  });

  it("should default to the local reference server", () => {
    expect(resolveConnection({ projectId: "p" }, {}, {}).apiUrl).toBe("http://127.0.0.1:4400");
  });

  it("should treat an empty environment variable as unset", () => {
    expect(resolveConnection({ projectId: "p" }, { USPARK_TOKEN: "" }, { token: "home" }).token).toBe("home");
  });

  it("takes what the root remembers after flags and the environment, before the home config (the token is never remembered, nor given to a remembered server it is not stored for)", () => {
    const home = {
      apiUrl: "http://127.0.0.1:2",
      token: "home-token",
      projectId: "home-project",
      knownServers: new Set(["http://127.0.0.1:3"]),
    };
    const remembered = { apiUrl: "http://127.0.0.1:3", projectId: "pulled", prefix: "app" };
    expect(resolveConnection({}, {}, home, remembered)).toEqual({ apiUrl: "http://127.0.0.1:3", token: undefined, projectId: "pulled" });
    expect(resolveConnection({ apiUrl: "http://127.0.0.1:4" }, { USPARK_PROJECT_ID: "env-project" }, home, remembered)).toEqual({
      apiUrl: "http://127.0.0.1:4",
      token: "home-token",
      projectId: "env-project",
    });
  });

  it("should ask for a project id with a hint", () => {
    const call = () => resolveConnection({}, {}, {});
    expect(call).toThrow(UsageError);
    expect(call).toThrow(/project id/);
  });
});

describe("resolveServer", () => {
  const home = { apiUrl: "https://uspark.example.com", token: "home-token", knownServers: new Set(["https://pulled.example.org"]) };
  const tree = (apiUrl: string) => ({ apiUrl, projectId: "p" });
  it("uses a remembered server, with the stored token only when it is the server that token is stored for", () => {
    expect(resolveServer({}, {}, home, tree("https://uspark.example.com/"))).toEqual({
      apiUrl: "https://uspark.example.com",
      token: "home-token",
    });
    expect(resolveServer({}, {}, home, tree("https://pulled.example.org"))).toEqual({
      apiUrl: "https://pulled.example.org",
      token: undefined,
    });
    expect(resolveServer({}, { USPARK_TOKEN: "env" }, home, tree("https://pulled.example.org"))).toEqual({
      apiUrl: "https://pulled.example.org",
      token: "env",
    });
    // A server the user gives is theirs to pair with the stored token.
    expect(resolveServer({ apiUrl: "https://other.example.org" }, {}, home, tree("https://evil.example.net"))).toEqual({
      apiUrl: "https://other.example.org",
      token: "home-token",
    });
  });

  it("stops at a tree naming a server not chosen on this machine, whatever token there is, naming it and the flag that confirms it", () => {
    const refusal = new UsageError(
      "this tree's .uspark/state.json names https://evil.example.net, a server not chosen on this machine: nothing was sent",
      "if you trust it, pass --api-url https://evil.example.net (remembered from then on)",
    );
    for (const [flags, env] of [
      [{}, {}],
      [{ token: "t" }, {}],
      [{}, { USPARK_TOKEN: "env" }],
      [{}, { USPARK_API_URL: "" }],
    ] as const) {
      expect(() => resolveServer(flags, env, home, tree("https://evil.example.net/"))).toThrow(refusal);
    }
  });

  it("chosen: the config's apiUrl (else the default), a server logged in to, a recorded one; given by flag or environment", () => {
    const cases: [HomeConfig, string, boolean][] = [
      [{}, "http://127.0.0.1:4400/", true],
      [{ apiUrl: "https://a.example" }, "http://127.0.0.1:4400", false],
      [{ apiUrl: "https://a.example/" }, "https://a.example", true],
      [{ servers: { "https://b.example": { token: "t" } } }, "https://b.example/", true],
      [{ knownServers: new Set(["https://c.example"]) }, "https://c.example", true],
      [{ knownServers: new Set(["https://c.example"]) }, "https://c.example:8443", false],
      [{ knownServers: new Set(["https://c.example/api"]) }, "https://c.example", false],
    ];
    for (const [config, url, chosen] of cases) expect(isChosenServer(url, config), `${url} with ${JSON.stringify(config)}`).toBe(chosen);
    expect(givenApiUrl({ apiUrl: "https://f" }, { USPARK_API_URL: "https://e" })).toBe("https://f");
    expect(givenApiUrl({}, { USPARK_API_URL: "https://e" })).toBe("https://e");
    expect(givenApiUrl({}, { USPARK_API_URL: "" })).toBeUndefined();
  });
});

describe("known-servers", () => {
  it("appends one normalized URL a line, mode 0600; reads them back, blank and # lines skipped; none without a file", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "uspark-known-"));
    try {
      const file = knownServersPath(path.join(dir, ".uspark", "config.json"));
      expect(loadKnownServers(file)).toEqual(new Set());
      recordKnownServer(file, "https://a.example/");
      recordKnownServer(file, "http://127.0.0.1:5");
      writeFileSync(file, `${readFileSync(file, "utf8")}\n# a note\n`);
      expect(loadKnownServers(file)).toEqual(new Set(["https://a.example", "http://127.0.0.1:5"]));
      if (process.platform !== "win32") expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("never glues a server to a line an earlier write left unfinished (a full disk)", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "uspark-known-"));
    try {
      const file = path.join(dir, "known-servers");
      writeFileSync(file, "https://a.example", { mode: 0o600 });
      recordKnownServer(file, "https://b.example");
      expect(loadKnownServers(file)).toEqual(new Set(["https://a.example", "https://b.example"]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(process.platform === "win32")("a file others may write is narrowed to 0600 and said: it decides where a token goes", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "uspark-known-"));
    try {
      const file = path.join(dir, "known-servers");
      writeFileSync(file, "https://a.example\n", { mode: 0o666 });
      chmodSync(file, 0o666);
      const said: string[] = [];
      expect(loadKnownServers(file, (message) => said.push(message))).toEqual(new Set(["https://a.example"]));
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(said).toEqual([expect.stringContaining("narrowed to 0600")]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("resolvePrefix", () => {
  const remembered = { apiUrl: "http://127.0.0.1:3/", projectId: "pulled", prefix: "app" };

  it("--prefix wins; else the remembered one, for the remembered project on the remembered server only", () => {
    expect(resolvePrefix("vendor", { apiUrl: "http://127.0.0.1:3", projectId: "pulled" }, remembered)).toBe("vendor");
    expect(resolvePrefix(undefined, { apiUrl: "http://127.0.0.1:3", projectId: "pulled" }, remembered)).toBe("app");
    expect(resolvePrefix(undefined, { apiUrl: "http://127.0.0.1:3", projectId: "other" }, remembered)).toBeUndefined();
    expect(resolvePrefix(undefined, { apiUrl: "http://127.0.0.1:9", projectId: "pulled" }, remembered)).toBeUndefined();
    expect(resolvePrefix(undefined, { apiUrl: "http://127.0.0.1:3", projectId: "pulled" }, { ...remembered, prefix: "" })).toBeUndefined();
  });
});

describe("checkApiUrl", () => {
  it("should accept https anywhere and http on loopback", () => {
    expect(checkApiUrl("https://uspark.example.com/", false)).toBe("https://uspark.example.com");
    expect(checkApiUrl("http://localhost:4400", false)).toBe("http://localhost:4400");
    expect(checkApiUrl("http://127.0.0.2:4400/base/", false)).toBe("http://127.0.0.2:4400/base");
    expect(checkApiUrl("http://[::1]:4400", false)).toBe("http://[::1]:4400");
  });

  it("should refuse plain http to another host unless --insecure", () => {
    expect(() => checkApiUrl("http://uspark.example.com", false)).toThrow(/unencrypted/);
    expect(checkApiUrl("http://uspark.example.com", true)).toBe("http://uspark.example.com");
  });

  it("should refuse what is not an http URL", () => {
    expect(() => checkApiUrl("not a url", false)).toThrow(/invalid API URL/);
    expect(() => checkApiUrl("ftp://x", false)).toThrow(/scheme/);
    expect(() => checkApiUrl("https://user:pw@x", false)).toThrow(/credentials/);
  });
});

describe("loadHomeConfig", () => {
  const withFile = (text: string | undefined, check: (file: string) => void) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "uspark-config-"));
    const file = path.join(dir, "config.json");
    if (text !== undefined) writeFileSync(file, text);
    try {
      check(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it("should read token and apiUrl", () => {
    withFile('{"token":"t","apiUrl":"https://x"}', (file) => expect(loadHomeConfig(file)).toEqual({ token: "t", apiUrl: "https://x" }));
  });

  it("should treat a missing file as no configuration", () => {
    withFile(undefined, (file) => expect(loadHomeConfig(file)).toEqual({}));
  });

  it("should stop on a broken file, naming it", () => {
    withFile("{nope", (file) => expect(() => loadHomeConfig(file)).toThrow(file));
    withFile('{"token":5}', (file) => expect(() => loadHomeConfig(file)).toThrow(/must be a string/));
  });
});

describe("home config hygiene", () => {
  const inDir = (check: (dir: string, file: string) => void) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "uspark-config-"));
    try {
      check(dir, path.join(dir, ".uspark", "config.json"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it("warns about a file others may read, naming its mode, and narrows it to 0600", () => {
    inDir((dir) => {
      const file = path.join(dir, "config.json");
      writeFileSync(file, '{"token":"t"}', { mode: 0o644 });
      chmodSync(file, 0o644);
      const warnings: string[] = [];
      expect(loadHomeConfig(file, (message) => warnings.push(message))).toEqual({ token: "t" });
      expect(warnings).toEqual([expect.stringMatching(/had mode 0644, readable by others: narrowed to 0600/)]);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      loadHomeConfig(file, (message) => warnings.push(message));
      expect(warnings).toHaveLength(1);
    });
  });

  it("names each unknown key in a warning, and still reads the known ones", () => {
    inDir((dir) => {
      const file = path.join(dir, "config.json");
      writeFileSync(file, '{"apiUrl":"https://x","tokn":"t","project":"p"}', { mode: 0o600 });
      const warnings: string[] = [];
      expect(loadHomeConfig(file, (message) => warnings.push(message))).toEqual({ apiUrl: "https://x" });
      expect(warnings).toEqual([expect.stringContaining('unknown key "tokn"'), expect.stringContaining('unknown key "project"')]);
    });
  });

  it("updateHomeConfig creates the file 0600 in a 0700 directory, and keeps the keys it does not change", () => {
    inDir((_dir, file) => {
      updateHomeConfig(file, (config) => (config.servers = { "http://127.0.0.1:4400": { token: "s" } }));
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
      writeFileSync(file, JSON.stringify({ future: 1, projectId: "p" }));
      updateHomeConfig(file, (config) => (config.apiUrl = "https://x"));
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ future: 1, projectId: "p", apiUrl: "https://x" });
      expect(statSync(file).mode & 0o777).toBe(0o600);
    });
  });

  it("a token saved by login goes to its server only; flags and the environment still win", () => {
    const home = { token: "legacy", servers: { "https://a.example/": { token: "for-a" } } };
    const servers = { "https://a.example": { token: "for-a" } };
    expect(resolveServer({ apiUrl: "https://a.example" }, {}, { ...home, servers }).token).toBe("for-a");
    expect(resolveServer({ apiUrl: "https://b.example" }, {}, { ...home, servers }).token).toBe("legacy");
    expect(resolveServer({ apiUrl: "https://b.example" }, {}, { servers }).token).toBeUndefined();
    expect(resolveServer({ apiUrl: "https://a.example", token: "flag" }, {}, { servers }).token).toBe("flag");
    expect(resolveServer({ apiUrl: "https://a.example" }, { USPARK_TOKEN: "env" }, { servers }).token).toBe("env");
  });

  it("reads the servers map with its URLs normalized, and refuses a malformed one", () => {
    inDir((dir) => {
      const file = path.join(dir, "config.json");
      writeFileSync(file, '{"servers":{"https://a.example/":{"token":"t"}}}', { mode: 0o600 });
      expect(loadHomeConfig(file).servers).toEqual({ "https://a.example": { token: "t" } });
      writeFileSync(file, '{"servers":{"https://a.example":"t"}}', { mode: 0o600 });
      expect(() => loadHomeConfig(file)).toThrow(/"servers" must map/);
    });
  });
});

describe("parseNonNegativeInt", () => {
  it("should take whole numbers only", () => {
    expect(parseNonNegativeInt("--debounce", "50")).toBe(50);
    for (const bad of ["-1", "1.5", "5s", "", "abc"]) expect(() => parseNonNegativeInt("--debounce", bad)).toThrow(/--debounce/);
  });
});

describe("credentials in API URL errors", () => {
  it("should never repeat the password of a URL it cannot parse or use", () => {
    for (const raw of [
      "http://bob:hunter2@example.com:99999/x",
      "htps://bob:hunter2@example.com",
      "ftp://bob:hunter2@example.com",
      "https://h:99999/?token=hunter2&x=1",
    ]) {
      let message = "";
      try {
        checkApiUrl(raw, false);
      } catch (error) {
        message = (error as UsageError).message + " " + (error as UsageError).hint;
      }
      expect(message, raw).not.toBe("");
      expect(message, raw).not.toContain("hunter2");
    }
  });
});

describe("checkPrefix", () => {
  it("should accept a directory under the root and refuse a typo, a file or a way out", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "uspark-prefix-"));
    try {
      mkdirSync(path.join(root, "docs"));
      writeFileSync(path.join(root, "file.txt"), "x");
      expect(() => checkPrefix(root, undefined)).not.toThrow();
      expect(() => checkPrefix(root, "docs")).not.toThrow();
      expect(() => checkPrefix(root, "./docs/")).not.toThrow();
      for (const bad of ["dcos", "file.txt", "..", "/tmp"])
        expect(() => checkPrefix(root, bad), bad).toThrow(/--prefix .* is not a directory under the root/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
