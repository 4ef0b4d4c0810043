import { describe, expect, it } from "vitest";
import { addCitationChips, renderMarkdown } from "../src/markdown";

function html(frag: DocumentFragment): HTMLDivElement {
  const div = document.createElement("div");
  div.append(frag);
  return div;
}

function assertInert(root: Element) {
  expect(root.querySelectorAll("script, iframe, object, embed, style").length).toBe(0);
  for (const el of root.querySelectorAll("*")) {
    for (const attr of Array.from(el.attributes)) {
      expect(attr.name.toLowerCase().startsWith("on"), `${el.tagName} has ${attr.name}`).toBe(false);
      if (["href", "src", "action", "formaction", "xlink:href"].includes(attr.name.toLowerCase())) {
        expect(attr.value.replace(/\s/g, "").toLowerCase()).not.toMatch(/^(javascript|data|vbscript):/);
      }
    }
  }
}

describe("renderMarkdown sanitises model and web text", () => {
  const evil = [
    "# Report",
    "",
    "<script>window.__pwned = 1</script>",
    "",
    "<img src=x onerror=\"window.__pwned = 2\">",
    "",
    "[x](javascript:alert(1)) and [y](JAVASCRIPT:alert(1)) and [z](  javascript:alert(1))",
    "",
    "<a href=\"javascript:alert(1)\" onclick=\"alert(1)\">raw link</a>",
    "",
    "<svg onload=alert(1)><circle/></svg> <iframe src=\"https://evil.example\"></iframe>",
    "",
    "<div onmouseover=\"alert(1)\" style=\"position:fixed\">hover</div> [d](data:text/html,<script>alert(1)</script>)",
  ].join("\n");

  it("yields no script, no on* attributes and no javascript: href", () => {
    const root = html(renderMarkdown(evil, () => null));
    assertInert(root);
    expect(root.querySelector("script")).toBeNull();
    expect(root.querySelector("img")).toBeNull();
    for (const a of root.querySelectorAll("a")) expect(a.getAttribute("href") ?? "").not.toMatch(/javascript/i);
    expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined();
    // The text itself is kept, only made inert.
    expect(root.textContent).toContain("raw link");
  });

  it("gives http(s) links target=_blank and rel=noopener noreferrer; other schemes no href", () => {
    const root = html(renderMarkdown("[a](https://example.org/a) [b](http://x.org) [c](corpus://python-reference/slots) [d](mailto:a@b.c)"));
    const links = Array.from(root.querySelectorAll("a"));
    expect(links.map((a) => a.getAttribute("href"))).toEqual(["https://example.org/a", "http://x.org/", null, null]);
    for (const a of links.slice(0, 2)) {
      expect(a.getAttribute("target")).toBe("_blank");
      expect(a.getAttribute("rel")).toBe("noopener noreferrer");
    }
  });

  it("shows an image as a text link to its URL, never as an <img> that would load it", () => {
    const md = "A ![the logo](https://example.com/x.png) and ![x](/etc/passwd) and ![](http://127.0.0.1:9/x.png).";
    for (const root of [html(renderMarkdown(md)), html(renderMarkdown(md, undefined, true))]) {
      expect(root.querySelector("img")).toBeNull();
      const links = Array.from(root.querySelectorAll("a"));
      expect(links.map((a) => [a.textContent, a.getAttribute("href")])).toEqual([
        ["the logo", "https://example.com/x.png"],
        ["x", null],
        ["http://127.0.0.1:9/x.png", "http://127.0.0.1:9/x.png"],
      ]);
      expect(root.textContent?.trim()).toBe("A the logo and x and http://127.0.0.1:9/x.png.");
    }
  });

  it("renders ordinary markdown", () => {
    const root = html(renderMarkdown("## Title\n\n- one\n- **two**\n\n`code [1]`"));
    expect(root.querySelector("h2")?.textContent).toBe("Title");
    expect(root.querySelectorAll("li")).toHaveLength(2);
    expect(root.querySelector("strong")?.textContent).toBe("two");
  });
});

describe("citation chips", () => {
  const lookup = (n: number) => (n <= 3 ? { number: n, title: `Doc ${n} <b>x</b>` } : null);

  it("turns known [n] markers into chip buttons, leaves unknown ones as text", () => {
    const root = html(renderMarkdown("A [1]. B [2, 3]. C [1][2]. D [9]. E `[1]` in code.", lookup));
    const chips = Array.from(root.querySelectorAll("button.cite-chip"));
    expect(chips.map((c) => c.getAttribute("data-cite"))).toEqual(["1", "2", "3", "1", "2"]);
    expect(root.textContent).toContain("D [9].");
    expect(root.querySelector("code")?.textContent).toBe("[1]");
    // Titles go into attributes as text, never parsed as markup.
    expect(chips[0].getAttribute("aria-label")).toBe("Source 1: Doc 1 <b>x</b>");
    expect(chips[0].querySelector("b")).toBeNull();
  });

  it("does not turn a chip-like model string into markup", () => {
    const root = html(renderMarkdown('<button class="cite-chip" data-cite="1" onclick="alert(1)">1</button> [1]', lookup));
    const chips = root.querySelectorAll("button");
    expect(chips).toHaveLength(1); // only ours: model-written buttons are removed
    assertInert(root);
  });

  it("tells the lookup which appearance of a number each marker is, and marks flagged chips", () => {
    const calls: string[] = [];
    const flagged = (n: number, occurrence: number) => {
      calls.push(`${n}#${occurrence}`);
      return { number: n, title: "", unsupported: n === 1 && occurrence === 2 ? "not in <b>source</b>" : undefined };
    };
    const root = html(renderMarkdown("A [1]. B [2][1].\n\n- C `[1]` [1]", flagged));
    expect(calls).toEqual(["1#1", "2#1", "1#2", "1#3"]);
    const chips = Array.from(root.querySelectorAll("button.cite-chip"));
    expect(chips.map((c) => c.classList.contains("unsupported"))).toEqual([false, false, true, false]);
    expect(chips[2].getAttribute("title")).toBe("The source may not support this sentence: not in <b>source</b>");
    expect(chips[2].querySelector("b")).toBeNull();
  });

  it("works on any DOM subtree", () => {
    const div = document.createElement("div");
    div.textContent = "x [2] y";
    addCitationChips(div, lookup);
    expect(div.querySelectorAll(".cite-chip")).toHaveLength(1);
    expect(div.textContent).toBe("x 2 y");
  });
});
