import type * as Commander from "commander";

/**
 * `uspark completion bash|zsh|fish`: a small static script per shell, made from the program's own
 * commands and options, so that it cannot drift from them. Arguments that are not flags complete
 * as file names (the paths of push and pull).
 */

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

/** What a shell needs to know of one subcommand. */
export interface CompletionCommand {
  name: string;
  description: string;
  /** Every flag spelling, long and short (e.g. --quiet, -q), --help included. */
  flags: { long: string; short?: string; description: string }[];
  /** Words its arguments take: its own subcommands (`projects create`) and argument choices (`completion bash`). */
  words: string[];
}

/** The visible subcommands of `program` and their visible options. */
export function completionCommands(program: Commander.Command): CompletionCommand[] {
  return program.commands
    .filter((command) => !(command as unknown as { _hidden: boolean })._hidden)
    .map((command) => ({
      name: command.name(),
      description: firstLine(command.description()),
      flags: [
        ...command.options
          .filter((option) => !option.hidden && option.long)
          .map((option) => ({ long: option.long!, short: option.short, description: firstLine(option.description) })),
        { long: "--help", short: "-h", description: "display help for command" },
      ],
      words: [
        ...command.commands.map((sub) => sub.name()),
        ...command.registeredArguments.flatMap((argument) => argument.argChoices ?? []),
      ],
    }));
}

export function completionScript(shell: Shell, commands: readonly CompletionCommand[]): string {
  if (shell === "bash") return bashScript(commands);
  if (shell === "zsh") return zshScript(commands);
  return fishScript(commands);
}

function spellings(command: CompletionCommand): string[] {
  return command.flags.flatMap((flag) => (flag.short ? [flag.long, flag.short] : [flag.long]));
}

function bashScript(commands: readonly CompletionCommand[]): string {
  const cases = commands.map((c) => `    ${c.name}) flags="${spellings(c).join(" ")}" args="${c.words.join(" ")}" ;;`);
  return `# uspark completion for bash: eval "$(uspark completion bash)" in ~/.bashrc
_uspark() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" flags="" args=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${commands.map((c) => c.name).join(" ")} --help --version" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases.join("\n")}
  esac
  # A flag, else a word the command takes; nothing found completes file names (-o default).
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$args" -- "$cur"))
  fi
}
complete -o default -F _uspark uspark
`;
}

function zshScript(commands: readonly CompletionCommand[]): string {
  const described = commands.map((c) => `    ${zshQuote(`${c.name}:${c.description}`)}`);
  const cases = commands.map((c) => `    (${c.name}) flags=(${spellings(c).join(" ")}); args=(${c.words.join(" ")}) ;;`);
  return `#compdef uspark
# uspark completion for zsh: source <(uspark completion zsh) in ~/.zshrc, or save it as _uspark in $fpath
_uspark() {
  local -a commands flags args
  commands=(
${described.join("\n")}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  case $words[2] in
${cases.join("\n")}
  esac
  # ($words is zsh's: the command line being completed.)
  if [[ $PREFIX == -* ]]; then
    compadd -- $flags
  elif (( $#args )); then
    compadd -- $args
  else
    _files
  fi
}
if [ "$funcstack[1]" = "_uspark" ]; then _uspark "$@"; else compdef _uspark uspark; fi
`;
}

function fishScript(commands: readonly CompletionCommand[]): string {
  const names = commands.map((c) => c.name).join(" ");
  const lines = commands.flatMap((c) => [
    `complete -c uspark -n "not __fish_seen_subcommand_from ${names}" -a ${c.name} -d ${fishQuote(c.description)}`,
    ...c.words.map((word) => `complete -c uspark -n "__fish_seen_subcommand_from ${c.name}" -a ${word}`),
    ...c.flags.map((flag) => {
      const short = flag.short ? ` -s ${flag.short.slice(1)}` : "";
      return `complete -c uspark -n "__fish_seen_subcommand_from ${c.name}" -l ${flag.long.slice(2)}${short} -d ${fishQuote(flag.description)}`;
    }),
  ]);
  return `# uspark completion for fish: uspark completion fish > ~/.config/fish/completions/uspark.fish
${lines.join("\n")}
`;
}

function firstLine(text: string): string {
  return text.split("\n")[0]!.trim();
}

function zshQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

function fishQuote(text: string): string {
  return `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}
