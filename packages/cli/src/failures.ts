import type { PropertyResult } from "@switchyard/conformance";
import { formatFailure } from "@switchyard/conformance";

/**
 * Problem lines that differ only in their rank ("rank 3 token 0 ...", "rank 4 token 0 ...", as
 * every rank of a DP group reports the same token) as one line naming the ranks, where the first
 * of them stood.
 */
export function collapseRanks(error: string): string {
  const lines = error.split("\n");
  const byRest = new Map<string, { at: number; indent: string; ranks: string[] }>();
  const out: (string | null)[] = [];
  for (const line of lines) {
    const m = line.match(/^(\s*)rank (\d+) (.*)$/);
    const seen = m ? byRest.get(m[3]) : undefined;
    if (m && seen) {
      seen.ranks.push(m[2]);
      continue;
    }
    if (m) byRest.set(m[3], { at: out.length, indent: m[1], ranks: [m[2]] });
    out.push(line);
  }
  for (const [rest, { at, indent, ranks }] of byRest) {
    if (ranks.length > 1) out[at] = `${indent}ranks ${ranks.join(", ")} ${rest}`;
  }
  return out.join("\n");
}

/**
 * The failures for a reader: the first one in the suite's order in full, marked as the place to
 * start (one bug usually fails several properties); every later failure with the same error
 * collapsed into one line under the first that showed it; other failures in full after.
 * `backend` replaces `<backend>` in the replay commands.
 */
export function formatFailures(failures: readonly PropertyResult[], backend: string): string {
  if (failures.length === 0) return "";
  const groups: { head: PropertyResult; same: PropertyResult[] }[] = [];
  for (const f of failures) {
    const group = groups.find((g) => g.head.error === f.error);
    if (group) group.same.push(f);
    else groups.push({ head: f, same: [] });
  }
  const blocks = groups.map((g, i) => {
    const title =
      i === 0
        ? `FIRST FAILURE (start here: later failures often share its cause)`
        : `failure ${i + 1} of ${groups.length} distinct`;
    const head = { ...g.head, error: collapseRanks(g.head.error ?? "failed") };
    const lines = [title, formatFailure(head).replace("<backend>", backend)];
    if (g.same.length > 0) {
      lines.push(
        `  the same error also failed ${g.same.length} more: ${g.same.map((s) => s.name).join(", ")} ` +
          "(their seeds and paths are in the table)",
      );
    }
    return lines.join("\n");
  });
  const distinct = groups.length === 1 ? "1 distinct error" : `${groups.length} distinct errors`;
  return `${failures.length} failed, ${distinct}\n\n${blocks.join("\n\n")}`;
}
