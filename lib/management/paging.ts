import { z } from "zod";

/** The most items one page of a list holds. */
export const MAX_PAGE = 200;

/**
 * `limit` and `offset` of a list that is short enough to read whole (clients, APIs): without a
 * limit the whole list from `offset` on, so that callers that never paged keep getting all of it.
 */
export const OptionalPageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).optional().describe(`At most this many items (1 to ${MAX_PAGE}); all when left out.`),
  offset: z.coerce.number().int().min(0).default(0).describe("Items to skip from the start of the list."),
});

/** One page of `items` (already in the list's order) and the list's length. */
export function pageOf<T>(items: readonly T[], q: z.infer<typeof OptionalPageQuery>): { items: T[]; total: number } {
  return { items: items.slice(q.offset, q.limit === undefined ? undefined : q.offset + q.limit), total: items.length };
}
