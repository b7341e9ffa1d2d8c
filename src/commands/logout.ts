import type { Command } from "./kit/commander.js";
import { addFlags, type FlagValues } from "./kit/flag-kit.js";
import { LOGIN_HELP, loginServerFlags } from "./login.js";

// `uspark logout`: login's counterpart (login-run.ts, loaded when it runs).

export function addLogoutCommand(program: Command): void {
  addFlags(program.command("logout").description("remove the token uspark login saved for a server"), loginServerFlags)
    .addHelpText("after", LOGIN_HELP)
    .action(async (flags: FlagValues<typeof loginServerFlags>) => (await import("./login-run.js")).runLogoutCommand(flags));
}
