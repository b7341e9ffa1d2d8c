import { describe, expect, it } from "vitest";
import { JsonSniffer } from "../../src/stream/json-sniffer.js";

/** Feeds `text` in chunks of `size` bytes; how many times the sniffer said "no JSON", and whether it is done. */
function sniff(text: string, size: number, maxLines = 3): { warned: number; decided: boolean } {
  let warned = 0;
  const sniffer = new JsonSniffer(maxLines, () => warned++);
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length && !sniffer.decided; i += size) sniffer.push(bytes.subarray(i, i + size));
  sniffer.end();
  return { warned, decided: sniffer.decided };
}

describe("JsonSniffer", () => {
  it("should say nothing once a line starts with {, after blanks too, however the bytes are chunked", () => {
    for (const size of [1, 2, 5, 1000]) {
      expect(sniff('text\n  \t{"type":"x"}\nmore\nand more\n', size)).toEqual({ warned: 0, decided: true });
    }
  });

  it("should warn once after maxLines lines of text, blank lines not counted", () => {
    for (const size of [1, 3, 1000]) {
      expect(sniff("one\n\n\r\ntwo\nthree\nfour\nfive\n", size)).toEqual({ warned: 1, decided: true });
    }
  });

  it("should warn at the end of a shorter stream of text, and not at all for an empty or blank one", () => {
    expect(sniff("Done.\n", 1000).warned).toBe(1);
    expect(sniff("Done, no newline", 4).warned).toBe(1);
    expect(sniff("", 1000).warned).toBe(0);
    expect(sniff("\n \n\r\n", 1).warned).toBe(0);
  });

  it("should not take a { inside a line for a JSON event", () => {
    expect(sniff('say {"type":"x"}\n', 1000).warned).toBe(1);
  });
});
