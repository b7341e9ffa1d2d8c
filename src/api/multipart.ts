import { nodeCrypto } from "../util/lazy-builtins.js";

// multipart/form-data as both ends write it (docs/api.md, the v1.1 batch blob routes): one part
// per blob, named by its sha256, framed as the platform's FormData frames a file. Both ends read
// it back with MultipartReader (multipart-reader.ts), as it streams in.

export const CRLF = Buffer.from("\r\n");

export function newBoundary(): string {
  return `uspark-${nodeCrypto().randomUUID()}`;
}

export function multipartType(boundary: string): string {
  return `multipart/form-data; boundary=${boundary}`;
}

/** A part's delimiter and headers; its bytes and a CRLF follow. */
export function partHead(boundary: string, sha256: string): Buffer {
  return Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${sha256}"; filename="${sha256}"\r\n` +
      "Content-Type: application/octet-stream\r\n\r\n",
  );
}

/** What ends the body. */
export function closingDelimiter(boundary: string): Buffer {
  return Buffer.from(`--${boundary}--\r\n`);
}

/** A whole body of in-memory blobs, as the pieces to send. */
export function multipartChunks(boundary: string, blobs: readonly { sha256: string; bytes: Uint8Array }[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (const { sha256, bytes } of blobs) chunks.push(partHead(boundary, sha256), bytes, CRLF);
  chunks.push(closingDelimiter(boundary));
  return chunks;
}
