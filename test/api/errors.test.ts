import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { WIRE_ERRORS } from "../../src/api/errors.js";
import { API_ERRORS } from "../../src/api/types.js";

/**
 * Every error code the reference server can send is in the API's one list (src/api/errors.ts),
 * sent with a status the list gives it; the list is the table of docs/api.md#error-codes (the
 * page's equality with the list: test/docs-generated.test.ts). The compiler checks the codes that
 * are no literal (HttpError takes no other); this reads the literals, so a list that loses a code
 * the server still sends fails here as well.
 */

const server = fileURLToPath(new URL("../../src/server/", import.meta.url));
/** What makes an error answer: the code is the argument named here (by position). */
const CODE_ARGUMENT: Record<string, number> = { HttpError: 1, midBody: 1, oauthError: 0 };

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => path.join(dir, name));
}

/** A code written as a literal or as `API_ERRORS.name`; undefined for any other expression. */
function codeText(node: ts.Expression): string | undefined {
  if (ts.isStringLiteral(node)) return node.text;
  const named = ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "API_ERRORS";
  return named ? ((API_ERRORS as Record<string, string>)[node.name.text] ?? `API_ERRORS.${node.name.text}`) : undefined;
}

/** Each error answer made in `file` with a literal code: its code and its literal status, if any. */
function answersIn(file: string): { where: string; code: string; status?: number }[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: { where: string; code: string; status?: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text in CODE_ARGUMENT
    ) {
      const at = CODE_ARGUMENT[node.expression.text]!;
      const [code, status] = [node.arguments?.[at], at === 1 ? node.arguments?.[0] : undefined];
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      const text = code && codeText(code);
      if (text !== undefined)
        found.push({
          where: `${path.relative(server, file)}:${line}`,
          code: text,
          ...(status && ts.isNumericLiteral(status) ? { status: Number(status.text) } : {}),
        });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("the API's error codes", () => {
  const answers = sourcesUnder(server).flatMap(answersIn);

  it("reads the server's error answers (the scan finds them)", () => {
    expect(answers.length).toBeGreaterThan(40);
    expect(answers.map((a) => a.code)).toEqual(
      expect.arrayContaining(["conflict", "missing_blobs", "slow_down", "unsupported_grant_type", "not_found"]),
    );
  });

  it("lists every code the server sends, with the status it is sent with", () => {
    const unlisted = answers.filter(({ code, status }) => {
      const entry = (WIRE_ERRORS as Record<string, { status: readonly number[] }>)[code];
      return !entry || (status !== undefined && !entry.status.includes(status));
    });
    expect(unlisted).toEqual([]);
  });

  it("documents every listed code in docs/api.md", () => {
    const doc = readFileSync(fileURLToPath(new URL("../../docs/api.md", import.meta.url)), "utf8");
    const section = doc.slice(doc.indexOf("## Error codes"));
    for (const code of Object.keys(WIRE_ERRORS)) expect(section, code).toContain(`| \`${code}\` |`);
  });
});
