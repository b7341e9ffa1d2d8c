import type * as Commander from "commander";
import { requireCjs } from "../../util/cjs.js";

/** commander's classes, loaded with require() (cjs.ts says why), for every module that builds a command. */
export const { Argument, Command, CommanderError, Help, Option } = requireCjs("commander") as typeof Commander;
export type Command = Commander.Command;
export type Option = Commander.Option;
