/**
 * Credentials written into a URL (`user:password@host`): whether there are any, and the secrets they
 * amount to. Kept apart from option resolution so the CLI can learn them without loading it.
 */

/** Whether a URL carries credentials in its userinfo (`user:password@`). */
export function hasUrlCredentials(url: string | URL): boolean {
  try {
    const u = new URL(String(url));
    return u.username !== "" || u.password !== "";
  } catch {
    return false;
  }
}

/**
 * The secrets URL userinfo amounts to: the user name, the password and the Basic credentials made
 * of them (as sent, and bare). Empty for a URL without userinfo or one that does not parse.
 */
export function urlCredentialSecrets(url: string | URL): string[] {
  try {
    const u = new URL(String(url));
    if (u.username === "" && u.password === "") return [];
    const user = decodeURIComponent(u.username);
    const password = decodeURIComponent(u.password);
    const basic = Buffer.from(`${user}:${password}`, "utf8").toString("base64");
    return [user, password, `Basic ${basic}`, basic].filter((v) => v !== "");
  } catch {
    return [];
  }
}
