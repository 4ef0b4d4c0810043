// The streaming protocol as TypeScript types, taken from protocol.gen.ts (generated from
// `sleuth schema` by scripts/gen-types; docs/protocol.md describes them). Only the names the
// UI uses are added here.
import type * as P from "./protocol.gen";

export type Document = P.Document;
/** A document with its citation number in the final report. */
export type NumberedSource = P.NumberedSource;
export type Placement = P.Placement;
export type Packet = P.Packet;
export type PacketObj = P.Packet["obj"];
export type PacketType = PacketObj["type"];
export type StopReason = P.Stop["reason"];
export type DegradedLevel = P.Degraded["level"];

/** Narrow a packet object by its type tag. */
export type ObjOf<T extends PacketType> = Extract<PacketObj, { type: T }>;

/** A citation whose sentence its source does not appear to support. */
export type UnsupportedClaim = P.UnsupportedClaim;

/** One key finding of a report, with the citations that support it. */
export type KeyFinding = P.KeyFinding;
/** How the report was made, counted by the engine. */
export type MethodNote = P.MethodNote;

/** What a scheduled run found different from its schedule's previous run (the report's `changes`). */
export type ChangeSet = P.ChangeSet;
export type ChangeCounts = P.ChangeCounts;
