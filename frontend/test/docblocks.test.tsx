import { render } from "preact";
import { act } from "preact/test-utils";
import { describe, expect, it } from "vitest";
import { DocumentText } from "../src/components/DocumentText";
import { markBlocks, type TextBlock } from "../src/docblocks";
import { testRoot } from "./dom";

const P1 = "The if statement is used for conditional execution of a suite.";
const P2 = "It selects exactly one of the suites by evaluating the expressions.";
const BLOCKS: TextBlock[] = [
  { kind: "heading", level: 1, text: "Compound statements" },
  { kind: "paragraph", depth: 0, text: P1 },
  { kind: "paragraph", depth: 0, text: P2 },
  { kind: "heading", level: 2, text: "The try statement" },
  { kind: "term", depth: 0, text: "object.__exit__(self)" },
  { kind: "item", depth: 1, marker: "1.", text: "The context expression is evaluated to obtain a context manager." },
  { kind: "code", depth: 1, text: "try:\n    pass\nfinally:\n    close()" },
  { kind: "table", depth: 0, header: true, rows: [["Operation", "Result"], ["x in s", "True if an item of s equals x"]] },
];

const text = (segments: { text: string }[]) => segments.map((s) => s.text).join("");
const marked = (segments: { text: string; mark: boolean }[]) => segments.filter((s) => s.mark).map((s) => s.text);

describe("markBlocks", () => {
  it("leaves out a first heading that repeats the title, and keeps every other text whole", () => {
    const { blocks, marks } = markBlocks(BLOCKS, [], "compound  STATEMENTS");
    expect(marks).toBe(0);
    expect(blocks.map((b) => b.kind)).toEqual(["paragraph", "paragraph", "heading", "term", "item", "code", "table"]);
    expect(blocks.map((b) => (b.kind === "table" ? b.rows.map((r) => r.map(text)) : text(b.text)))).toEqual([
      P1,
      P2,
      "The try statement",
      "object.__exit__(self)",
      "The context expression is evaluated to obtain a context manager.",
      "try:\n    pass\nfinally:\n    close()",
      [["Operation", "Result"], ["x in s", "True if an item of s equals x"]],
    ]);
    expect(markBlocks(BLOCKS, [], "Another title").blocks[0]).toMatchObject({ kind: "heading", level: 1 });
  });

  it("marks a passage that runs from one paragraph into the next in both, and counts it once", () => {
    const passage = "conditional execution of a suite. It selects exactly one";
    const { blocks, marks } = markBlocks(BLOCKS, [passage], "Compound statements");
    expect(marks).toBe(1);
    const [first, second] = blocks;
    if (first.kind !== "paragraph" || second.kind !== "paragraph") throw new Error("paragraphs expected");
    expect(marked(first.text)).toEqual(["conditional execution of a suite."]);
    expect(marked(second.text)).toEqual(["It selects exactly one"]);
    expect(text(first.text)).toBe(P1);
  });

  it("marks passages inside list items, code and table cells", () => {
    const { blocks, marks } = markBlocks(
      BLOCKS,
      ["evaluated to obtain a context manager", "True if an item of s equals x", "finally:\n    close()"],
      "",
    );
    expect(marks).toBe(3);
    const item = blocks.find((b) => b.kind === "item")!;
    const code = blocks.find((b) => b.kind === "code")!;
    const table = blocks.find((b) => b.kind === "table")!;
    if (item.kind !== "item" || code.kind !== "code" || table.kind !== "table") throw new Error("kinds");
    expect(marked(item.text)).toEqual(["evaluated to obtain a context manager"]);
    expect(marked(code.text)).toEqual(["finally:\n    close()"]);
    expect(marked(table.rows[1][1])).toEqual(["True if an item of s equals x"]);
    expect(marked(table.rows[0][0])).toEqual([]);
  });
});

describe("DocumentText", () => {
  const root = testRoot();

  it("renders each block as text in an element of its kind", () => {
    const hostile: TextBlock[] = [
      ...BLOCKS,
      { kind: "paragraph", depth: 2, text: '<img src=x onerror="alert(1)"> and <b>bold</b>' },
    ];
    const { blocks } = markBlocks(hostile, ["It selects exactly one of the suites"], "Compound statements");
    act(() => render(<DocumentText blocks={blocks} />, root));
    expect([...root.querySelectorAll("h3, h4")].map((h) => `${h.tagName} ${h.textContent}`)).toEqual(["H4 The try statement"]);
    expect(root.querySelectorAll("p.doc-p")).toHaveLength(3);
    expect(root.querySelector("p.doc-term")?.textContent).toBe("object.__exit__(self)");
    const item = root.querySelector(".doc-item")!;
    expect(item.getAttribute("data-depth")).toBe("1");
    expect(item.querySelector(".doc-marker")?.textContent).toBe("1.");
    expect(root.querySelector("pre.doc-code")?.textContent).toBe("try:\n    pass\nfinally:\n    close()");
    expect([...root.querySelectorAll("th")].map((c) => c.textContent)).toEqual(["Operation", "Result"]);
    expect([...root.querySelectorAll("td")].map((c) => c.textContent)).toEqual(["x in s", "True if an item of s equals x"]);
    expect(root.querySelector("mark")?.textContent).toBe("It selects exactly one of the suites");
    // Markup in a document is text: no element comes from it.
    expect(root.querySelector("img, b")).toBeNull();
    expect(root.textContent).toContain('<img src=x onerror="alert(1)"> and <b>bold</b>');
  });
});
