import { Argument, type Command } from "./kit/commander.js";
import { completionCommands, completionScript, SHELLS, type Shell } from "./kit/completion.js";
import { printToStdout } from "./kit/exit.js";

// `uspark completion bash|zsh|fish`: the script is made from the program's commands (cli/completion.ts).

const COMPLETION_HELP = `
Examples:
  $ eval "$(uspark completion bash)"                              # in ~/.bashrc
  $ source <(uspark completion zsh)                               # in ~/.zshrc
  $ uspark completion fish > ~/.config/fish/completions/uspark.fish`;

/** Made from the program's other commands, so it is built with all of them (commandsFor). */
export function addCompletionCommand(program: Command): void {
  program
    .command("completion")
    .description("print a shell completion script (bash, zsh or fish) for uspark's commands and flags")
    .addArgument(new Argument("<shell>", "the shell").choices(SHELLS))
    .addHelpText("after", COMPLETION_HELP)
    .action((shell: Shell) => printToStdout(completionScript(shell, completionCommands(program))));
}
