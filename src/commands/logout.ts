import type { Command } from "../cli/commander.js";
import type { LoginFlags } from "../cli/flags.js";
import { addLoginOptions, LOGIN_HELP } from "./login.js";

// `uspark logout`: login's counterpart (login-run.ts, loaded when it runs).

export function addLogoutCommand(program: Command): void {
  addLoginOptions(program.command("logout").description("remove the token uspark login saved for a server"))
    .addHelpText("after", LOGIN_HELP)
    .action(async (flags: LoginFlags) => (await import("./login-run.js")).runLogoutCommand(flags));
}
