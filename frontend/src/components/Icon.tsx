// A few stroke icons drawn inline: emoji fonts are not everywhere, and nothing is fetched.

const PATHS = {
  search: "M10.5 17a6.5 6.5 0 1 1 0-13 6.5 6.5 0 0 1 0 13zM15.5 15.5 21 21",
  page: "M6 3h8l4 4v14H6zM14 3v4h4M9 12h6M9 16h6",
  thought: "M4 12a8 6 0 1 1 4.5 5.4L4 19l1.2-3.6A6 6 0 0 1 4 12z",
  clock: "M12 21a9 9 0 1 1 0-18 9 9 0 0 1 0 18zM12 7v5l3 2",
  book: "M4 5a2 2 0 0 1 2-2h13v16H6a2 2 0 0 0-2 2zM4 21V5M8 7h7",
  plug: "M9 3v5M15 3v5M7 8h10v4a5 5 0 0 1-10 0zM12 17v4",
  logo: "M10 17a7 7 0 1 1 0-14 7 7 0 0 1 0 14zM15 15l6 6M7 10h6M10 7v6",
  pencil: "M4 20h4L19 9l-4-4L4 16zM13 7l4 4",
  trash: "M4 7h16M10 11v6M14 11v6M6 7l1 13h10l1-13M9 7V4h6v3",
} as const;

export type IconName = keyof typeof PATHS;

export function Icon({ name, class: cls }: { name: IconName; class?: string }) {
  return (
    <svg class={`icon ${cls ?? ""}`} viewBox="0 0 24 24" width="1em" height="1em" aria-hidden="true" focusable="false">
      <path d={PATHS[name]} fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" />
    </svg>
  );
}
