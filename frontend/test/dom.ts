import { render } from "preact";
import { afterEach, beforeEach } from "vitest";

/** An element in the document for each test of the calling file to render into, emptied and detached after each. */
export function testRoot(): HTMLDivElement {
  const el = document.createElement("div");
  beforeEach(() => {
    document.body.append(el);
  });
  afterEach(() => {
    render(null, el);
    el.remove();
  });
  return el;
}
