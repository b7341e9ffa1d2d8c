#!/usr/bin/env node
// The pipe form starts copying the agent's output before the rest of the CLI loads: of all of it,
// only dist/pipe-form.js (the decision, the copy and the passthrough) is loaded first.
import { startPipeFormCopy } from "../dist/pipe-form.js";

startPipeFormCopy(process.argv);
const { main } = await import("../dist/uspark.js");
await main(process.argv);
