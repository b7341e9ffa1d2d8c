// Summarises a V8 CPU profile (node --cpu-prof): where the samples fell, by function.
import { readFileSync } from "node:fs";

/** The functions with the most self time, in ms: [{ name, where, ms }], most first. */
export function topSelfTime(file, count = 15) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const byNode = new Map();
  profile.samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byFunction = new Map();
  for (const node of profile.nodes) {
    const us = byNode.get(node.id);
    if (!us) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? `${url.split("/").slice(-2).join("/")}:${lineNumber + 1}` : "";
    const key = `${functionName || "(anonymous)"}\u0000${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us / 1000);
  }
  return [...byFunction]
    .map(([key, ms]) => {
      const [name, where] = key.split("\u0000");
      return { name, where, ms };
    })
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count);
}
