// A browser's part in plain HTTP: a cookie jar of one site, and forms sent with the CSRF field of
// the page they were read from.

import { createToken } from "../../../src/server/index.js";
import { openCredentials } from "../../../src/server/index.js";
import type { TokenSpec } from "../../../src/server/tokens.js";
import type { TestServer } from "../../kit/server.js";

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

export class WebClient {
  private readonly cookies = new Map<string, string>();

  constructor(readonly base: string) {}

  async get(path: string): Promise<Answer> {
    return this.send(path, { method: "GET" });
  }

  /** POSTs `fields` to `action`, with the CSRF field of the page at `from` unless `csrf` is given. */
  async post(action: string, fields: Record<string, string | string[]>, csrf?: string): Promise<Answer> {
    const body = new URLSearchParams();
    body.set("csrf", csrf ?? csrfOf((await this.get(action === "/login" ? "/login" : "/")).text));
    for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) body.append(name, one);
    return this.send(action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: body.toString() });
  }

  async signIn(token: string): Promise<Answer> {
    const answer = await this.post("/login", { token });
    if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}: ${answer.text}`);
    return answer;
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private async send(path: string, init: RequestInit): Promise<Answer> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const res = await fetch(this.base + path, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      const [name, value] = [pair!.slice(0, at), pair!.slice(at + 1)];
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
}

export function csrfOf(page: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error("no CSRF field on the page");
  return match[1]!;
}

/** A scoped token made as `uspark serve token create` would, on the store `t` serves. */
export async function mintToken(t: TestServer, spec: TokenSpec): Promise<{ secret: string; id: string }> {
  const opened = await openCredentials({ dataDir: t.databaseUrl ? undefined : t.dataDir, databaseUrl: t.databaseUrl });
  try {
    const { secret, record } = await createToken(opened.credentials, spec, Date.now());
    return { secret, id: record.id };
  } finally {
    await opened.close();
  }
}

export async function revokeToken(t: TestServer, id: string): Promise<void> {
  const opened = await openCredentials({ dataDir: t.databaseUrl ? undefined : t.dataDir, databaseUrl: t.databaseUrl });
  try {
    await opened.credentials.revokeToken(id, Date.now());
  } finally {
    await opened.close();
  }
}

/** A Claude stream (the shape `claude -p --output-format stream-json --verbose` writes) of one session. */
export function claudeTranscript(sessionId: string, text: string, editedPath: string): string {
  const events = [
    {
      type: "system",
      subtype: "init",
      session_id: sessionId,
      claude_code_version: "2.0.0",
      apiKeySource: "none",
      permissionMode: "default",
      tools: [],
    },
    {
      type: "assistant",
      session_id: sessionId,
      message: {
        content: [
          { type: "text", text },
          { type: "tool_use", id: "t1", name: "Write", input: { file_path: editedPath, content: "x" } },
        ],
      },
    },
    { type: "user", session_id: sessionId, message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] } },
    { type: "result", subtype: "success", session_id: sessionId, result: "All done.", is_error: false },
  ];
  return events.map((event) => JSON.stringify(event)).join("\n") + "\n";
}
