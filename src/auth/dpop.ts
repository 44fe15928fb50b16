import type { JsonWebKey } from "node:crypto";
import * as oauth from "oauth4webapi";
import { authError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";

/** The proof algorithm: ES256 (P-256), which every DPoP server is expected to accept. */
const ALG = "ES256";
const EC = { name: "ECDSA", namedCurve: "P-256" } as const;

type KeyPair = Parameters<typeof oauth.DPoP>[1];
type Key = KeyPair["privateKey"];

/** JWK members that hold the private part of a DPoP key: secrets to scrub. */
const PRIVATE_MEMBERS = ["d"] as const;

function b64u(bytes: ArrayBuffer | Uint8Array): string {
  return Buffer.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toString("base64url");
}

/** Makes a new DPoP key, as a private JWK that can be stored beside the tokens bound to it. */
export async function newDpopKey(): Promise<JsonWebKey> {
  const pair = (await crypto.subtle.generateKey(EC, true, ["sign", "verify"])) as KeyPair;
  const jwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, d: jwk.d };
}

/**
 * A DPoP key (RFC 9449) in use: the handle oauth4webapi signs token-request proofs with (it keeps
 * the authorization server's nonce), and proofs for requests to the MCP server, each with a fresh
 * `jti`, the request's method and URL (no query or fragment) and the token's hash (`ath`).
 */
export class DpopKey {
  readonly jwk: JsonWebKey;
  readonly handle: oauth.DPoPHandle;
  readonly #privateKey: Key;
  readonly #header: string;

  private constructor(jwk: JsonWebKey, pair: KeyPair, publicJwk: JsonWebKey) {
    this.jwk = jwk;
    this.#privateKey = pair.privateKey;
    this.handle = oauth.DPoP({}, pair);
    this.#header = b64u(Buffer.from(JSON.stringify({ typ: "dpop+jwt", alg: ALG, jwk: publicJwk })));
  }

  /** Imports a stored private JWK; its private part is taught to the redactor first. */
  static async from(jwk: JsonWebKey, redactor: Redactor): Promise<DpopKey> {
    redactor.learn(PRIVATE_MEMBERS.map((m) => jwk[m]).filter((v): v is string => typeof v === "string"));
    const publicJwk: JsonWebKey = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
    try {
      const privateKey = await crypto.subtle.importKey("jwk", jwk as oauth.JWK, EC, false, ["sign"]);
      const publicKey = await crypto.subtle.importKey("jwk", publicJwk as oauth.JWK, EC, true, ["verify"]);
      return new DpopKey(jwk, { privateKey, publicKey }, publicJwk);
    } catch (cause) {
      throw authError("token_error", "the stored DPoP key could not be imported; sign in again", {
        redactor,
        cause,
      });
    }
  }

  /** A proof for one request to the MCP server. */
  async proof(method: string, url: URL, accessToken: string, nonce: string | undefined): Promise<string> {
    const payload: Record<string, unknown> = {
      jti: b64u(crypto.getRandomValues(new Uint8Array(16))),
      htm: method.toUpperCase(),
      htu: `${url.origin}${url.pathname}`,
      iat: Math.floor(Date.now() / 1000),
      ath: b64u(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken))),
    };
    if (nonce !== undefined) payload.nonce = nonce;
    const input = `${this.#header}.${b64u(Buffer.from(JSON.stringify(payload)))}`;
    const signature = await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      this.#privateKey,
      new TextEncoder().encode(input),
    );
    return `${input}.${b64u(signature)}`;
  }
}
