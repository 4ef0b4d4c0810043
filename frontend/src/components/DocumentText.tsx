import type { MarkedBlock } from "../docblocks";
import type { Segment } from "../passages";

/** Text with its marked passages; every piece is a text node. */
function Marked({ segments }: { segments: Segment[] }) {
  return <>{segments.map((s, i) => (s.mark ? <mark key={i}>{s.text}</mark> : s.text))}</>;
}

// The dialog's own title is an h2: the document's outermost headings start below it.
const HEADINGS = ["h3", "h4", "h5", "h6"] as const;
const MAX_DEPTH = 6;

function Block({ block }: { block: MarkedBlock }) {
  if (block.kind === "heading") {
    const Heading = HEADINGS[Math.min(block.level, HEADINGS.length) - 1];
    return (
      <Heading class="doc-heading">
        <Marked segments={block.text} />
      </Heading>
    );
  }
  const depth = String(Math.min(block.depth, MAX_DEPTH));
  switch (block.kind) {
    case "paragraph":
      return (
        <p class="doc-p" data-depth={depth}>
          <Marked segments={block.text} />
        </p>
      );
    case "term":
      return (
        <p class="doc-term" data-depth={depth}>
          <Marked segments={block.text} />
        </p>
      );
    case "item":
      return (
        <div class="doc-item" data-depth={depth}>
          <span class="doc-marker" aria-hidden="true">
            {block.marker === "*" || block.marker === "-" || block.marker === "+" ? "•" : block.marker}
          </span>
          <span>
            <Marked segments={block.text} />
          </span>
        </div>
      );
    case "code":
      return (
        <pre class="doc-code" data-depth={depth}>
          <code>
            <Marked segments={block.text} />
          </code>
        </pre>
      );
    case "table": {
      const head = block.header ? block.rows[0] : null;
      const body = block.header ? block.rows.slice(1) : block.rows;
      return (
        <div class="doc-table" data-depth={depth}>
          <table>
            {head ? (
              <thead>
                <tr>
                  {head.map((cell, i) => (
                    <th key={i} scope="col">
                      <Marked segments={cell} />
                    </th>
                  ))}
                </tr>
              </thead>
            ) : null}
            <tbody>
              {body.map((row, r) => (
                <tr key={r}>
                  {row.map((cell, i) => (
                    <td key={i}>
                      <Marked segments={cell} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    }
  }
}

/** A document's blocks as text elements: headings, paragraphs, terms, list items, code and tables. */
export function DocumentText({ blocks }: { blocks: MarkedBlock[] }) {
  return (
    <div class="doc-text">
      {blocks.map((block, i) => (
        <Block key={i} block={block} />
      ))}
    </div>
  );
}
