import { DEFAULT_API_URL } from "../config/config.js";
import type { Command } from "./kit/commander.js";
import { addFlags, choiceFlag, listFlag, switchFlag, textFlag, type FlagValues } from "./kit/flag-kit.js";

// `uspark login` (docs/access.md#device-login). Its device flow is in login-run.ts, loaded when
// the command runs, as the other commands' work is: not at every start.

export const LOGIN_HELP = `
login prints a code and an address on stderr (it opens nothing): open the address in a browser
signed in to the server's web view, check the code, choose the projects and the scope, approve.
login then saves the new token for that server alone in ~/.uspark/config.json (mode 0600; made
the default server if none is set). The token then goes with every request to that server, unless
--token or USPARK_TOKEN say otherwise. logout removes it from the file (uspark serve token revoke
refuses it on the server).

--project and --scope say what to ask for: the approval page ticks those projects and that access
and names this machine (its host name); the person approving may still change them.

Examples:
  $ uspark login --api-url https://uspark.example.com --project my-app --scope write
  $ uspark push --project-id my-app                  # now with the saved token
  $ uspark logout --api-url https://uspark.example.com`;

/** Which server: login's and logout's. */
export const loginServerFlags = {
  apiUrl: textFlag("--api-url <url>", `the server (or USPARK_API_URL; default: apiUrl of ~/.uspark/config.json, else ${DEFAULT_API_URL})`),
  insecure: switchFlag("--insecure", "allow plain http:// to a host other than this machine"),
};

/** login's flags: the server, then what to ask for (the person approving decides). */
const loginFlags = {
  ...loginServerFlags,
  project: listFlag("--project <id>", "a project to ask for (repeatable): ticked on the approval page"),
  scope: choiceFlag("--scope <scope>", "the access to ask for: read, or write (also push)", ["read", "write"]),
};

type LoginFlags = FlagValues<typeof loginFlags>;

export function addLoginCommand(program: Command): void {
  addFlags(
    program
      .command("login")
      .description("log in to a server through its web view (device code): the token is saved for that server in ~/.uspark/config.json"),
    loginFlags,
  )
    .addHelpText("after", LOGIN_HELP)
    .action(async (flags: LoginFlags) => (await import("./login-run.js")).runLoginCommand(flags));
}
