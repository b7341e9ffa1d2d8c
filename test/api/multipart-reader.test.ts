import { describe, expect, it } from "vitest";
import { MAX_PART_HEADER_BYTES, multipartBoundary, MultipartError, MultipartReader } from "../../src/api/multipart-reader.js";
import { multipartChunks } from "../../src/api/multipart.js";

interface Part {
  name: string;
  bytes: Buffer;
}

/** Every part of `body` read in chunks of `size` bytes (each a fresh buffer, as a socket gives them). */
function readParts(boundary: string, body: Buffer, size?: number): Part[] {
  const reader = new MultipartReader(boundary);
  const seen: string[] = [];
  const parts: Part[] = [];
  let pieces: Buffer[] = [];
  const step = size ?? (body.length || 1);
  for (let at = 0; at < body.length; at += step) {
    for (const event of reader.push(Buffer.from(body.subarray(at, at + step)))) {
      if (event.kind === "part") {
        seen.push(event.name);
        pieces = [];
      } else if (event.kind === "data") pieces.push(Buffer.from(event.bytes));
      else parts.push({ name: seen[seen.length - 1]!, bytes: Buffer.concat(pieces) });
    }
  }
  reader.end();
  return parts;
}

/** The platform's own encoding of a form: what every client sends. */
async function platformBody(form: FormData): Promise<{ body: Buffer; boundary: string }> {
  const res = new Response(form);
  const type = res.headers.get("content-type")!;
  return { body: Buffer.from(await res.arrayBuffer()), boundary: /boundary=(.+)$/.exec(type)![1]! };
}

const binary = Buffer.from(Array.from({ length: 600 }, (_, i) => (i * 37) % 256));
const tricky = Buffer.from("a line\r\n--not the boundary\r\n\r\n--\r\n-");

describe("MultipartReader", () => {
  it("reads the platform's encoding: names and bytes of every part, empty and binary ones too, however the body is cut", async () => {
    const form = new FormData();
    form.append("one", new Blob(["first"]));
    form.append("empty", new Blob([]));
    form.append("binary", new Blob([binary]));
    form.append("tricky", new Blob([tricky]));
    form.append("text", "a field without a filename: ü");
    const { body, boundary } = await platformBody(form);
    const expected = [
      { name: "one", bytes: Buffer.from("first") },
      { name: "empty", bytes: Buffer.alloc(0) },
      { name: "binary", bytes: binary },
      { name: "tricky", bytes: tricky },
      { name: "text", bytes: Buffer.from("a field without a filename: ü") },
    ];
    for (const size of [body.length, 1, 2, 3, 5, 7, 16, 41, 64, 100, 333]) expect(readParts(boundary, body, size)).toStrictEqual(expected);
  });

  it("reads what uspark's own multipartChunks writes", () => {
    const blobs = [
      { sha256: "a".repeat(64), bytes: Buffer.from("x") },
      { sha256: "b".repeat(64), bytes: binary },
    ];
    const body = Buffer.concat(multipartChunks("uspark-1", blobs));
    expect(readParts("uspark-1", body, 10)).toStrictEqual(blobs.map(({ sha256, bytes }) => ({ name: sha256, bytes })));
  });

  it("hands a long part on in pieces as it comes, holding nothing back that cannot begin a delimiter", () => {
    const head = Buffer.from('--b\r\nContent-Disposition: form-data; name="n"\r\n\r\n');
    const content = Buffer.alloc(100_000, 0x61);
    const body = Buffer.concat([head, content, Buffer.from("\r\n--b--\r\n")]);
    const reader = new MultipartReader("b");
    let handedOn = 0;
    for (let at = 0; at < head.length + content.length; at += 4096) {
      for (const event of reader.push(body.subarray(at, Math.min(at + 4096, head.length + content.length))))
        if (event.kind === "data") handedOn += event.bytes.length;
      expect(handedOn).toBe(Math.min(at + 4096, head.length + content.length) - head.length);
    }
    reader.push(body.subarray(head.length + content.length));
    reader.end();
    expect(handedOn).toBe(content.length);
  });

  it("holds over a chunk's end that begins a delimiter, and hands it on when the next chunk shows it is none", () => {
    const head = '--b\r\nContent-Disposition: form-data; name="n"\r\n\r\n';
    const reader = new MultipartReader("b");
    const data = (events: ReturnType<MultipartReader["push"]>) =>
      Buffer.concat(events.flatMap((e) => (e.kind === "data" ? [e.bytes] : []))).toString();
    expect(data(reader.push(Buffer.from(`${head}one\r\n-`)))).toBe("one");
    expect(data(reader.push(Buffer.from("-c two\r")))).toBe("\r\n--c two");
    const last = reader.push(Buffer.from("\n--b--\r\n"));
    expect(data(last)).toBe("");
    expect(last.at(-1)).toEqual({ kind: "end" });
    reader.end();
  });

  it("ignores a preamble and an epilogue", () => {
    const body = Buffer.from(
      'preamble text\r\n--b\r\nContent-Disposition: form-data; name="n"\r\n\r\nbytes\r\n--b--\r\nepilogue, even --b\r\n',
    );
    expect(readParts("b", body)).toStrictEqual([{ name: "n", bytes: Buffer.from("bytes") }]);
  });

  it("takes blanks after a delimiter (transport padding) and header names in any case, quoted or bare names", () => {
    const body = Buffer.from(
      '--b  \r\ncontent-disposition: form-data; name=bare\r\n\r\n1\r\n--b\t\r\nCONTENT-DISPOSITION: form-data; name="quo ted"; filename="f"\r\nContent-Type: text/plain\r\n\r\n2\r\n--b--',
    );
    expect(readParts("b", body, 3)).toStrictEqual([
      { name: "bare", bytes: Buffer.from("1") },
      { name: "quo ted", bytes: Buffer.from("2") },
    ]);
  });

  it("reads a body with no part", () => {
    expect(readParts("b", Buffer.from("--b--\r\n"))).toStrictEqual([]);
  });

  it.each([
    ["an empty body", ""],
    ["a body cut in a part", '--b\r\nContent-Disposition: form-data; name="n"\r\n\r\nsome bytes'],
    ["a body cut before its closing delimiter ends", '--b\r\nContent-Disposition: form-data; name="n"\r\n\r\nx\r\n--b-'],
    ["a body whose boundary is another", '--other\r\nContent-Disposition: form-data; name="n"\r\n\r\nx\r\n--other--\r\n'],
  ])("refuses %s at its end", (_name, text) => {
    const reader = new MultipartReader("b");
    reader.push(Buffer.from(text));
    expect(() => reader.end()).toThrow(MultipartError);
  });

  it.each([
    ["a delimiter followed by something else", "--b\r\nContent-Disposition: form-data; name=n\r\n\r\nx\r\n--bx\r\n"],
    ["a part without headers", "--b\r\n\r\nx\r\n--b--"],
    ["a part without a name", "--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--"],
    ["a part that is not form-data", "--b\r\nContent-Disposition: attachment; name=n\r\n\r\nx\r\n--b--"],
    [
      "headers past the limit",
      `--b\r\nContent-Disposition: form-data; name=n\r\nX: ${"y".repeat(MAX_PART_HEADER_BYTES)}\r\n\r\nx\r\n--b--`,
    ],
    ["headers that never end", `--b\r\nContent-Disposition: form-data; name=n\r\nX: ${"y".repeat(MAX_PART_HEADER_BYTES)}`],
  ])("refuses %s as soon as it is read", (_name, text) => {
    for (const size of [text.length, 7]) {
      const reader = new MultipartReader("b");
      const body = Buffer.from(text);
      expect(() => {
        for (let at = 0; at < body.length; at += size) reader.push(body.subarray(at, at + size));
      }).toThrow(MultipartError);
    }
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

  it.each([
    "multipart/form-data",
    "application/json; boundary=abc",
    "multipart/form-data; boundary=",
    `multipart/form-data; boundary=${"x".repeat(71)}`,
  ])("finds none in %j", (type) => {
    expect(multipartBoundary(type)).toBeUndefined();
  });
});
