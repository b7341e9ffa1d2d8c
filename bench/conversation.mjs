#!/usr/bin/env node
// The conversation reader (src/agents/conversation/) on a long stream: throughput and memory.
// A Claude session of --mb MiB (bench/lib/claude-session.mjs, or --file) is read by the line
// splitter of `uspark run` (src/stream/lines.ts) into createConversationReader, format detected.
// Prints the steps by kind, MiB/s, and the peak RSS and heap seen (sampled every 64 MiB read, and
// at the end); then the same for a session whose one Write carries a --huge-line-mb MiB file (one
// line of that size): the reader must keep its summary, not its input. A baseline reads each file
// through the splitter alone. With --expose-gc, each sample is taken after a full collection: it
// is the memory still live, not garbage not yet collected.
//
//   node --expose-gc bench/conversation.mjs [--mb 200] [--file stream.jsonl] [--huge-line-mb 100] [--json]

import { createReadStream, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createConversationReader } from "../dist/agents/conversation/index.js";
import { LineSplitter } from "../dist/stream/lines.js";
import { writeBigLineSession, writeClaudeSession } from "./lib/claude-session.mjs";

const args = process.argv.slice(2);
const option = (name, otherwise) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? otherwise : args[i + 1];
};
const mb = Number(option("mb", "200"));
const hugeMb = Number(option("huge-line-mb", "100"));

/** Reads `file` line by line, into a conversation reader unless `baseline`; the figures. */
async function read(file, baseline = false) {
  const reader = baseline ? { format: "none", line: () => [], end: () => [] } : createConversationReader("auto");
  const counts = { prompt: 0, text: 0, tool: 0, result: 0 };
  let peakRss = 0;
  let peakHeap = 0;
  let bytes = 0;
  let nextSample = 0;
  const sample = () => {
    globalThis.gc?.();
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed + m.arrayBuffers);
  };
  const count = (steps) => {
    for (const step of steps) counts[step.kind]++;
  };
  const splitter = new LineSplitter((line) => count(reader.line(line)));
  const started = process.hrtime.bigint();
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) {
    splitter.push(chunk);
    bytes += chunk.length;
    if (bytes >= nextSample) {
      sample();
      nextSample += 64 * 1024 * 1024;
    }
  }
  splitter.end();
  count(reader.end());
  sample();
  // What stays live once read, the reader itself still referenced: its state, not the stream.
  globalThis.gc?.();
  const m = process.memoryUsage();
  const liveAfterMib = (m.heapUsed + m.arrayBuffers) / 2 ** 20;
  if (reader.format === undefined) throw new Error("unreachable: keeps the reader alive until here");
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    format: reader.format,
    mib: bytes / 2 ** 20,
    seconds,
    mibPerSecond: bytes / 2 ** 20 / seconds,
    peakRssMib: peakRss / 2 ** 20,
    peakHeapMib: peakHeap / 2 ** 20,
    liveAfterMib,
    counts,
  };
}

const dir = mkdtempSync(path.join(os.tmpdir(), "uspark-conversation-"));
try {
  let file = option("file", undefined);
  if (file === undefined) {
    file = path.join(dir, "stream.jsonl");
    writeClaudeSession(file, { mb }); // written piece by piece: this process never holds the stream
  }
  const baseline = await read(file, true);
  const plain = await read(file);
  const huge = path.join(dir, "huge.jsonl");
  writeBigLineSession(huge, { mib: hugeMb });
  const hugeBaseline = await read(huge, true);
  const withHuge = await read(huge);
  const figures = { baseline, plain, hugeBaseline, withHugeLine: withHuge, gcSampled: typeof globalThis.gc === "function" };
  const show = (name, r) =>
    `${name}: ${r.mib.toFixed(0)} MiB (${r.format}) in ${r.seconds.toFixed(2)} s = ${r.mibPerSecond.toFixed(0)} MiB/s; peak RSS ${r.peakRssMib.toFixed(0)} MiB, heap+buffers ${r.peakHeapMib.toFixed(0)} MiB, ${r.liveAfterMib.toFixed(0)} MiB live after; steps ${JSON.stringify(r.counts)}`;
  console.log(show("splitter alone", baseline));
  console.log(show("stream", plain));
  console.log(show(`splitter alone, a ${hugeMb} MiB line`, hugeBaseline));
  console.log(show(`a ${hugeMb} MiB line`, withHuge));
  if (args.includes("--json")) console.log(JSON.stringify(figures));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
