import { parseNonNegativeInt, parsePositiveInt } from "../../config/config.js";
import { Option, type Command } from "./commander.js";

/**
 * A flag declared once: how commander takes it and, as a type, the value the command's run gets
 * (FlagValues), so that the two cannot drift apart. A set of flags is an object whose keys are
 * the names commander stores them under (`--project-id` under projectId; addFlags checks that).
 */
export class Flag<T> {
  /** The type of the value a command gets; never set (a type only). */
  declare readonly value: T;

  /**
   * `make` builds a new Option each time: an Option belongs to the one command it is added to.
   * `olderNames`: hidden Options stored under this flag's name (withOlderName).
   */
  constructor(
    readonly make: () => Option,
    readonly olderNames: readonly (() => Option)[] = [],
  ) {}

  /** Taken, but left out of help and completion (offered only for compatibility). */
  hidden(): Flag<T> {
    return new Flag<T>(() => this.make().hideHelp(), this.olderNames);
  }

  /** A usage error unless given. */
  required(): Flag<Exclude<T, undefined>> {
    return new Flag<Exclude<T, undefined>>(() => this.make().makeOptionMandatory(), this.olderNames);
  }

  /**
   * `older`, a name this flag had, still taken (out of sight) and stored as this one: the command
   * reads one name. Given both, the last one counts, as for any flag given twice.
   */
  withOlderName(older: Flag<T | undefined>): Flag<T> {
    const storedAs = () => this.make().attributeName();
    const make = () => {
      const option = older.make().hideHelp();
      const name = storedAs();
      option.attributeName = () => name;
      return option;
    };
    return new Flag<T>(this.make, [...this.olderNames, make]);
  }
}

export type FlagSet = Readonly<Record<string, Flag<unknown>>>;

type ValueOf<F> = F extends Flag<infer T> ? T : never;
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The values a command gets for `flags`: a flag that may be absent is an optional key. */
export type FlagValues<F extends FlagSet> = Simplify<
  { [K in keyof F as undefined extends ValueOf<F[K]> ? K : never]?: ValueOf<F[K]> } & {
    [K in keyof F as undefined extends ValueOf<F[K]> ? never : K]: ValueOf<F[K]>;
  }
>;

/** Adds `flags` to `command`, in their order (the order of its help). */
export function addFlags(command: Command, flags: FlagSet): Command {
  for (const [key, flag] of Object.entries(flags)) {
    const option = flag.make();
    // A key that is not where commander stores the flag would hand the command undefined for ever.
    if (option.attributeName() !== key) throw new Error(`flag ${option.flags} is declared as ${key}, stored as ${option.attributeName()}`);
    command.addOption(option);
    for (const older of flag.olderNames) command.addOption(older());
  }
  return command;
}

/** A switch: true when given. */
export function switchFlag(flags: string, description = ""): Flag<true | undefined> {
  return new Flag(() => new Option(flags, description));
}

/** `--no-<name>`: true unless given. */
export function negatedFlag(flags: string, description: string): Flag<boolean> {
  return new Flag(() => new Option(flags, description));
}

/** A string. */
export function textFlag(flags: string, description?: string): Flag<string | undefined>;
export function textFlag(flags: string, description: string, byDefault: string): Flag<string>;
export function textFlag(flags: string, description = "", byDefault?: string): Flag<string | undefined> {
  return new Flag(() => new Option(flags, description).default(byDefault));
}

/** A string, given as often as need be: every one kept, in order. */
export function listFlag(flags: string, description: string): Flag<string[] | undefined> {
  return new Flag(() => new Option(flags, description).argParser(collect));
}

/** One of `choices`. */
export function choiceFlag<const C extends readonly string[]>(flags: string, description: string, choices: C): Flag<C[number] | undefined>;
export function choiceFlag<const C extends readonly string[]>(
  flags: string,
  description: string,
  choices: C,
  byDefault: C[number],
): Flag<C[number]>;
export function choiceFlag(flags: string, description: string, choices: readonly string[], byDefault?: string): Flag<string | undefined> {
  return new Flag(() => new Option(flags, description).choices(choices).default(byDefault));
}

/** A whole number, 0 or more (a usage error naming the flag otherwise). */
export function countFlag(flags: string, description: string): Flag<number | undefined>;
export function countFlag(flags: string, description: string, byDefault: number): Flag<number>;
export function countFlag(flags: string, description: string, byDefault?: number): Flag<number | undefined> {
  return numberFlag(flags, description, byDefault, parseNonNegativeInt);
}

/** A whole number, 1 or more. */
export function positiveFlag(flags: string, description: string): Flag<number | undefined>;
export function positiveFlag(flags: string, description: string, byDefault: number): Flag<number>;
export function positiveFlag(flags: string, description: string, byDefault?: number): Flag<number | undefined> {
  return numberFlag(flags, description, byDefault, parsePositiveInt);
}

/** A flag whose value `parse` makes from the text given (a usage error when it throws one). */
export function parsedFlag<T>(flags: string, description: string, parse: (raw: string) => T): Flag<T | undefined> {
  return new Flag(() => new Option(flags, description).argParser(parse));
}

function numberFlag(
  flags: string,
  description: string,
  byDefault: number | undefined,
  parse: (name: string, raw: string) => number,
): Flag<number | undefined> {
  return new Flag(() => {
    const option = new Option(flags, description);
    const name = option.long ?? option.short!;
    return option.argParser((raw: string) => parse(name, raw)).default(byDefault);
  });
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
