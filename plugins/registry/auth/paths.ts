/** `/a/b/` and `a/b` name the same resource. */
export function normalizePath(p: string): string {
  // Most paths and rule names are already bare: skip the regex (this runs per rule on every /validate).
  if (p.charCodeAt(0) !== 47 /* / */ && p.charCodeAt(p.length - 1) !== 47) return p;
  return p.replace(/^\/+|\/+$/g, '');
}
