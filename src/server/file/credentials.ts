// Tokens and device logins of the file store, one small JSON file each, named by a hash:
//   DATA/credentials/tokens/<sha256 of the secret>.json
//   DATA/credentials/devices/<sha256 of the device code>.json
// A token is read from its file at every request, so a revoke by `uspark serve token revoke` (another
// process) is seen at the next one. Files are replaced by rename: a reader sees the old or the new.

import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  parseTokenRecord,
  type CredentialStore,
  type DeviceLoginChange,
  type DeviceLoginKey,
  type DeviceLoginRecord,
  type TokenRecord,
} from "../credentials.js";
import { fsyncDir, isCode } from "../fsutil.js";
import { SerialTasks } from "../serial.js";

const HASH = /^[0-9a-f]{64}$/;

export class FileCredentials implements CredentialStore {
  // Device logins change only in the server process (one per data directory): serialized here.
  private readonly deviceTasks = new SerialTasks();

  private constructor(private readonly dir: string) {}

  static async open(dataDir: string): Promise<FileCredentials> {
    const credentials = new FileCredentials(join(dataDir, "credentials"));
    await mkdir(credentials.tokensDir, { recursive: true, mode: 0o700 });
    await mkdir(credentials.devicesDir, { recursive: true, mode: 0o700 });
    return credentials;
  }

  private get tokensDir(): string {
    return join(this.dir, "tokens");
  }

  private get devicesDir(): string {
    return join(this.dir, "devices");
  }

  async addToken(record: TokenRecord): Promise<void> {
    await replaceJson(this.tokensDir, `${checkedHash(record.sha256)}.json`, record);
  }

  async tokenByHash(sha256: string): Promise<TokenRecord | undefined> {
    if (!HASH.test(sha256)) return undefined;
    return parseTokenRecord(await readJsonFile(join(this.tokensDir, `${sha256}.json`)));
  }

  async tokens(): Promise<{ tokens: TokenRecord[]; damaged: number }> {
    const values = await readAllJson(this.tokensDir, true);
    const tokens = values
      .flatMap((value) => parseTokenRecord(value) ?? [])
      .sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
    return { tokens, damaged: values.length - tokens.length };
  }

  async revokeToken(id: string, at: number): Promise<"revoked" | "unknown"> {
    const record = (await this.tokens()).tokens.find((token) => token.id === id);
    if (!record) return "unknown";
    if (record.revoked === undefined) await replaceJson(this.tokensDir, `${record.sha256}.json`, { ...record, revoked: at });
    return "revoked";
  }

  addDeviceLogin(record: DeviceLoginRecord, now: number, max: number): Promise<"added" | "full"> {
    return this.deviceTasks.run("devices", async () => {
      let waiting = 0;
      for (const login of await this.deviceLogins()) {
        if (login.expiresAt < now) await rm(join(this.devicesDir, `${login.deviceHash}.json`), { force: true });
        else waiting++;
      }
      if (waiting >= max) return "full";
      await replaceJson(this.devicesDir, `${checkedHash(record.deviceHash)}.json`, record);
      return "added";
    });
  }

  changeDeviceLogin<T>(key: DeviceLoginKey, change: (login: DeviceLoginRecord | undefined) => DeviceLoginChange<T>): Promise<T> {
    return this.deviceTasks.run("devices", async () => {
      const login = await this.findDeviceLogin(key);
      const { next, result } = change(login);
      if (next === null && login) await rm(join(this.devicesDir, `${login.deviceHash}.json`), { force: true });
      if (next) await replaceJson(this.devicesDir, `${checkedHash(next.deviceHash)}.json`, next);
      return result;
    });
  }

  private async findDeviceLogin(key: DeviceLoginKey): Promise<DeviceLoginRecord | undefined> {
    if ("deviceHash" in key) {
      if (!HASH.test(key.deviceHash)) return undefined;
      return (await readJsonFile(join(this.devicesDir, `${key.deviceHash}.json`))) as DeviceLoginRecord | undefined;
    }
    return (await this.deviceLogins()).find((login) => login.userHash === key.userHash);
  }

  private async deviceLogins(): Promise<DeviceLoginRecord[]> {
    return (await readAllJson(this.devicesDir)) as DeviceLoginRecord[];
  }
}

function checkedHash(hash: string): string {
  if (!HASH.test(hash)) throw new Error(`not a SHA-256 in hex: ${JSON.stringify(hash)}`);
  return hash;
}

/** Writes `value` to `dir/name` through a temporary file and a rename, readable by the owner only. */
async function replaceJson(dir: string, name: string, value: unknown): Promise<void> {
  const temporary = join(dir, `.${name}.${randomBytes(6).toString("hex")}.tmp`);
  await writeFile(temporary, `${JSON.stringify(value)}\n`, { mode: 0o600, flag: "wx", flush: true });
  await rename(temporary, join(dir, name));
  await fsyncDir(dir);
}

/** The parsed file, or undefined when it does not exist or is damaged. */
async function readJsonFile(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as unknown;
  } catch (error) {
    if (isCode(error, "ENOENT") || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/** The parsed files of `dir`; one that is not JSON is left out, or kept as null with `keepDamaged`. */
async function readAllJson(dir: string, keepDamaged = false): Promise<unknown[]> {
  const names = (await readdir(dir)).filter((name) => name.endsWith(".json") && !name.startsWith("."));
  const values = await Promise.all(names.map((name) => readJsonFile(join(dir, name))));
  return keepDamaged ? values.map((value) => value ?? null) : values.filter((value) => value !== undefined);
}
