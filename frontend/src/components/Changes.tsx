import { countsText, formatLocal, groupChanges, pairPassages, withoutMarkers, wordDiff, type ClaimItem, type Segment, type SourceItem } from "../schedules";
import type { ChangeSet } from "../types";

interface Props {
  changes: ChangeSet;
  /** A cited source's title, for its chip's name. */
  titleOf: (n: number) => string | undefined;
}

/**
 * "What changed since …" at the top of a scheduled run's report: claims and sources that are new,
 * gone or changed. Each item says what happened in words and an icon as well as its colour, and
 * every sentence and passage is text (never markup). Chips use the report body's delegated handlers.
 */
export function ChangesView({ changes, titleOf }: Props) {
  const groups = groupChanges(changes);
  const when = formatLocal(changes.since);
  const claims = [...groups.claims.changed, ...groups.claims.new, ...groups.claims.dropped];
  const sources = [...groups.sources.changed, ...groups.sources.new, ...groups.sources.gone];
  return (
    <section class="changes" aria-label="What changed">
      <h3 class="changes-h">What changed since {when}</h3>
      <p class="changes-counts muted small">{countsText(changes.counts)}</p>
      {!changes.changed ? <p class="changes-none">Nothing changed: the same claims, from the same sources.</p> : null}
      {claims.length ? (
        <>
          <h4 class="changes-sub">Claims</h4>
          <ul class="change-list">
            {claims.map((c, i) => (
              <ClaimRow key={i} claim={c} titleOf={titleOf} />
            ))}
          </ul>
        </>
      ) : null}
      {sources.length ? (
        <>
          <h4 class="changes-sub">Sources</h4>
          <ul class="change-list">
            {sources.map((s, i) => (
              <SourceRow key={i} source={s} titleOf={titleOf} />
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

const TAGS = {
  changed: { icon: "~", word: "Changed" },
  new: { icon: "+", word: "New" },
  dropped: { icon: "−", word: "No longer found" },
  gone: { icon: "−", word: "No longer cited" },
} as const;

function Tag({ kind }: { kind: keyof typeof TAGS }) {
  const t = TAGS[kind];
  return (
    <span class={`change-tag change-tag-${kind}`}>
      <span aria-hidden="true">{t.icon}</span> {t.word}
    </span>
  );
}

function Chips({ numbers, titleOf }: { numbers: number[]; titleOf: Props["titleOf"] }) {
  return (
    <>
      {numbers.map((n) => {
        const title = titleOf(n);
        return (
          <button key={n} type="button" class="cite-chip" data-cite={n} aria-label={`Source ${n}${title ? `: ${title}` : ""}`}>
            {n}
          </button>
        );
      })}
    </>
  );
}

function Words({ segments }: { segments: Segment[] }) {
  return (
    <>
      {segments.map((s, i) =>
        s.kind === "removed" ? <del key={i}>{s.text}</del> : s.kind === "added" ? <ins key={i}>{s.text}</ins> : <span key={i}>{s.text}</span>,
      )}
    </>
  );
}

function ClaimRow({ claim, titleOf }: { claim: ClaimItem; titleOf: Props["titleOf"] }) {
  const now = withoutMarkers(claim.sentence);
  const numbers = claim.numbers ?? [];
  if (claim.status === "changed") {
    const diff = wordDiff(withoutMarkers(claim.previous ?? ""), now);
    return (
      <li class="change change-changed">
        <Tag kind="changed" />
        {claim.label === "contradicted" ? (
          <span class="change-tag change-tag-contradicted">
            <span aria-hidden="true">⚠</span> Contradicts the earlier claim
          </span>
        ) : claim.label === "updated" ? (
          <span class="change-note muted small">Updated with new details</span>
        ) : null}
        <p class="change-before">
          <span class="change-label">Before:</span> <Words segments={diff.before} />
        </p>
        <p class="change-after">
          <span class="change-label">Now:</span> <Words segments={diff.after} /> <Chips numbers={numbers} titleOf={titleOf} />
        </p>
      </li>
    );
  }
  if (claim.status === "new") {
    return (
      <li class="change change-new">
        <Tag kind="new" />
        <p class="change-after">
          <ins>{now}</ins> <Chips numbers={numbers} titleOf={titleOf} />
        </p>
      </li>
    );
  }
  return (
    <li class="change change-dropped">
      <Tag kind="dropped" />
      <p class="change-before">
        <del>{now}</del>
      </p>
    </li>
  );
}

function SourceRow({ source, titleOf }: { source: SourceItem; titleOf: Props["titleOf"] }) {
  const name = source.title || source.url;
  const chip = source.number !== null && source.number !== undefined ? <Chips numbers={[source.number]} titleOf={titleOf} /> : null;
  if (source.status === "gone") {
    return (
      <li class="change change-gone">
        <Tag kind="gone" />
        <p class="change-before">
          <del>{name}</del> <span class="muted small">{source.url}</span>
        </p>
      </li>
    );
  }
  return (
    <li class={`change change-${source.status}`}>
      <Tag kind={source.status} />
      <p class="change-source">
        <span class="change-source-name">{name}</span> {chip}
      </p>
      {source.status === "changed" ? <Passages removed={source.removed ?? []} added={source.added ?? []} /> : null}
    </li>
  );
}

/** A changed source's text: edited passages as before and after with the words marked, then what is only new or only gone. */
function Passages({ removed, added }: { removed: string[]; added: string[] }) {
  const p = pairPassages(removed, added);
  return (
    <ul class="change-passages">
      {p.pairs.map((pair, i) => {
        const diff = wordDiff(pair.removed, pair.added);
        return (
          <li key={`p${i}`} class="passage-edited">
            <p class="change-before">
              <span class="change-label">Said:</span> <Words segments={diff.before} />
            </p>
            <p class="change-after">
              <span class="change-label">Now says:</span> <Words segments={diff.after} />
            </p>
          </li>
        );
      })}
      {p.added.map((text, i) => (
        <li key={`a${i}`} class="passage-added">
          <span class="change-label">
            <span aria-hidden="true">+</span> Now says:
          </span>{" "}
          <ins>{text}</ins>
        </li>
      ))}
      {p.removed.map((text, i) => (
        <li key={`r${i}`} class="passage-removed">
          <span class="change-label">
            <span aria-hidden="true">−</span> No longer says:
          </span>{" "}
          <del>{text}</del>
        </li>
      ))}
    </ul>
  );
}
