/** Session names: short, and safe to show, to put in a message, and to use as a map key. */
export function validSessionName(name: unknown): name is string {
  return typeof name === "string" && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name);
}
