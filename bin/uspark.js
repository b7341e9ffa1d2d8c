#!/usr/bin/env node
// The pipe form starts copying the agent's output before the rest of the CLI loads: of all of it,
// only dist/early-copy.js (the copy and the passthrough) is loaded first.
import { startEarlyCopy } from "../dist/early-copy.js";

startEarlyCopy(process.argv);
const { main } = await import("../dist/uspark.js");
await main(process.argv);
