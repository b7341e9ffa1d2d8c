import { Session } from "node:inspector";
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll } from "vitest";
const session = new Session();
beforeAll(() => {
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.start");
});
afterAll(() => {
  session.post("Profiler.stop", (_err, { profile }) => writeFileSync(`/tmp/prof-a/w/${process.pid}-${Date.now()}.cpuprofile`, JSON.stringify(profile)));
});
