// The web view's one way to make HTML: every value escaped, only the template's own HTML kept.

import { describe, expect, it } from "vitest";
import { html, renderHtml, webPath, withQuery } from "../../../src/server/web/html.js";

describe("html", () => {
  it("escapes every value, in text and in double-quoted attributes", () => {
    const name = `<img src=x onerror="alert('1')">&`;
    expect(renderHtml(html`<a title="${name}">${name}</a>`)).toBe(
      '<a title="&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;">&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;</a>',
    );
  });

  it("keeps HTML the template made, in lists too, and leaves out nothing-values", () => {
    const items = ["<b>", "c"].map((text) => html`<li>${text}</li>`);
    expect(renderHtml(html`<ul>${items}${undefined}${false}${null}${0}</ul>`)).toBe("<ul><li>&lt;b&gt;</li><li>c</li>0</ul>");
  });

  it("does not take an object that only looks like template HTML for it", () => {
    expect(renderHtml(html`${{ toString: () => "<script>" } as unknown as string}`)).toBe("&lt;script&gt;");
  });

  it("makes paths of percent-encoded segments: a slash in a name stays in that name, markup is encoded", () => {
    expect(webPath("p", "a/b", "f", "<x>", "?#")).toBe("/p/a%2Fb/f/%3Cx%3E/%3F%23");
    expect(withQuery("/p/x", { dir: "a b&c", page: undefined })).toBe("/p/x?dir=a+b%26c");
  });
});
