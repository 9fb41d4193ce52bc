import type { EpConfig, Session } from "@switchyard/core";
import fc from "fast-check";
import type { PropertyContext } from "../property.js";
import { errorName } from "./problems.js";

/**
 * Creates a session for `config`, runs `body`, and always destroys it. A config the backend
 * refuses with `UnsupportedError` is filtered (`fc.pre`), not failed: the generators stay inside
 * the declared capabilities, so this only covers limits a backend cannot declare.
 */
export async function withSession<T>(
  ctx: PropertyContext,
  config: Readonly<EpConfig>,
  body: (session: Session) => Promise<T>,
): Promise<T> {
  let session: Session;
  try {
    session = await ctx.backend.createSession(config, ctx.sessionOptions);
  } catch (e) {
    if (errorName(e) === "UnsupportedError") fc.pre(false);
    throw e;
  }
  try {
    return await body(session);
  } finally {
    await Promise.resolve()
      .then(() => session.destroy())
      .catch(() => {});
  }
}
