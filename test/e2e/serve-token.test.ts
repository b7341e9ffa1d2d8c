// `uspark serve token create|list|revoke` and USPARK_SERVE_TOKEN, through the built CLI.

import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { tempDir } from "../kit/server.js";

async function create(dataDir: string, ...args: string[]) {
  return runCli(["serve", "token", "create", "--data", dataDir, ...args]);
}

describe("uspark serve token", () => {
  it("create prints the token once, alone on stdout; list and its JSON never show it", async () => {
    const dataDir = await tempDir();
    const made = await create(dataDir, "--project", "demo", "--project", "site", "--scope", "read", "--expires", "7");
    expect(made.code, made.stderr).toBe(0);
    const secret = made.stdout.toString();
    expect(secret).toMatch(/^uspark_[A-Za-z0-9_-]{43}\n$/);
    expect(made.stderr).not.toContain(secret.trim());
    expect(made.stderr).toMatch(/created token [0-9a-f]{12}: read on demo, site; expires /);

    for (const json of [false, true]) {
      const listed = await runCli(["serve", "token", "list", "--data", dataDir, ...(json ? ["--json"] : [])]);
      expect(listed.code, listed.stderr).toBe(0);
      const text = listed.stdout.toString() + listed.stderr;
      expect(text).not.toContain(secret.trim());
      expect(text).toContain("demo");
      expect(text).toContain("active");
    }
    const { tokens } = JSON.parse((await runCli(["serve", "token", "list", "--data", dataDir, "--json"])).stdout.toString()) as {
      tokens: Record<string, unknown>[];
    };
    expect(Object.keys(tokens[0]!).sort()).toEqual(["access", "created", "expires", "id", "projects", "status"]);
  });

  it("revoke marks the token revoked in the list; an unknown id is a usage error (exit 2)", async () => {
    const dataDir = await tempDir();
    await create(dataDir, "--project", "demo", "--scope", "write");
    const { tokens } = JSON.parse((await runCli(["serve", "token", "list", "--data", dataDir, "--json"])).stdout.toString()) as {
      tokens: { id: string }[];
    };
    expect((await runCli(["serve", "token", "revoke", tokens[0]!.id, "--data", dataDir])).code).toBe(0);
    expect((await runCli(["serve", "token", "list", "--data", dataDir])).stdout.toString()).toMatch(/write\s+revoked/);
    const unknown = await runCli(["serve", "token", "revoke", "nope", "--data", dataDir]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no token with id "nope"');
  });

  it.each([
    [["--project", "demo", "--scope", "admin"], /--scope/],
    [["--scope", "read"], /--project/],
    [["--project", "demo"], /--scope/],
    [["--project", "../x", "--scope", "read"], /--project/],
    [["--project", "demo", "--scope", "read", "--expires", "0"], /--expires/],
  ])("create %j is a usage error (exit 2) that writes nothing on stdout", async (args, reason) => {
    const result = await create(await tempDir(), ...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(reason);
    expect(result.stdout.length).toBe(0);
  });

  it("--expires past its range (1 to 3650 days) is refused before anything is stored (exit 2)", async () => {
    const dataDir = await tempDir();
    const refused = await create(dataDir, "--project", "demo", "--scope", "read", "--expires", "100000000");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--expires.*3650/);
    const listed = await runCli(["serve", "token", "list", "--data", dataDir, "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout.toString())).toEqual({ tokens: [] });
    expect((await create(dataDir, "--project", "demo", "--scope", "read", "--expires", "3650")).code).toBe(0);
  });

  it("list shows every other token when one record is damaged (an expiry no date can hold), and says so", async () => {
    const dataDir = await tempDir();
    expect((await create(dataDir, "--project", "demo", "--scope", "read")).code).toBe(0);
    const bad = { id: "0123456789ab", sha256: "a".repeat(64), projects: ["demo"], access: "read", created: Date.now(), expires: 1e20 };
    await writeFile(path.join(dataDir, "credentials", "tokens", `${"a".repeat(64)}.json`), JSON.stringify(bad));
    for (const json of [false, true]) {
      const listed = await runCli(["serve", "token", "list", "--data", dataDir, ...(json ? ["--json"] : [])]);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout.toString()).toContain("demo");
      expect(listed.stdout.toString()).not.toContain("0123456789ab");
      expect(listed.stderr).toMatch(/1 damaged token record/);
    }
  });

  it("takes one store at most; with none, the default one uspark serve uses (~/.uspark/serve-data)", async () => {
    const both = await runCli(["serve", "token", "list", "--data", await tempDir(), "--db", "postgres://127.0.0.1:1/x"], {
      env: { USPARK_DATABASE_URL: "" },
    });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give one of --data <dir> and --db <postgres-url>, not both");
    const home = await tempDir();
    const made = await runCli(["serve", "token", "create", "--project", "demo", "--scope", "read"], {
      env: { USPARK_DATABASE_URL: "", HOME: home },
    });
    expect(made.code, made.stderr).toBe(0);
    const listed = await runCli(["serve", "token", "list", "--data", path.join(home, ".uspark", "serve-data")], {
      env: { USPARK_DATABASE_URL: "" },
    });
    expect(listed.stdout.toString()).toContain("demo");
  });

  it("--help of each shows examples", async () => {
    for (const command of ["create", "list", "revoke"]) {
      const help = await runCli(["serve", "token", command, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout.toString()).toContain("Examples:");
      expect(help.stdout.toString()).toContain(`uspark serve token ${command}`);
    }
  });
});

describe("USPARK_SERVE_TOKEN", () => {
  it("gives uspark serve its admin token without a flag (so ps does not show it)", async () => {
    const dataDir = await tempDir();
    const admin = "env-admin-token";
    const serve = await startCli(["serve", "--data", dataDir, "--port", "0"], { env: { USPARK_SERVE_TOKEN: admin } });
    try {
      const line = await waitForOutput(serve.child.stderr, (text) => text.includes("listening on"));
      expect(line).toContain("token: required");
      expect(line).not.toContain(admin);
      const url = /listening on (\S+)/.exec(line)![1]!;
      expect((await fetch(`${url}/api/projects`)).status).toBe(401);
      expect((await fetch(`${url}/api/projects`, { headers: { authorization: `Bearer ${admin}` } })).status).toBe(200);
    } finally {
      serve.child.kill("SIGTERM");
      await serve.result;
    }
  });
});

describe("a scoped token in the client's hands", () => {
  it("a push with a read token fails (exit 1) saying the token may only read, in the server's words", async () => {
    const dataDir = await tempDir();
    const serve = await startCli(["serve", "--data", dataDir, "--port", "0"], { env: { USPARK_SERVE_TOKEN: "adm" } });
    try {
      const line = await waitForOutput(serve.child.stderr, (text) => text.includes("listening on"));
      const url = /listening on (\S+)/.exec(line)![1]!;
      const made = await fetch(`${url}/api/projects`, {
        method: "POST",
        headers: { authorization: "Bearer adm" },
        body: JSON.stringify({ id: "demo" }),
      });
      expect(made.status).toBe(201);
      const secret = (await create(dataDir, "--project", "demo", "--scope", "read")).stdout.toString().trim();
      const root = await tempDir();
      await writeFile(path.join(root, "a.txt"), "a");
      const push = await runCli(["push", "--root", root, "--api-url", url, "--project-id", "demo"], { env: { USPARK_TOKEN: secret } });
      expect(push.code).toBe(1);
      expect(push.stderr).toContain('403 forbidden: this token may only read project "demo": writing needs a write token');
      expect(push.stderr).not.toContain(secret);
    } finally {
      serve.child.kill("SIGTERM");
      await serve.result;
    }
  });
});
