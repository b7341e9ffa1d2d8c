#!/usr/bin/env node
import { main } from "../dist/uspark.js";

main(process.argv);
