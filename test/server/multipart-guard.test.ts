import { describe, expect, it } from "vitest";
import { multipartBoundary, OccurrenceCounter } from "../../src/server/multipart-guard.js";

describe("OccurrenceCounter", () => {
  const body = "--xyz\r\npart one\r\n--xyz\r\n--xy\r\n-x--xyz--xyz--\r\n";
  const whole = 4;

  it("counts every occurrence in one chunk", () => {
    expect(new OccurrenceCounter(Buffer.from("--xyz")).push(Buffer.from(body))).toBe(whole);
  });

  it("counts the same whatever the chunk edges, an occurrence cut across them included", () => {
    for (let cut = 0; cut <= body.length; cut++) {
      for (let second = cut; second <= body.length; second++) {
        const counter = new OccurrenceCounter(Buffer.from("--xyz"));
        counter.push(Buffer.from(body.slice(0, cut)));
        counter.push(Buffer.from(body.slice(cut, second)));
        expect(counter.push(Buffer.from(body.slice(second))), `cut at ${cut} and ${second}`).toBe(whole);
      }
    }
  });

  it("counts one byte at a time", () => {
    const counter = new OccurrenceCounter(Buffer.from("--xyz"));
    for (const byte of Buffer.from(body)) counter.push(Buffer.from([byte]));
    expect(counter.count).toBe(whole);
  });

  it("does not count overlapping occurrences twice", () => {
    expect(new OccurrenceCounter(Buffer.from("aa")).push(Buffer.from("aaaaa"))).toBe(2);
  });
});

describe("multipartBoundary", () => {
  it.each([
    ["multipart/form-data; boundary=abc", "abc"],
    ['multipart/form-data; boundary="a b:c"', "a b:c"],
    ["Multipart/Form-Data;charset=utf-8; BOUNDARY=----formdata-undici-0123", "----formdata-undici-0123"],
  ])("reads %j", (type, boundary) => {
    expect(multipartBoundary(type)).toBe(boundary);
  });

  it.each(["multipart/form-data", "application/json; boundary=abc", "multipart/form-data; boundary=", `multipart/form-data; boundary=${"x".repeat(71)}`])(
    "finds none in %j",
    (type) => {
      expect(multipartBoundary(type)).toBeUndefined();
    },
  );
});
