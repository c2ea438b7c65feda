/** Postgres and PGlite both report a unique violation as SQLSTATE 23505 (drizzle may wrap it). */
export function isUniqueViolation(e: unknown): boolean {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; depth++) {
    if (typeof cur === "object" && "code" in cur && (cur as { code: unknown }).code === "23505") return true;
    cur = typeof cur === "object" && "cause" in cur ? (cur as { cause: unknown }).cause : undefined;
  }
  return false;
}
